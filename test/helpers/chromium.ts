/// <reference lib="dom" />
// (the DOM types are for the page.evaluate() callbacks, which run in the browser)
/**
 * A real browser for the tests that render a report.html: Debian's Chromium (/usr/bin/chromium; .ci/run installs
 * it) driven by playwright-core. Without it the tests are skipped with a message saying so; under CI=true they
 * fail instead.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, type it } from 'vitest';
import { gatedIt } from './gate.js';

const CHROMIUM = '/usr/bin/chromium';
/** Headless, nothing fetched or started behind the page's back (the tests count every request it makes). */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** Screenshots for a person to look at (not committed). */
export const ARTIFACTS = resolve(import.meta.dirname, '..', 'artifacts');

/** `it` when Chromium is installed; under CI=true without it, a test that fails saying so; else `it.skip`. */
export const itChromium: typeof it = gatedIt(
  existsSync(CHROMIUM),
  `${CHROMIUM} is missing: the report rendering tests did not run`,
  "install Debian's chromium package (apt-get install -y chromium; npm test as root installs it)",
);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

/**
 * One browser for a test file (a launch costs about 3 CPU seconds): the returned function launches it when
 * first called and gives it to every test after; it is closed after the file. A test closes its pages with
 * closePages, so the next starts with none.
 */
export function browserPerFile(): () => Promise<Browser> {
  let browser: Promise<Browser> | undefined;
  afterAll(async () => {
    await browser?.then(
      (b) => b.close(),
      () => undefined,
    );
  });
  return () => (browser ??= launchChromium());
}

/** Closes every page a test opened (each in a context of its own: openHtml), the browser left running. */
export async function closePages(browser: Browser): Promise<void> {
  for (const context of browser.contexts()) await context.close();
}

export interface OpenedPage {
  readonly page: Page;
  /** Console errors and warnings, and uncaught page errors. */
  readonly problems: string[];
  /** Every URL the page asked for, itself included. */
  readonly requests: string[];
  /** The file's own URL. */
  readonly url: string;
}

/** Opens an HTML file at laptop size (by default), recording console problems and every request the page makes. */
export async function openHtml(
  browser: Browser,
  path: string,
  viewport = { width: 1280, height: 900 },
): Promise<OpenedPage> {
  const page = await browser.newPage({ viewport });
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  const url = pathToFileURL(path).href;
  await page.goto(url, { waitUntil: 'load' });
  return { page, problems, requests, url };
}

/** The laid-out width of every chart (svg.chart) on the page: 0 for one that is not drawn. */
export function chartWidths(page: Page): Promise<number[]> {
  return page.locator('svg.chart').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().width));
}

/** How far the page sticks out sideways: more than 0 puts a horizontal scroll bar on the screen. */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}
