/**
 * A run's report.html in a real headless Chromium (Debian's `chromium`, driven by playwright-core): it
 * renders with no console error, asks for nothing over the network, shows its sections and charts (the
 * pauses of a resumed run marked), prints, and a screenshot is saved to test/artifacts/run-report.png for
 * a person to look at. Without /usr/bin/chromium the test is skipped with a message, except under CI=true.
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { writeRunReport } from '../../src/report/write.js';
import { ARTIFACTS, chartWidths, itChromium, launchChromium, openHtml, sidewaysOverflow } from '../helpers/chromium.js';
import { INJECTED, resumedRunFolder } from './fixtures.js';

describe('run report.html in headless Chromium', () => {
  itChromium('renders with no console error and no request, shows every section, prints; saves a screenshot', async () => {
    const dir = await resumedRunFolder();
    const { path } = await writeRunReport(dir);
    const browser = await launchChromium();
    try {
      const { page, problems, requests, url } = await openHtml(browser, path, { width: 1200, height: 900 });
      expect(problems).toEqual([]);
      expect(requests).toEqual([url]);
      expect(await page.title()).toBe('Run report: rescore');
      expect(await page.locator('h2').allInnerTexts()).toEqual(['Summary', 'Throughput', 'Calls per minute against the limit', 'Latency over the run', 'Retries and 429s over time', 'Stages', 'Decisions per workflow stage', 'Errors by code']);
      // Charts: rows/s, ETA, calls x2, latency x2, retries, the funnel, decisions: each laid out.
      const widths = await chartWidths(page);
      expect(widths).toHaveLength(9);
      for (const w of widths) expect(w).toBeGreaterThan(500);
      // The pauses between the four sessions are marked.
      expect(await page.getByText('paused 1 d 0 h').count()).toBeGreaterThan(0);
      // Injected text is text, not an element.
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.getByText(INJECTED, { exact: false }).count()).toBeGreaterThan(0);
      expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
      mkdirSync(ARTIFACTS, { recursive: true });
      const shot = join(ARTIFACTS, 'run-report.png');
      await page.screenshot({ path: shot, fullPage: true });
      expect(statSync(shot).size).toBeGreaterThan(20_000);
      await page.emulateMedia({ media: 'print' });
      expect((await page.pdf({ format: 'A4' })).length).toBeGreaterThan(10_000);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
