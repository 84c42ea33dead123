#!/usr/bin/env node
// Thin launcher: the bundled CLI lives in dist/bundle/ (built by `npm install` via the prepare script).
import module from 'node:module';
// Node >= 22.8: V8's compiled code of the bundle kept on disk between runs (os.tmpdir()/node-compile-cache, or
// NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so that a command does not parse it again
// each time; the worker threads are given the same directory (src/output/worker-thread.ts). It never fails.
module.enableCompileCache?.();
// With BRE_DEBUG a bug's stack (README) names the sources' files and lines, not the bundle's (its source maps).
if (process.env.BRE_DEBUG) process.setSourceMapsEnabled(true);
import('../dist/bundle/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    process.stderr.write('bre-batch: the build is missing; run `npm run build` first\n');
    process.exit(2);
  }
  throw err;
});
