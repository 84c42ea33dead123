import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callsPerRow, computePlan, formatDuration, formatPlan, planRun } from '../../src/pipeline/plan.js';
import { loadPipeline } from '../../src/config/pipeline.js';
import { DEFAULT_RATES } from '@bre-batch/core/rates';
import { startIntervalMs } from '../../src/limits/pacer.js';
import type { RunSettings } from '../../src/pipeline/settings.js';
import { shardOf } from '../../src/input/shard.js';
import { tempDir } from '../helpers/temp.js';
import { folderRoot } from '../../src/input/files-root.js';

const rescore = loadPipeline('rescore');
const location = loadPipeline('location');

describe('computePlan', () => {
  it("the issue's example: 2,000,000 rescoring rows at 500 workflow calls a minute need 2.8 days from one IP", () => {
    const p = computePlan(2_000_000, rescore.stages, DEFAULT_RATES);
    expect(p.services.map((s) => [s.service, s.calls])).toEqual([
      ['workflow', 2_000_000],
      ['bureau', 2_000_000],
    ]);
    expect(p.wallMs! / 86_400_000).toBeCloseTo(2.8, 1);
    // The busiest service sets the pace: bureau (1000/min) takes half as long.
    expect(p.services[1].ms! * 2).toBeCloseTo(p.services[0].ms!, 0);
  });

  it.each([
    // 2,000,000 workflow calls at 500/min spaced for 60.032 s a window: 66.7 h
    [6, 12],
    [24, 3],
    [72, 1],
    [67, 1],
    [66, 2],
  ])('a %i h window needs %i egress IPs', (hours, ips) => {
    expect(computePlan(2_000_000, rescore.stages, DEFAULT_RATES, { windowHours: hours }).ipsNeeded).toBe(ips);
  });

  it('rate off: no time limit, one IP', () => {
    const p = computePlan(1000, location.stages, { ...DEFAULT_RATES, workflow: null }, { windowHours: 1 });
    expect(p.wallMs).toBeNull();
    expect(p.ipsNeeded).toBe(1);
    expect(formatPlan(p, { pipeline: 'location', input: 'x.csv' })).toMatch(/not limited/);
  });

  it('rejects a window that is not a positive number of hours', () => {
    expect(() => computePlan(1, location.stages, DEFAULT_RATES, { windowHours: 0 })).toThrow(
      /Expected --window-hours to be a number of hours above 0, got '0'/,
    );
  });

  it.each([
    [{ id: 'w', kind: 'workflow', options: {} }, 1],
    [{ id: 'b', kind: 'bsa_fetch', options: { fetch_uploaded: false } }, 2],
    [{ id: 'b', kind: 'bsa_fetch', options: { fetch_uploaded: true } }, 3],
  ])('calls per row of %j: %i', (stage, calls) => expect(callsPerRow(stage as never)).toBe(calls));

  it.each([
    [42_000, '42 s'],
    [5 * 60_000, '5 min'],
    [3 * 3_600_000 + 20 * 60_000, '3 h 20 min'],
    [2.8 * 86_400_000, '2 d 19 h 12 min'],
    [12 * 86_400_000, '12 d 0 h'],
  ])('formatDuration(%i) = %s', (ms, text) => expect(formatDuration(ms)).toBe(text));
});

describe('planRun', () => {
  const dir = tempDir('bre-plan-');
  const input = join(dir, 'in.csv');
  // 120 rows; one has a quoted newline, so counting lines would overcount.
  const body = Array.from(
    { length: 120 },
    (_, i) => `LOC-${i + 1},u${i + 1},l${i + 1},${i === 5 ? '"19.0\n"' : '19.0'},72.8`,
  );
  writeFileSync(input, `reference_id,user_id,lead_id,latitude,longitude\n${body.join('\n')}\n`);
  const settings = (over: Partial<RunSettings> = {}): RunSettings =>
    ({
      pipeline: location,
      input,
      inputFormat: 'csv',
      filesRoot: folderRoot(dir, false),
      outDir: join(dir, 'nowhere'),
      rates: { ...DEFAULT_RATES, workflow: { limit: 60, windowMs: 60_000 } },
      outputFormats: new Set(['csv', 'parquet']),
      ...over,
    }) as unknown as RunSettings;

  it('counts data rows (not lines) and says the time at the configured rate', async () => {
    const text = await planRun(settings(), { windowHours: 1 });
    expect(text).toMatch(/rows to do: 120\n/);
    expect(text).toMatch(/workflow: 120 calls at 60\/min -> 2 min/);
    expect(text).toMatch(/fits a 1 h window from one egress IP/);
  });

  it("counts only this shard's rows, up to --limit, and skips rows already done in --out", async () => {
    const mine = Array.from({ length: 100 }, (_, i) => i + 1).filter((r) => shardOf(`LOC-${r}`, r, 3) === 2);
    const out = join(dir, 'out');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'manifest.json'), '{}');
    writeFileSync(
      join(out, 'results.ndjson'),
      `${JSON.stringify({ row: mine[0], key: `LOC-${mine[0]}`, stages: {} })}\n`,
    );
    const text = await planRun(settings({ shard: { index: 2, count: 3 }, limit: 100, outDir: out }));
    expect(text).toContain(`rows to do: ${mine.length - 1} (1 already done in the output folder)`);
    expect(text).toContain('(shard 2/3)');
  });

  it('a window too short for one IP says how many IPs, as addresses of one host and as shards on several', async () => {
    const text = await planRun(settings({ rates: { ...DEFAULT_RATES, workflow: { limit: 1, windowMs: 60_000 } } }), {
      windowHours: 0.5,
    });
    expect(text).toMatch(/a 0.5 h window needs 5 egress IPs, each allow-listed with its own limit:\n/);
    expect(text).toMatch(
      /one host with 5 addresses: --local-address ADDR1,...,ADDR5 \(one process, one output folder; about 24 min\)/,
    );
    expect(text).toMatch(/or 5 hosts: run --shard K\/5 behind each \(about 24 min each\), then merge/);
  });

  it('counts the addresses of this host: the time from them, and whether they fit the window', async () => {
    const rates = { ...DEFAULT_RATES, workflow: { limit: 1, windowMs: 60_000 } };
    const three = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
    const fits = await planRun(settings({ rates, localAddresses: [...three, '127.0.0.5', '127.0.0.6'] }), {
      windowHours: 0.5,
    });
    expect(fits).toMatch(/time from one egress IP: about 2 h/);
    expect(fits).toMatch(/5 addresses on this host \(--local-address\): about 24 min/);
    expect(fits).toMatch(/fits a 0.5 h window from the 5 addresses on this host/);
    const short = await planRun(settings({ rates, localAddresses: three }), { windowHours: 0.5 });
    expect(short).toMatch(/3 addresses on this host \(--local-address\): about 40 min/);
    expect(short).toMatch(
      /a 0.5 h window needs 5 egress IPs, each allow-listed with its own limit \(this host has 3\):/,
    );
  });

  it('says how much room the output takes: at the typical bytes a row before any row is written', async () => {
    const text = await planRun(settings());
    // 120 rows x 1.5 KB (a workflow stage), then 0.9 of that for results.csv and results.parquet
    expect(text).toMatch(
      /\n {2}output: about 342 KB \(180 KB of journal at 1\.5 KB a row assumed, then 162 KB for the end files\); [\d.]+ [KMGT]?B free on the disk of (\S+), where the run would make its folder\n/,
    );
    // --plan makes nothing: the room is that of the folder the output folder would be made in.
    expect(text).toContain(`free on the disk of ${dir}, where the run would make its folder\n`);
    expect(existsSync(join(dir, 'nowhere'))).toBe(false);
    // That is the peak; once finished the journal is gzip'ed (a twentieth) and the spool gone: 9 KB + 0.6 x 180 KB.
    expect(text).toMatch(
      /\n {2}left once finished: about 117 KB \(9\.0 KB of journal, gzip'ed at the end; the end files without their spool\)$/,
    );
    expect(await planRun(settings(), { keepJournal: true })).toMatch(
      /\n {2}left once finished: about 288 KB \(180 KB of journal, kept uncompressed: --keep-journal; the end files without their spool\)$/,
    );
  });

  it("...and at the bytes a row of the folder's journal when it has rows", async () => {
    const out = join(dir, 'measured');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'manifest.json'), '{}');
    // 4 rows of 261 bytes and a newline each
    writeFileSync(
      join(out, 'results.ndjson'),
      [1, 2, 3, 4]
        .map((r) => `${JSON.stringify({ row: r, key: `LOC-${r}`, stages: { location: { text: 'x'.repeat(204) } } })}\n`)
        .join(''),
    );
    const text = await planRun(settings({ outDir: out }));
    expect(text).toContain('rows to do: 116 (4 already done in the output folder)');
    expect(text).toMatch(
      /output: about 58\.7 KB \(30\.4 KB of journal at 262 B a row as written so far, then 28\.3 KB for the end files\)/,
    );
  });

  it('warns in one line when the disk has less room than that', () => {
    const p = computePlan(2_000_000, location.stages, DEFAULT_RATES);
    const estimate = {
      rows: 2_000_000,
      bytesPerRow: 1500,
      measured: false,
      journalBytes: 3e9,
      endBytes: 2.7e9,
      totalBytes: 5.7e9,
    };
    const text = formatPlan(p, {
      pipeline: 'location',
      input: 'x.csv',
      room: { estimate, dir: '/data/out', free: 1.2e9 },
    });
    expect(text.split('\n').slice(-2)).toEqual([
      '  output: about 5.7 GB (3.0 GB of journal at 1.5 KB a row assumed, then 2.7 GB for the end files); 1.2 GB free on the disk of /data/out',
      "  warning: the disk of /data/out has 1.2 GB free, and this run's output needs about 5.7 GB (2,000,000 rows at 1.5 KB a row assumed: 3.0 GB of journal, then 2.7 GB for the end files): free some room or choose another --out (a run stopped by a full disk resumes when re-run)",
    ]);
    expect(
      formatPlan(p, { pipeline: 'location', input: 'x.csv', room: { estimate, dir: '/data/out', free: 6e9 } }),
    ).not.toMatch(/warning/);
  });

  it('refuses stdin', async () => {
    await expect(planRun(settings({ input: '-' }))).rejects.toThrow(/stdin/);
  });
});

describe('remainingEstimate', () => {
  it("is the plan for the rows left, at the run's limits", async () => {
    const { remainingEstimate } = await import('../../src/pipeline/plan.js');
    expect(remainingEstimate(500, { pipeline: location, rates: DEFAULT_RATES })).toEqual({
      ms: Math.round(500 * startIntervalMs(DEFAULT_RATES.workflow!)),
      text: '1 min',
    });
    expect(remainingEstimate(500, { pipeline: location, rates: { ...DEFAULT_RATES, workflow: null } }).ms).toBeNull();
    expect(
      remainingEstimate(500, { pipeline: location, rates: DEFAULT_RATES, localAddresses: ['127.0.0.2', '127.0.0.3'] })
        .ms,
    ).toBe(Math.round(250 * startIntervalMs(DEFAULT_RATES.workflow!)));
  });
});
