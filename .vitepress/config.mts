/**
 * The documentation site (`npm run docs`, `npm run docs:build`): VitePress over the repository's own Markdown,
 * so that each page is the file a code host shows. The README is the home page; the guide is docs/; the
 * packages' own pages (packages/NAME/README.md) are pages of the site too. Anchors are GitHub's
 * (github-slugger), so a link written for the code host works on the site; scripts/docs/check.ts fails the
 * build on a dead link or anchor, before and after VitePress (whose own check ignores anchors).
 */
import { posix } from 'node:path';
import { slug } from 'github-slugger';
import { defineConfig } from 'vitepress';
import { SITE_EXCLUDE } from '../scripts/docs/site.js';

export default defineConfig({
  title: 'bre-batch',
  description: 'A batch processor that streams applicant rows through a credit decisioning API at the documented limits',
  lang: 'en',
  // The repository is the source; only its documentation is the site.
  srcExclude: SITE_EXCLUDE,
  // The README is the home page; it lives in the root as index.md would, so its relative links hold.
  rewrites: { 'README.md': 'index.md' },
  cleanUrls: false,
  lastUpdated: false,
  markdown: {
    // GitHub's heading anchors (duplicates get -1, -2 from markdown-it-anchor, as GitHub numbers them).
    anchor: { slugify: slug },
    // `{#id}` and `{.class}` would change headings a code host shows as written.
    attrs: { disable: true },
    // The README is the site's index.md: a link to it is a link to the home page.
    config: (md) => {
      md.core.ruler.push('readme-is-home', (state) => {
        const from = posix.dirname(String(state.env.relativePath ?? ''));
        for (const child of state.tokens.flatMap((t) => t.children ?? [])) {
          const href = child.type === 'link_open' ? child.attrGet('href') : null;
          if (!href || /^[a-z][a-z0-9+.-]*:|^\/\/|^#/i.test(href)) continue;
          const [path, hash] = href.split('#', 2);
          if (posix.join(from, path) === 'README.md') {
            child.attrSet('href', `${posix.join(posix.dirname(path), 'index.md')}${hash === undefined ? '' : `#${hash}`}`);
          }
        }
      });
    },
  },
  themeConfig: {
    search: { provider: 'local' },
    outline: { level: [2, 3] },
    nav: [
      { text: 'Guide', link: '/docs/index.html' },
      { text: 'Operations', link: '/docs/operations/index.html' },
      { text: 'Reference', link: '/docs/reference/index.html' },
    ],
    sidebar: [
      {
        text: 'Using it',
        items: [
          { text: 'Overview', link: '/docs/index.html' },
          { text: 'Getting started', link: '/docs/getting-started.html' },
          { text: 'Running against the real services', link: '/docs/real-services.html' },
          { text: 'Pipelines', link: '/docs/pipelines.html' },
          { text: 'Input', link: '/docs/input.html' },
          { text: 'Output', link: '/docs/output.html' },
          { text: 'Databases', link: '/docs/databases.html' },
          { text: 'Back-testing', link: '/docs/backtesting.html' },
        ],
      },
      {
        text: 'Operations',
        items: [
          { text: 'Going to production', link: '/docs/operations/index.html' },
          { text: 'Cron', link: '/docs/operations/cron.html' },
          { text: 'In a container', link: '/docs/operations/container.html' },
          { text: 'Kubernetes', link: '/docs/operations/kubernetes.html' },
          { text: 'Scaling out and jobs', link: '/docs/operations/scaling-out.html' },
          { text: 'Monitoring and alerts', link: '/docs/operations/monitoring.html' },
          { text: 'Stopping and signals', link: '/docs/operations/stopping.html' },
          { text: 'Disk and retention', link: '/docs/operations/disk.html' },
          { text: 'Spend', link: '/docs/operations/spend.html' },
        ],
      },
      {
        text: 'When something goes wrong',
        items: [
          { text: 'Troubleshooting', link: '/docs/troubleshooting.html' },
          { text: 'Performance', link: '/docs/performance.html' },
        ],
      },
      {
        text: 'Reference',
        items: [
          { text: 'Overview', link: '/docs/reference/index.html' },
          { text: 'Commands and options', link: '/docs/reference/commands.html' },
          { text: 'Error codes', link: '/docs/reference/errors.html' },
          { text: 'Metrics', link: '/docs/reference/metrics.html' },
          { text: 'Shipped pipelines', link: '/docs/reference/pipelines.html' },
          { text: 'Output files', link: '/docs/reference/output-files.html' },
        ],
      },
      {
        text: 'The packages',
        items: [
          { text: 'The sandbox and back-testing', link: '/docs/sandbox.html' },
          { text: 'The sandbox', link: '/packages/sandbox/README.html' },
          { text: 'compare', link: '/packages/backtest/README.html' },
          { text: 'Shared: core', link: '/packages/core/README.html' },
          { text: 'Shared: formats', link: '/packages/formats/README.html' },
        ],
      },
      {
        text: 'Development',
        items: [
          { text: 'Development', link: '/docs/development.html' },
          { text: 'Architecture', link: '/ARCHITECTURE.html' },
          { text: 'The limiter', link: '/docs/limiter.html' },
        ],
      },
    ],
  },
  vite: {
    // The dev server watches the repository: not what a run writes, nor the build.
    server: { watch: { ignored: ['**/output/**', '**/dist/**', '**/test/**', '**/node_modules/**'] } },
  },
});
