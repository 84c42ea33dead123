#!/usr/bin/env node
// Thin launcher: the bundled CLI lives in dist/bundle/ (built by `npm install` via the prepare script).
// With BRE_DEBUG a bug's stack (README) names the sources' files and lines, not the bundle's (its source maps).
if (process.env.BRE_DEBUG) process.setSourceMapsEnabled(true);
import('../dist/bundle/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    process.stderr.write('bre-batch: the build is missing; run `npm run build` first\n');
    process.exit(2);
  }
  throw err;
});
