/// <reference lib="dom" />
// (the DOM types are for the page.evaluate() callbacks, which run in the browser)
/**
 * report.html in a real headless Chromium (Debian's `chromium`, driven by playwright-core): it renders with no
 * console error, asks for nothing over the network, shows the key headings and charts, and a screenshot is
 * saved to test/artifacts/report.png for a person to look at. Without /usr/bin/chromium the test is skipped
 * with a message, except under CI=true, where that is a failure.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { runCompare } from '../../src/backtest/compare.js';
import { tempDir } from '../helpers/temp.js';
import { handCase } from './fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];
const ARTIFACTS = resolve(import.meta.dirname, '..', 'artifacts');
const present = existsSync(CHROMIUM);
const ci = process.env.CI === 'true';

if (!present && !ci) {
  process.stderr.write(`report-render.test: skipped, ${CHROMIUM} is missing (install Debian's chromium package: apt-get install -y chromium)\n`);
}

describe('report.html in headless Chromium', () => {
  it.runIf(ci && !present)('fails under CI when Chromium is missing', () => {
    expect.fail(`${CHROMIUM} is missing: CI must install Debian's chromium package (apt-get install -y chromium) to render report.html`);
  });

  it.skipIf(!present)('renders with no console error, no request and the key headings; saves a screenshot', async () => {
    const root = tempDir();
    const { a, b } = handCase(root);
    const { files } = await runCompare({ outA: a, outB: b, out: join(root, 'cmp'), outcome: 'bad', by: 'state' });

    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const problems: string[] = [];
      const requests: string[] = [];
      page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      page.on('request', (r) => requests.push(r.url()));
      const url = pathToFileURL(files.html).href;
      await page.goto(url, { waitUntil: 'load' });

      expect(problems).toEqual([]);
      expect(requests).toEqual([url]);
      expect(await page.title()).toBe('Back-test: bureau_mobile (A) vs bureau_mobile_v2 (B)');
      const h2 = await page.locator('h2').allInnerTexts();
      expect(h2).toEqual(['Summary', 'Stage bre', 'Keys not compared']);
      const h3 = await page.locator('h3').allInnerTexts();
      for (const h of ['Approval rates', 'Decisions', 'Decision crosstab (swap matrix)', 'Loan amounts', 'Rules failed', 'Feature stability (PSI)', 'Segments by state']) {
        expect(h3).toContain(h);
      }
      // The injected key is text, not an element.
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.getByText('<img src=x onerror=alert(1)>').count()).toBe(1);
      // Three charts, each actually laid out.
      const boxes = await page.locator('svg.chart').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().width));
      expect(boxes).toHaveLength(3);
      for (const w of boxes) expect(w).toBeGreaterThan(300);
      // Nothing sticks out sideways on a laptop screen.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);

      mkdirSync(ARTIFACTS, { recursive: true });
      const shot = join(ARTIFACTS, 'report.png');
      await page.screenshot({ path: shot, fullPage: true });
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      // Printable: the print layout renders to PDF without error.
      await page.emulateMedia({ media: 'print' });
      const pdf = await page.pdf({ format: 'A4' });
      expect(pdf.length).toBeGreaterThan(10_000);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
