/**
 * Dry runs and plans leave nothing behind unless they have something to write: a clean --dry-run makes no
 * folder and points at no file; one with rows that would fail writes dry-run-errors.ndjson only; --plan
 * without --out reports the room of the folder the real run will use (the unfinished one it takes up).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { journalText } from '../helpers/output.js';

const HEADER = 'reference_id,user_id,lead_id,latitude,longitude\n';

describe('dry runs and plans', () => {
  it('a clean --dry-run without --out makes no folder and names no file', async () => {
    const ws = tempDir();
    writeFileSync(join(ws, 'in.csv'), `${HEADER}A,u1,l1,19.07,72.87\nB,u2,l2,28.61,77.2\n`);
    const r = await spawnCli(['run', 'location', '--input', 'in.csv', '--dry-run', '--no-progress'], {}, { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('rows: 2 read, 2 valid, 0 would fail\n');
    expect(r.stdout).not.toContain('dry-run-errors');
    expect(existsSync(join(ws, 'output'))).toBe(false);
  });

  it('a --dry-run with rows that would fail writes dry-run-errors.ndjson and nothing else', async () => {
    const ws = tempDir();
    writeFileSync(join(ws, 'in.csv'), `${HEADER}A,u1,l1,19.07,72.87\nB,u2,l2,999,77.2\n`);
    const r = await spawnCli(['run', 'location', '--input', 'in.csv', '--dry-run', '--no-progress'], {}, { cwd: ws });
    expect(r.code, r.stderr).toBe(1);
    const [folder] = readdirSync(join(ws, 'output'));
    expect(readdirSync(join(ws, 'output', folder))).toEqual(['dry-run-errors.ndjson']);
    expect(r.stdout).toContain(`1 would fail (see ${join(ws, 'output', folder, 'dry-run-errors.ndjson')})`);
    // The same --out, fixed: the stale file goes, the folder stays empty.
    const out = join(ws, 'output', folder);
    writeFileSync(join(ws, 'in.csv'), `${HEADER}A,u1,l1,19.07,72.87\n`);
    const again = await spawnCli(
      ['run', 'location', '--input', 'in.csv', '--out', out, '--dry-run', '--no-progress'],
      {},
      { cwd: ws },
    );
    expect(again.code, again.stderr).toBe(0);
    expect(readdirSync(out)).toEqual([]);
  });

  it('--plan without --out makes no folder, and reports the unfinished folder the run will take up', async () => {
    const ws = tempDir();
    writeFileSync(join(ws, 'in.csv'), `${HEADER}A,u1,l1,19.07,72.87\nB,u2,l2,28.61,77.2\n`);
    const plan = await spawnCli(['run', 'location', '--input', 'in.csv', '--plan'], {}, { cwd: ws });
    expect(plan.code, plan.stderr).toBe(0);
    expect(existsSync(join(ws, 'output'))).toBe(false);
    // An unfinished folder of this run (its first row done): the plan counts from there and measures its disk.
    const run = await spawnCli(
      ['run', 'location', '--input', 'in.csv', '--no-progress', '--limit', '1'],
      {},
      { cwd: ws },
    );
    expect(run.code, run.stderr).toBe(0);
    const [done] = readdirSync(join(ws, 'output'));
    // Another --limit is another run; the whole input's folder is made, stopped before its end (a summary that says so).
    const folder = join(ws, 'output', 'location-20261126T000000Z');
    mkdirSync(folder);
    const manifest = JSON.parse(readFileSync(join(ws, 'output', done, 'manifest.json'), 'utf8')) as {
      limit: number | null;
    };
    manifest.limit = null;
    writeFileSync(join(folder, 'manifest.json'), JSON.stringify(manifest));
    writeFileSync(join(folder, 'results.ndjson'), journalText(join(ws, 'output', done, 'results.ndjson')));
    writeFileSync(join(folder, 'errors.ndjson'), '');
    const resumed = await spawnCli(['run', 'location', '--input', 'in.csv', '--plan'], {}, { cwd: ws });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('the run would resume the unfinished run in output/location-20261126T000000Z');
    expect(resumed.stdout).toContain('rows to do: 1 (1 already done in the output folder)');
    expect(resumed.stdout).toContain('free on the disk of output/location-20261126T000000Z');
  });
});
