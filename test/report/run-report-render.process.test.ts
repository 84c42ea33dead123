/**
 * A run's report.html in a real headless Chromium (Debian's `chromium`, driven by playwright-core): it
 * renders with no console error, asks for nothing over the network, shows its sections and charts, and
 * prints. Three runs: one resumed three times (its pauses marked), the `npm start` run itself (the rescore
 * sample through the CLI against the built-in sandbox: a few seconds, one sample, so a sentence stands where
 * the charts would be a dot), and a night of several hours across midnight (the time axis at a nice step,
 * the date where it changes, no two labels alike). A screenshot of each goes to test/artifacts/ for a person
 * to look at (the guide's own pictures are written by `npm run docs:pictures`, scripts/docs/pictures.ts). Without
 * /usr/bin/chromium the tests are skipped with a message, except under CI=true.
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { writeRunReport } from '../../src/report/write.js';
import {
  ARTIFACTS,
  chartWidths,
  itChromium,
  browserPerFile,
  closePages,
  openHtml,
  sidewaysOverflow,
} from '../helpers/chromium.js';
import { ROOT, runArgs } from '../helpers/cli.js';
// The run in this process (the report is what is tested): it costs a CPU second less than a spawned CLI.
import { runInProcess } from '../helpers/cli-in-process.js';
import { tempDir } from '../helpers/temp.js';
import { INJECTED, nightRunFolder, resumedRunFolder } from './fixtures.js';

/** The full page to test/artifacts/NAME. */
async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const shot = join(ARTIFACTS, name);
  await page.screenshot({ path: shot, fullPage: true });
  expect(statSync(shot).size).toBeGreaterThan(20_000);
}

/** The time labels under each time chart (its date lines apart), as drawn. */
function axisLabels(page: Page): Promise<string[][]> {
  return page
    .locator('figure.chartbox:has(text.xt)')
    .evaluateAll((figs) => figs.map((f) => [...f.querySelectorAll('text.xt')].map((t) => t.textContent ?? '')));
}

/** Labels with the date drawn under them: "00:00 21 Nov". */
function datedLabels(page: Page): Promise<string[]> {
  return page.locator('figure.chartbox:has(text.xt) >> nth=0').evaluate((f) =>
    [...f.querySelectorAll('text.xt')].map((t) => {
      const date = [...f.querySelectorAll('text.dt')].find((d) => d.getAttribute('x') === t.getAttribute('x'));
      return date ? `${t.textContent} ${date.textContent}` : (t.textContent ?? '');
    }),
  );
}

/** One Chromium for the file's tests (each opens its pages and closes them). */
const fileBrowser = browserPerFile();

describe('run report.html in headless Chromium', () => {
  itChromium(
    'a run resumed three times: every section, its pauses marked, distinct time labels; prints',
    async () => {
      const dir = await resumedRunFolder(tempDir('bre-report-'));
      const { path } = await writeRunReport(dir);
      const browser = await fileBrowser();
      try {
        const { page, problems, requests, url } = await openHtml(browser, path, { width: 1200, height: 900 });
        expect(problems).toEqual([]);
        expect(requests).toEqual([url]);
        expect(await page.title()).toBe('Run report: rescore');
        expect(await page.locator('h2').allInnerTexts()).toEqual([
          'Summary',
          'Throughput',
          'Calls per minute against the limit',
          'Latency over the run',
          'Retries and 429s over time',
          'Stages',
          'Decisions per workflow stage',
          'Errors by code',
        ]);
        // Charts: rows/s, ETA, calls x2, latency x2, retries, the funnel, decisions: each laid out.
        const widths = await chartWidths(page);
        expect(widths).toHaveLength(9);
        for (const w of widths) expect(w).toBeGreaterThan(500);
        // The pauses between the four sessions are marked.
        expect(await page.getByText('paused 1 d 0 h').count()).toBeGreaterThan(0);
        const labels = await axisLabels(page);
        expect(labels).toHaveLength(7);
        for (const l of labels) expect(new Set(l).size).toBe(l.length);
        // Each session's first label carries its date where it changed: 20 Nov, then 21 Nov after 3 h, 22 Nov after a day.
        expect((await datedLabels(page)).filter((l) => l.includes(' '))).toEqual([
          '22:00 20 Nov',
          '01:35 21 Nov',
          '01:40 22 Nov',
        ]);
        // Injected text is text, not an element.
        expect(await page.locator('img').count()).toBe(0);
        expect(await page.getByText(INJECTED, { exact: false }).count()).toBeGreaterThan(0);
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        await screenshot(page, 'run-report.png');
        await page.emulateMedia({ media: 'print' });
        expect((await page.pdf({ format: 'A4' })).length).toBeGreaterThan(10_000);
      } finally {
        await closePages(browser);
      }
    },
    120_000,
  );

  itChromium(
    'the npm start run (rescore sample, built-in sandbox): a sentence instead of a single dot per chart',
    async () => {
      const out = join(tempDir('bre-report-start-'), 'out');
      // What `npm start` runs, with the output folder named.
      const run = await runInProcess(runArgs('rescore', join(ROOT, 'samples', 'rescore.csv'), out));
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`report: ${join(out, 'report.html')}`);
      const browser = await fileBrowser();
      try {
        const { page, problems, requests, url } = await openHtml(browser, join(out, 'report.html'), {
          width: 1200,
          height: 900,
        });
        expect(problems).toEqual([]);
        expect(requests).toEqual([url]);
        expect(await page.locator('h2').allInnerTexts()).toEqual([
          'Summary',
          'Over time',
          'Stages',
          'Decisions per workflow stage',
          'Strategy versions',
          'Errors by code',
        ]);
        // How many samples a few seconds' run holds depends on how fast this machine ran it: one, or a few.
        const sentence = page.locator('p.short');
        expect(await sentence.innerText()).toMatch(
          /^The run lasted \d+ s\. Its time series holds (?:1 sample|\d+ samples) \(one is taken every few seconds\): too few to draw how the rate, the latency and the retries went over time\. The tables above give them for the whole run\.$/,
        );
        // No chart over time, so no lone dot: the two charts left are the stage funnel and the decisions.
        expect(await page.locator('svg.chart circle').count()).toBe(0);
        expect(await page.locator('text.xt').count()).toBe(0);
        expect(await chartWidths(page)).toHaveLength(2);
        expect(await page.getByText('24', { exact: true }).count()).toBeGreaterThan(0);
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        await screenshot(page, 'run-report-npm-start.png');
      } finally {
        await closePages(browser);
      }
    },
    120_000,
  );

  itChromium(
    'a night of several hours: hourly labels across midnight with the date where it changes, none alike',
    async () => {
      const dir = await nightRunFolder(tempDir('bre-report-night-'));
      const { path } = await writeRunReport(dir);
      const browser = await fileBrowser();
      try {
        const { page, problems, requests, url } = await openHtml(browser, path, { width: 1200, height: 900 });
        expect(problems).toEqual([]);
        expect(requests).toEqual([url]);
        const widths = await chartWidths(page);
        expect(widths).toHaveLength(9);
        for (const w of widths) expect(w).toBeGreaterThan(500);
        expect(await page.getByText('paused 35 min 0 s').count()).toBeGreaterThan(0);
        expect(await datedLabels(page)).toEqual([
          '22:00 20 Nov',
          '23:00',
          '00:00 21 Nov',
          '01:00',
          '03:00',
          '04:00',
          '05:00',
        ]);
        for (const l of await axisLabels(page))
          expect(l).toEqual(['22:00', '23:00', '00:00', '01:00', '03:00', '04:00', '05:00']);
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        await screenshot(page, 'run-report-night.png');
      } finally {
        await closePages(browser);
      }
    },
    120_000,
  );
});
