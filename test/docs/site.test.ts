/**
 * The documentation site as a reader gets it: `npm run docs:build` builds it once (kept while its inputs stay
 * the same: ../helpers/site-build.ts; the Markdown and the built HTML checked for dead links and anchors on the
 * way), then Chromium opens it from a local server: the home page is the README, a page of each section of the
 * sidebar renders with its title, and the local search finds "exit code 3" on the troubleshooting page and
 * "--rate" in the reference.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlProblems } from '../../scripts/docs/check.js';
import { itChromium, launchChromium } from '../helpers/chromium.js';
import { builtSite } from '../helpers/site-build.js';

/** One build for the whole file, when one is needed: VitePress takes tens of seconds on a loaded two-core machine. */
const BUILD_MS = 600_000;

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

/** The built site on loopback, as a static host serves it (a folder's index.html, a 404 page). */
function serve(dir: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    if (path.endsWith('/')) path += 'index.html';
    const file = join(dir, path);
    if (!file.startsWith(dir) || !existsSync(file)) {
      res.writeHead(404, { 'content-type': 'text/html' }).end(readFileSync(join(dir, '404.html')));
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  return new Promise((ok) =>
    server.listen(0, '127.0.0.1', () =>
      ok({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

let out = '';
let site: { server: Server; url: string } | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  out = await builtSite();
  site = await serve(out);
}, BUILD_MS);

afterAll(async () => {
  await browser?.close();
  site?.server.close();
});

/** Uncaught errors of each page opened, from its first script on. */
const pageErrors = new WeakMap<Page, string[]>();

async function open(path: string): Promise<Page> {
  browser ??= await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  pageErrors.set(page, errors);
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${site!.url}${path}`, { waitUntil: 'networkidle' });
  return page;
}

/** What the local search lists for a query: each result's link, as the search box shows them. */
async function search(query: string): Promise<string[]> {
  const page = await open('/docs/index.html');
  await page.locator('button.DocSearch-Button').first().click();
  await page.locator('#localsearch-input').fill(query);
  const results = page.locator('#localsearch-list a.result');
  await results.first().waitFor();
  const hrefs = await results.evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
  await page.close();
  return hrefs;
}

describe('the documentation site', () => {
  it('builds, with no link between its pages to a page or an anchor it lacks', () => {
    for (const page of ['index.html', 'docs/index.html', 'docs/troubleshooting.html', 'packages/sandbox/README.html'])
      expect(existsSync(join(out, page)), page).toBe(true);
    expect(htmlProblems(out)).toEqual([]);
  });

  itChromium('opens on the README, whose links lead into the guide', async () => {
    const page = await open('/');
    expect(await page.locator('h1').first().innerText()).toContain('bre-batch');
    await page.locator('.vp-doc a[href*="getting-started"]').first().click();
    // The site's router changes the page in place: wait for the new page's title.
    await page.locator('.vp-doc h1', { hasText: 'Getting started' }).waitFor();
    expect(page.url()).toContain('/docs/getting-started.html');
    await page.close();
  });

  itChromium('renders a page of each section of the sidebar, with its title and no error', async () => {
    const sections = {
      '/docs/real-services.html': 'Running against the real services',
      '/docs/operations/kubernetes.html': 'Kubernetes',
      '/docs/troubleshooting.html': 'Troubleshooting',
      '/docs/reference/commands.html': 'Commands and options',
      '/docs/sandbox.html': 'The sandbox and the back-testing packages',
      '/docs/development.html': 'Development',
    };
    for (const [path, title] of Object.entries(sections)) {
      const page = await open(path);
      expect(await page.locator('.vp-doc h1').first().innerText(), path).toContain(title);
      expect(await page.locator('.VPSidebar a.link').count(), path).toBeGreaterThan(10);
      expect(await page.locator('text=PAGE NOT FOUND').count(), path).toBe(0);
      expect(pageErrors.get(page), path).toEqual([]);
      await page.close();
    }
  });

  itChromium('an anchor written for GitHub scrolls to its heading on the site', async () => {
    const page = await open('/docs/operations/scaling-out.html#several-ips---shard-kn-and-merge');
    const heading = page.locator('[id="several-ips---shard-kn-and-merge"]');
    expect(await heading.innerText()).toContain('Several IPs');
    expect(await heading.evaluate((h) => h.getBoundingClientRect().top)).toBeLessThan(300);
    await page.close();
  });

  itChromium('search finds "exit code 3" on the troubleshooting page', async () => {
    expect(await search('exit code 3')).toEqual(
      expect.arrayContaining([expect.stringContaining('/docs/troubleshooting.html')]),
    );
  });

  itChromium('search finds "--rate" in the reference', async () => {
    expect(await search('--rate')).toEqual(expect.arrayContaining([expect.stringContaining('/docs/reference/')]));
  });
});
