/**
 * Every shipped pipeline, its sample loaded into a PostgreSQL table, run with a PostgreSQL --sink as a user
 * runs it: the sink's tables (default names: the pipeline's) equal the run's own output folder value for value
 * with types: NAME = results.ndjson, NAME_errors = errors.ndjson, NAME_transactions = transactions.csv. The
 * tables are the point, not the process (the other db-sink files kill and stop spawned runs): the runs are the
 * CLI's code in this process (test/helpers/cli-in-process.ts), without a start-up for each of the twelve.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import { ROOT, runArgs } from '../helpers/cli.js';
import { fromBuild, runInProcess } from '../helpers/cli-in-process.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import { loadSample } from '../helpers/db-load.js';
import { readOutput } from '../helpers/output.js';
import { resultLines, sinkProblems, tableNames } from '../helpers/sink-tables.js';
import { tempDir } from '../helpers/temp.js';

// The runner's pipeline loader and stage kinds from the build, as the runs in this process load them.
const { loadPipeline } = await fromBuild<typeof import('../../src/config/pipeline.js')>('config/pipeline.js');
const { declaredHeaders } = await fromBuild<typeof import('../../src/stages/index.js')>('stages/index.js');

const SAMPLES = join(ROOT, 'samples');
const pipelines = readdirSync(join(ROOT, 'pipelines'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''));
const sampleOf = (p: string) => join(SAMPLES, readdirSync(SAMPLES).find((f) => f.startsWith(`${p}.`))!);
const ACCOUNT_PIPELINES = ['aa_transactions', 'bsa_transactions'];

describe.runIf(available.postgres || process.env.CI === 'true')('every shipped pipeline into a PostgreSQL sink', () => {
  let source: string;
  let sink: string;
  beforeAll(async () => {
    // The input and the sink in different databases: the sink's default table names are the pipelines' own.
    source = await freshDatabase('postgres', 'bre_e2e_sinkp_src');
    sink = await freshDatabase('postgres', 'bre_e2e_sinkp_dst');
  });

  itDb('postgres')('each pipeline has a sample', () => {
    expect(pipelines.length).toBeGreaterThanOrEqual(11);
    for (const p of pipelines) expect(sampleOf(p), p).toMatch(/\.(csv|ndjson)$/);
  });

  itDb('postgres').each(pipelines)(
    '%s: its sample as a table, into the sink: the tables equal the folder',
    async (p) => {
      const { rows } = await loadSample(source, p, sampleOf(p));
      const out = join(tempDir(`bre-e2e-sinkp-${p}-`), 'out');
      // Report and bank files named by the rows are read inside --files-root (a database has no folder).
      const r = await runInProcess(
        runArgs(p, source, out, '--table', p, '--sink', sink, '--rate', 'off', '--files-root', SAMPLES),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(new RegExp(`sink: writing to ${p}, ${p}_errors`));
      const o = readOutput(out);
      expect(o.results).toHaveLength(rows.length);
      expect(o.errors).toEqual([]);
      expect(resultLines([out]).every((l) => Object.keys(l.stages).length > 0)).toBe(true);
      const account = ACCOUNT_PIPELINES.includes(p);
      // Every declared field has its column, null in every row or not.
      const declared = declaredHeaders(loadPipeline(join(ROOT, 'pipelines', `${p}.yaml`)).stages).map((d) => d.header);
      expect(await sinkProblems(sink, { table: p, dirs: [out], transactions: account, declared })).toEqual([]);
      const tables = await tableNames(sink);
      expect(tables).toContain(`${p}_errors`);
      expect(tables.includes(`${p}_transactions`)).toBe(account);
    },
  );

  itDb('postgres')("a sampled run: each row's stratum and weight in NAME as in results.ndjson", async () => {
    await loadSample(source, 'cc_sampled', sampleOf('champion_challenger'));
    const out = join(tempDir('bre-e2e-sinkp-sampled-'), 'out');
    const r = await runInProcess(
      runArgs(
        'champion_challenger',
        source,
        out,
        '--table',
        'cc_sampled',
        '--sink',
        sink,
        '--sink-table',
        'cc_sampled',
        '--sample-share',
        '0.2',
        '--stratify-by',
        'application_date:month',
        '--rate',
        'off',
      ),
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = resultLines([out]);
    expect(lines).toHaveLength(300);
    expect(lines.every((l) => typeof l.stratum === 'string' && typeof l.weight === 'number')).toBe(true);
    expect(await sinkProblems(sink, { table: 'cc_sampled', dirs: [out] })).toEqual([]);
  });
});
