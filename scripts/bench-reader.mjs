#!/usr/bin/env node
/**
 * The CSV reader alone (the runner's hot path): reads a 1,000,000-row location CSV through
 * readRowBatches of the build in DIST and prints rows, wall and CPU milliseconds. Compare two builds by
 * running them in turn, several times, and comparing medians (the machine is noisy):
 *
 *   node scripts/bench-reader.mjs dist /tmp/bench.csv        # writes the CSV first if it is missing
 *   node scripts/bench-reader.mjs ../old-build/dist /tmp/bench.csv
 */
import { existsSync, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist = 'dist', csv = '/tmp/bre-bench-reader.csv', rowsArg = '1000000'] = process.argv.slice(2);
if (!existsSync(csv)) {
  const out = createWriteStream(csv);
  out.write('reference_id,user_id,lead_id,latitude,longitude\n');
  for (let i = 1; i <= Number(rowsArg); i += 1) {
    const lat = (8 + ((i * 7919) % 2700) / 100).toFixed(4);
    const lng = (69 + ((i * 104729) % 2000) / 100).toFixed(4);
    if (!out.write(`B-${i},u${i},l${i},${lat},${lng}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}
const { readRowBatches } = await import(pathToFileURL(resolve(dist, 'input', 'read.js')).href);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
let rows = 0;
for await (const batch of readRowBatches(csv, { format: 'csv' })) rows += batch.length;
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  `${dist} rows ${rows} wall_ms ${Math.round(performance.now() - t0)} cpu_ms ${Math.round((cpu.user + cpu.system) / 1000)}\n`,
);
