#!/usr/bin/env node
// Thin launcher: the bundled sandbox lives in ../dist/ (built by `npm install` at the repository's root, or by
// `npm pack` here, which builds before it packs).
import('../dist/cli.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli.js')) {
    process.stderr.write('bre-sandbox: the build is missing; run `npm run build` at the repository root first\n');
    process.exit(2);
  }
  throw err;
});
