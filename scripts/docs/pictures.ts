/**
 * `npm run docs:pictures` (after `npm run build`): re-runs what the guide's pictures and the back-testing
 * figures show, and rewrites them. The commands run in a scratch folder with relative paths (`samples/...`,
 * `output/...`), as a user types them, so no picture shows where the repository or the scratch folder is; a
 * page whose text names either is refused before it is shot. Chromium (/usr/bin/chromium) takes the pictures.
 *
 * - docs/backtest-{score,vintages,stability}.png, docs/backtest-sample.png and the figure blocks of
 *   docs/backtesting.md: the shipped champion_challenger sample, whole and as a 20% sample (scripts/docs/figures.ts);
 * - docs/run-report-npm-start.png: the run `npm start` makes; docs/run-report-sample.png: the sampled run's report;
 * - docs/run-report.png and docs/run-report-night.png: a run resumed three times and a night of seven hours,
 *   whose folders are built with an injected clock (test/report/fixtures.ts): no one waits a night for a picture.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { writeRunReport } from '../../src/report/write.js';
import { nightRunFolder, resumedRunFolder } from '../../test/report/fixtures.js';
import { type CompareJson, FIGURE_COMMANDS, figureBlocks, withBlocks } from './figures.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const DOCS = join(ROOT, 'docs');
const CLI = join(ROOT, 'bin', 'bre-batch.js');

if (!existsSync(join(ROOT, 'dist'))) {
  console.error('docs: no dist/ to run: `npm run build` first');
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), 'bre-docs-pictures-'));
// The shipped samples (with the reports and bank data they name), not the benchmark's inputs left beside them.
cpSync(join(ROOT, 'samples'), join(work, 'samples'), {
  recursive: true,
  filter: (src) => !src.slice(join(ROOT, 'samples').length).includes('/.'),
});

/** The CLI as a user runs it, in the scratch folder, against the built-in sandbox. */
function cli(args: readonly string[]): void {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/_BASE_URL$|^BRE_/.test(k)) delete env[k];
  const r = spawnSync(process.execPath, [CLI, ...args, ...(args[0] === 'run' ? ['--no-progress'] : [])], {
    cwd: work,
    env,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`bre-batch ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
}

const compareJson = (dir: string): CompareJson =>
  JSON.parse(readFileSync(join(work, dir, 'compare.json'), 'utf8')) as CompareJson;

console.log(`docs: running the commands in ${work}`);
cli(['run', 'rescore', '--input', 'samples/rescore.csv', '--out', 'output/rescore']);
cli(FIGURE_COMMANDS.full);
cli(FIGURE_COMMANDS.fullCompare);
cli(FIGURE_COMMANDS.sample);
cli(FIGURE_COMMANDS.sampleCompare);

const page = join(DOCS, 'backtesting.md');
const blocks = figureBlocks(compareJson('output/bt-compare'), compareJson('output/cc-20-compare'));
writeFileSync(page, withBlocks(readFileSync(page, 'utf8'), blocks));
console.log('docs: wrote the figures of docs/backtesting.md');

// The two folders built with an injected clock, rendered from the scratch folder by a relative name.
process.chdir(work);
for (const name of ['resumed', 'night']) mkdirSync(join(work, 'output', name), { recursive: true });
await resumedRunFolder(join(work, 'output', 'resumed'), { input: 'samples/accounts.csv', odd: 'Refer' });
await nightRunFolder(join(work, 'output', 'night'));
await writeRunReport('output/resumed');
await writeRunReport('output/night');

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
});

/**
 * A page of the scratch folder, refused if the part of it that is shot (`shown`: the whole page, or the
 * sections the pictures clip) names a developer's folder.
 */
async function open(path: string, width: number, shown: readonly string[] = ['body']): Promise<Page> {
  const p = await browser.newPage({ viewport: { width, height: 900 } });
  await p.goto(pathToFileURL(join(work, path)).href, { waitUntil: 'load' });
  for (const part of shown) {
    const text = (await p.locator(part).first().textContent()) ?? '';
    for (const place of [work, ROOT, tmpdir()])
      if (text.includes(place)) throw new Error(`${path} shows ${place}: a picture must not show where it was made`);
  }
  return p;
}

/** From the top of one element to the bottom of another, the page's width. */
async function clip(p: Page, from: string, to: string, width: number, above = 12, below = 24) {
  const a = await p.locator(from).first().boundingBox();
  const b = await p.locator(to).first().boundingBox();
  if (!a || !b) throw new Error(`Expected ${from} and ${to} on the page`);
  return { x: 0, y: a.y - above, width, height: b.y + b.height - a.y + above + below };
}

async function shot(p: Page, name: string, area?: { x: number; y: number; width: number; height: number }) {
  await p.screenshot({ path: join(DOCS, name), fullPage: true, ...(area ? { clip: area } : {}) });
  console.log(`docs: wrote docs/${name}`);
}

try {
  const bureau = 'section:has(h3:has-text("Score power: bureau_intel.bureau_score"))';
  const vintages = 'section:has(h3:has-text("Vintages by"))';
  const stability = 'section:has(h2:has-text("Stability over time"))';
  const cmp = await open('output/bt-compare/report.html', 1280, [bureau, vintages, stability]);
  await shot(cmp, 'backtest-score.png', await clip(cmp, `${bureau} h3`, `${bureau} svg.chart`, 1280));
  await shot(cmp, 'backtest-vintages.png', await clip(cmp, `${vintages} h3`, `${vintages} table`, 1280));
  await shot(cmp, 'backtest-stability.png', await clip(cmp, `${stability} h2`, `${stability} p.note >> nth=-1`, 1280));

  const estimates = 'section:has(h3:has-text("Population estimates"))';
  const est = await open('output/cc-20-compare/report.html', 1280, ['.sample-notice', estimates]);
  await shot(est, 'backtest-sample.png', await clip(est, '.sample-notice', `${estimates} .tw`, 1280, 60, 110));

  const sampled = await open('output/cc-20/report.html', 1200);
  await shot(sampled, 'run-report-sample.png', { x: 0, y: 0, width: 1200, height: 900 });
  await shot(await open('output/rescore/report.html', 1200), 'run-report-npm-start.png');
  await shot(await open('output/resumed/report.html', 1200), 'run-report.png');
  await shot(await open('output/night/report.html', 1200), 'run-report-night.png');
} finally {
  await browser.close();
  process.chdir(ROOT);
  rmSync(work, { recursive: true, force: true });
}
