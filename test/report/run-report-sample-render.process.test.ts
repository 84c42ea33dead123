/**
 * A sampled run's report.html in headless Chromium: "A sample of n of N rows" is the first thing under the
 * title, above the summary, and the strata (with the missing-date stratum named) are laid out in "Sample
 * design". The run is the guide's: the shipped champion_challenger sample, 20% of every application month,
 * through the built CLI and its built-in sandbox. The top of the page goes to test/artifacts/ (the guide's
 * picture is written by `npm run docs:pictures`).
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { ROOT, runArgs } from '../helpers/cli.js';
// The run in this process (the report is what is tested): it costs a CPU second less than a spawned CLI.
import { runInProcess } from '../helpers/cli-in-process.js';
import { ARTIFACTS, itChromium, launchChromium, openHtml, sidewaysOverflow } from '../helpers/chromium.js';
import { tempDir } from '../helpers/temp.js';

describe("a sampled run's report.html in headless Chromium", () => {
  itChromium(
    'says it is a sample at the top and lays out the strata; saves a picture',
    async () => {
      const out = join(tempDir('bre-sample-report-'), 'out');
      const run = await runInProcess(
        runArgs(
          'champion_challenger',
          join(ROOT, 'samples', 'champion_challenger.csv'),
          out,
          '--rate',
          'off',
          '--sample-share',
          '0.2',
          '--stratify-by',
          'application_date:month',
        ),
      );
      expect(run.code, run.stderr).toBe(0);
      const browser = await launchChromium();
      try {
        const { page, problems, requests, url } = await openHtml(browser, join(out, 'report.html'), {
          width: 1200,
          height: 900,
        });
        expect(problems).toEqual([]);
        expect(requests).toEqual([url]);
        const notice = page.locator('#sample-notice');
        expect(await notice.innerText()).toMatch(
          /^A sample of 300 of 1,500 rows, stratified by application_date \(month\), 16 strata/,
        );
        // Above everything else: right under the title and the folder line, in the first screenful.
        const box = (await notice.boundingBox())!;
        expect(box.y + box.height).toBeLessThan(400);
        expect(box.y).toBeLessThan((await page.locator('h2').first().boundingBox())!.y);
        expect(await page.locator('h2').allInnerTexts()).toContain('Sample design');
        const strata = page.locator('h2:text("Sample design") + .tw tbody tr');
        expect(await strata.count()).toBe(16);
        expect(await strata.last().innerText()).toMatch(
          /^\(missing\) — no readable value: a stratum of its own\s+3\s+2\s+1\.500$/,
        );
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        mkdirSync(ARTIFACTS, { recursive: true });
        const shot = join(ARTIFACTS, 'run-report-sample.png');
        await page.screenshot({ path: shot, clip: { x: 0, y: 0, width: 1200, height: 900 } });
        expect(statSync(shot).size).toBeGreaterThan(20_000);
      } finally {
        await browser.close();
      }
    },
    120_000,
  );
});
