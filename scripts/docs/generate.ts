/**
 * `npm run docs:generate`: writes the documentation pages that are generated from the code and the repository
 * (each marked as such at its top), so that they have one wording, the code's. `--check` writes nothing and
 * exits 1 naming each page that differs from what would be written (test/docs/generated.test.ts checks the same).
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stalePages } from './pages.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const stale = await stalePages(ROOT);
if (process.argv.includes('--check')) {
  if (stale.length > 0) {
    const names = stale.map((p) => p.path).join(', ');
    console.error(`docs: ${stale.length} generated page(s) out of date: ${names}; run \`npm run docs:generate\``);
    process.exit(1);
  }
} else {
  for (const page of stale) {
    writeFileSync(join(ROOT, page.path), page.text);
    console.log(`docs: wrote ${page.path}`);
  }
}
