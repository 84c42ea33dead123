/**
 * report.html in a real headless Chromium (Debian's `chromium`, driven by playwright-core): it renders with no
 * console error, asks for nothing over the network, shows the key headings and charts, and a screenshot is
 * saved to test/artifacts/report.png for a person to look at. Without /usr/bin/chromium the test is skipped
 * with a message, except under CI=true, where that is a failure.
 *
 * The credit-risk sections are rendered from the shipped champion_challenger sample, run through the built CLI
 * against the built-in sandbox as the guide shows; their pictures go to test/artifacts/ for a person to look at
 * (the guide's own are written by `npm run docs:pictures`, scripts/docs/pictures.ts).
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCompare } from '../src/compare.js';
import {
  ARTIFACTS,
  chartWidths,
  itChromium,
  browserPerFile,
  closePages,
  openHtml,
  sidewaysOverflow,
} from '../../../test/helpers/chromium.js';
import { type CliResult, runArgs } from '../../../test/helpers/cli.js';
// The run in this process (the report is what is tested): it costs a CPU second less than a spawned CLI.
import { runInProcess } from '../../../test/helpers/cli-in-process.js';
import { tempDir } from '../../../test/helpers/temp.js';
import { handCase } from './fixtures.js';
import { INPUT, rowsOf, selection, writeSampledFolder } from './sampled-folders.js';

/** One Chromium for the file's tests (each opens its pages and closes them). */
const fileBrowser = browserPerFile();

let whole: Promise<{ run: CliResult; out: string }> | undefined;
/**
 * The shipped champion_challenger sample run whole, as the guide shows: made once, by the first test that asks
 * (it is most of the file's cost), and only read after (compare writes beside it, a sample is drawn into a folder
 * of its own).
 */
function wholeRun(): Promise<{ run: CliResult; out: string }> {
  whole ??= (async () => {
    const out = join(tempDir(), 'run');
    return { run: await runInProcess(runArgs('champion_challenger', INPUT, out, '--rate', 'off')), out };
  })();
  return whole;
}

describe('report.html in headless Chromium', () => {
  itChromium(
    'renders with no console error, no request and the key headings; saves a screenshot',
    async () => {
      const root = tempDir();
      const { a, b } = handCase(root);
      const { files } = await runCompare({ outA: a, outB: b, out: join(root, 'cmp'), outcome: 'bad', by: 'state' });

      const browser = await fileBrowser();
      try {
        const { page, problems, requests, url } = await openHtml(browser, files.html);

        expect(problems).toEqual([]);
        expect(requests).toEqual([url]);
        expect(await page.title()).toBe('Back-test: bureau_mobile (A) vs bureau_mobile_v2 (B)');
        const h2 = await page.locator('h2').allInnerTexts();
        expect(h2).toEqual(['Summary', 'Stage bre', 'Keys not compared']);
        const h3 = await page.locator('h3').allInnerTexts();
        for (const h of [
          'Approval rates',
          'Decisions',
          'Decision crosstab (swap matrix)',
          'Loan amounts',
          'Rules failed',
          'Feature stability (PSI)',
          'Segments by state',
        ]) {
          expect(h3).toContain(h);
        }
        // The injected key is text, not an element.
        expect(await page.locator('img').count()).toBe(0);
        expect(await page.getByText('<img src=x onerror=alert(1)>').count()).toBe(1);
        // Three charts, each actually laid out.
        const boxes = await chartWidths(page);
        expect(boxes).toHaveLength(3);
        for (const w of boxes) expect(w).toBeGreaterThan(300);
        // Nothing sticks out sideways on a laptop screen.
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);

        mkdirSync(ARTIFACTS, { recursive: true });
        const shot = join(ARTIFACTS, 'report.png');
        await page.screenshot({ path: shot, fullPage: true });
        expect(statSync(shot).size).toBeGreaterThan(10_000);
        // Printable: the print layout renders to PDF without error.
        await page.emulateMedia({ media: 'print' });
        const pdf = await page.pdf({ format: 'A4' });
        expect(pdf.length).toBeGreaterThan(10_000);
      } finally {
        await closePages(browser);
      }
    },
    120_000,
  );

  itChromium(
    'renders the credit-risk sections of the champion_challenger sample; saves their pictures',
    async () => {
      const { run, out } = await wholeRun();
      expect(run.code, run.stderr).toBe(0);
      const { files, report } = await runCompare({
        outA: out,
        outB: out,
        outcome: 'defaulted',
        score: ['bureau_intel.bureau_score', 'mobile_intel.vendor_payday_score'],
        period: 'application_date',
      });
      const c = report.comparisons[0];
      // The sample teaches: the bureau score separates, the partner channel moves the population.
      expect(c.scores?.[0].a.power?.gini).toBeGreaterThan(0.3);
      expect(c.periods?.periods.length).toBeGreaterThanOrEqual(12);
      expect(c.periods?.periods.some((p) => p.small)).toBe(true);
      expect(report.stability_top_movers?.[0].name).toBe('channel');

      const browser = await fileBrowser();
      try {
        const { page, problems, requests, url } = await openHtml(browser, files.html);
        expect(problems).toEqual([]);
        expect(requests).toEqual([url]);
        const h2 = await page.locator('h2').allInnerTexts();
        expect(h2).toEqual(['Summary', 'Stage champion (A) vs challenger (B)', 'Stability over time']);
        const h3 = await page.locator('h3').allInnerTexts();
        for (const h of [
          'Score power: bureau_intel.bureau_score',
          'Score power: mobile_intel.vendor_payday_score',
          'Vintages by application_date (month)',
        ])
          expect(h3).toContain(h);
        expect(await page.locator('h4').allInnerTexts()).toEqual(
          expect.arrayContaining(['Cut-off trade-off', 'Deciles and information value']),
        );
        expect(await page.getByText('Swap-set bad rates are only as good as their outcome coverage').count()).toBe(1);
        // Decisions, crosstab, amount histogram, a trade-off chart per score, the vintages: every chart laid out.
        const boxes = await chartWidths(page);
        expect(boxes).toHaveLength(6);
        for (const w of boxes) expect(w).toBeGreaterThan(300);
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);

        // Three pictures: score power with its trade-off chart; the vintages; stability over time.
        const clip = async (from: string, to: string) => {
          const a = await page.locator(from).first().boundingBox();
          const b = await page.locator(to).first().boundingBox();
          if (!a || !b) throw new Error(`Expected ${from} and ${to} on the page`);
          return { x: 0, y: a.y - 12, width: 1280, height: b.y + b.height - a.y + 24 };
        };
        const bureau = 'section:has(h3:has-text("Score power: bureau_intel.bureau_score"))';
        const shots = [
          { name: 'backtest-score.png', clip: await clip(`${bureau} h3`, `${bureau} svg.chart`) },
          {
            name: 'backtest-vintages.png',
            clip: await clip(
              'section:has(h3:has-text("Vintages by")) h3',
              'section:has(h3:has-text("Vintages by")) table',
            ),
          },
          {
            name: 'backtest-stability.png',
            clip: await clip(
              'section:has(h2:has-text("Stability over time")) h2',
              'section:has(h2:has-text("Stability over time")) p.note >> nth=-1',
            ),
          },
        ];
        mkdirSync(ARTIFACTS, { recursive: true });
        for (const s of shots) {
          const path = join(ARTIFACTS, s.name);
          await page.screenshot({ path, clip: s.clip, fullPage: true });
          expect(statSync(path).size).toBeGreaterThan(20_000);
        }
        await page.emulateMedia({ media: 'print' });
        expect((await page.pdf({ format: 'A4' })).length).toBeGreaterThan(10_000);
      } finally {
        await closePages(browser);
      }
    },
    180_000,
  );

  itChromium(
    'on a sample: the notice at the top and on every estimate, sample-only sections marked; saves its picture',
    async () => {
      const root = tempDir();
      const whole = await wholeRun();
      expect(whole.run.code, whole.run.stderr).toBe(0);
      const full = whole.out;
      const sel = await selection();
      // Two sampled rows of August 2024 fail: the report must say so.
      const fail = new Set(rowsOf(sel, '2024-08').slice(0, 2));
      const s = writeSampledFolder(full, join(root, 's20'), sel, { fail });
      const { files, report } = await runCompare({
        outA: s,
        outB: s,
        outcome: 'defaulted',
        score: ['bureau_intel.bureau_score'],
        period: 'application_date',
      });
      expect(report.sample?.notice).toBe('estimated from a sample of 300 of 1,500');

      const browser = await fileBrowser();
      try {
        const { page, problems, requests, url } = await openHtml(browser, files.html);
        expect(problems).toEqual([]);
        expect(requests).toEqual([url]);
        // At the top: the first thing after the title.
        const first = page.locator('h1 + p');
        expect(await first.getAttribute('class')).toBe('sample-notice');
        expect(await first.innerText()).toMatch(/^Estimated from a sample of 300 of 1,500 rows of the input/);
        // On each figure of estimates: five KPI boxes, the interval chart's title, and a caption under the chart and each table.
        const section = page.locator('section:has(h3:has-text("Population estimates"))');
        expect(await section.locator('.kpi').count()).toBe(5);
        for (const box of await section.locator('.kpi').allInnerTexts())
          expect(box).toContain('estimated from a sample of 300 of 1,500');
        const captions = await section.locator('p.est-note').allInnerTexts();
        expect(captions.length).toBe(1 + 5);
        for (const c of captions) expect(c).toMatch(/^Estimated from a sample of 300 of 1,500/);
        expect(await section.locator('svg.chart title').first().textContent()).toContain(
          'estimated from a sample of 300 of 1,500',
        );
        expect(await section.locator('h4').allInnerTexts()).toEqual([
          'Approvals and swaps',
          'Bad rates (outcome defaulted)',
          'Loan amounts',
          'Score power',
          'Feature stability (PSI), A against B',
        ]);
        // Every section counted over the sampled keys unweighted says so in its heading.
        const sampleOnly = await page.locator('.sample-only h3').allInnerTexts();
        expect(sampleOnly.length).toBeGreaterThanOrEqual(8);
        for (const h of sampleOnly) expect(h).toMatch(/^sample only/);
        expect(await page.getByText('2 sampled rows could not be compared').count()).toBe(1);
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        for (const w of await chartWidths(page)) expect(w).toBeGreaterThan(300);

        // The picture: from the notice to the end of the first table of estimates.
        const top = await page.locator('.sample-notice').boundingBox();
        const end = await section.locator('.tw').first().boundingBox();
        if (!top || !end) throw new Error('Expected the notice and the estimates on the page');
        const name = 'backtest-sample.png';
        const path = join(ARTIFACTS, name);
        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({
          path,
          fullPage: true,
          clip: { x: 0, y: top.y - 60, width: 1280, height: end.y + end.height - top.y + 110 },
        });
        expect(statSync(path).size).toBeGreaterThan(20_000);
        await page.emulateMedia({ media: 'print' });
        expect((await page.pdf({ format: 'A4' })).length).toBeGreaterThan(10_000);
      } finally {
        await closePages(browser);
      }
    },
    180_000,
  );
});
