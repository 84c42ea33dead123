/**
 * The row gates (src/pipeline/gates.ts), each alone, table by table; then how they are run (a skip counted and
 * done once, what a passed gate holds given back, a wait awaited only where there is one) and their order.
 */
import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { shardOf } from '../../src/input/shard.js';
import { emptyCounts, SpendMeter, type Prices } from '../../src/limits/spend.js';
import { newCounters } from '../../src/pipeline/build-summary.js';
import { FrontierTracker } from '../../src/pipeline/frontier-tracker.js';
import {
  limitGate,
  readGate,
  resumeGate,
  retryErrorsGate,
  RowGates,
  rowGates,
  sampleGate,
  shardGate,
  sinkBehindGate,
  sinkKeyGate,
  spendGate,
  stopGate,
  windowGate,
  type Candidate,
  type Gate,
  type GateParts,
  type SkipCounter,
  type Verdict,
  type Waited,
} from '../../src/pipeline/gates.js';
import type { InputRow } from '@bre-batch/core/types';

/** Row `row` with its key; each row a key of its own, as a database input gives them (the resume point's). */
function candidate(row: number, key: string | null = `K${row}`, readError?: InputRow['readError']): Candidate {
  return {
    row: { row, line: row + 1, data: {}, sourceKey: key, groupEnd: true, ...(readError ? { readError } : {}) },
    key,
  };
}

const MALFORMED: InputRow['readError'] = { code: 'MALFORMED_ROW', message: 'ragged', expected: '3 fields' };
const rows = (...r: number[]) => ({ has: (n: number) => r.includes(n) });
const prices: Prices = { currency: 'INR', service: { workflow: 1_000 }, workflow: {}, billed: new Set() };

describe('each gate alone', () => {
  it.each([
    ['no stop: pass', undefined, 'pass'],
    ['stopping: end', new BreError('INTERRUPTED', 'SIGTERM'), 'end'],
  ] as const)('stop: %s', (_n, reason, expected) => {
    expect(stopGate('stopped', { reason }).check(candidate(1))).toBe(expected);
  });

  it.each([
    [1, 2, 'pass'],
    [2, 2, 'pass'],
    [3, 2, 'end'],
  ] as const)('limit: row %i with --limit %i: %s', (row, limit, expected) => {
    expect(limitGate(limit).check(candidate(row))).toBe(expected);
  });

  it('read: counts every row and holds it in the resume point', () => {
    const counters = { read: 0 };
    const frontier = new FrontierTracker();
    const gate = readGate(counters, frontier);
    expect([gate.check(candidate(1)), gate.check(candidate(2))]).toEqual(['pass', 'pass']);
    expect(counters.read).toBe(2);
    // Row 3 is next: a row read out of order would throw.
    expect(() => frontier.read(candidate(3).row)).not.toThrow();
  });

  it.each([
    ['a new key goes on as it is', 'A', undefined, undefined],
    ['no key: MISSING_KEY', null, undefined, 'MISSING_KEY'],
    ['a key met before: DUPLICATE_KEY', 'SEEN', undefined, 'DUPLICATE_KEY'],
    ['a key met on this row before (a job chunk claimed again): goes on', 'AGAIN', undefined, undefined],
    ['unreadable already: kept as it is', null, MALFORMED, 'MALFORMED_ROW'],
  ] as const)('sink key: %s', (_n, key, readError, code) => {
    const c = candidate(5, key, readError);
    const keys = new Map([
      ['SEEN', 2],
      ['AGAIN', 5],
    ]);
    expect(sinkKeyGate({ keys }, 'reference_id').check(c)).toBe('pass');
    expect(c.row.readError?.code).toBe(code);
  });

  it('sink key: a database input (no keys kept here) checks its own', () => {
    const c = candidate(5, null);
    expect(sinkKeyGate({ keys: undefined }, 'reference_id').check(c)).toBe('pass');
    expect(c.row.readError).toBeUndefined();
  });

  it.each([
    ['drawn', candidate(2), 'pass'],
    ['not drawn', candidate(3), { skip: 'notInSample' }],
    ['no key: goes on, to be the run’s error', candidate(3, null), 'pass'],
    ['unreadable: goes on, to be the run’s error', candidate(3, 'K3', MALFORMED), 'pass'],
  ] as const)('sample: %s', (_n, c, expected) => {
    expect(sampleGate({ chosen: new Map([[2, 0]]) }).check(c)).toEqual(expected);
  });

  it.each([1, 2, 3])('shard: row keys hashing to shard %i of 3 pass its gate only', (index) => {
    const gate = shardGate({ index, count: 3 });
    for (let row = 1; row <= 30; row += 1) {
      const c = candidate(row, row % 7 === 0 ? null : `K${row}`);
      const expected: Verdict = shardOf(c.key, row, 3) === index ? 'pass' : { skip: 'outOfShard' };
      expect(gate.check(c)).toEqual(expected);
    }
  });

  it.each([
    [1, { skip: 'resumed' }],
    [2, 'pass'],
  ] as const)('resume: row %i when the folder holds row 1', (row, expected) => {
    expect(resumeGate(rows(1)).check(candidate(row))).toEqual(expected);
  });

  // --retry-errors, the row, in the errors file, the earlier run's --limit: verdict, counted as retried.
  it.each([
    [true, 4, true, 10, 'pass', 1],
    [true, 4, false, 10, 'pass', 0],
    [true, 11, false, 10, 'outside', 0],
    [true, 11, true, 10, 'pass', 1],
    [true, 11, false, null, 'pass', 0],
    [false, 11, false, 10, 'pass', 0],
  ] as const)(
    'retry errors: %s, row %i, in errors %s, earlier limit %s: %s',
    (retryErrors, row, inErrors, earlierLimit, expected, retried) => {
      const counters = { retriedRows: 0 };
      const gate = retryErrorsGate({ retryErrors, retry: inErrors ? rows(row) : rows(), earlierLimit }, counters);
      expect(gate.check(candidate(row))).toBe(expected);
      expect(counters.retriedRows).toBe(retried);
    },
  );

  it('sink behind: passes at once while it keeps up, after the wait when it is behind', async () => {
    expect(sinkBehindGate(() => undefined).check(candidate(1))).toBe('pass');
    let caughtUp!: () => void;
    const waiting = sinkBehindGate(() => new Promise<void>((r) => (caughtUp = r))).check(candidate(1));
    expect(waiting).toBeInstanceOf(Promise);
    caughtUp();
    // A wait settles with nothing for a pass: its own promise, none chained to it.
    expect(await waiting).toBeUndefined();
  });

  it('window: a free place at once, a full window after a wait; a place given back', async () => {
    let free = 1;
    let given = 0;
    let opened!: () => void;
    const gate = windowGate({
      enter: () => (free-- > 0 ? undefined : new Promise<void>((r) => (opened = r))),
      giveBack: () => (given += 1),
    });
    expect(gate.check(candidate(1))).toBe('pass');
    const second = gate.check(candidate(2));
    expect(second).toBeInstanceOf(Promise);
    opened();
    expect(await second).toBeUndefined();
    gate.giveBack?.();
    expect(given).toBe(1);
  });

  // cap, rows in flight, top-up: verdict, rows in flight after, the stop's code.
  it.each([
    ['under the cap', 10_000, 0, undefined, 'pass', 1, undefined],
    ['no cap', undefined, 50, undefined, 'pass', 51, undefined],
    ['at the cap, no top-up: the run stops', 3_000, 3, undefined, 'end', 3, 'SPEND_CAP'],
    ['at the cap, a job tops it up', 3_000, 3, true, 'pass', 4, undefined],
    ['at the cap, the job has none left', 3_000, 3, false, 'end', 3, 'SPEND_CAP'],
  ] as const)('spend: %s', async (_n, cap, inFlight, topUp, expected, after, code) => {
    const meter = new SpendMeter(prices, emptyCounts(), cap, 1_000);
    meter.rowsInFlight = inFlight;
    if (topUp !== undefined)
      meter.topUp = async () => {
        if (topUp) meter.capMicros = (meter.capMicros ?? 0) + 1_000;
        return topUp;
      };
    const stop = { reason: undefined as BreError | undefined, request: (why: BreError) => (stop.reason ??= why) };
    expect(await spendGate(meter, stop).check(candidate(1))).toBe(expected);
    expect(meter.rowsInFlight).toBe(after);
    expect(stop.reason?.code).toBe(code);
  });

  it('spend: a stop met while the cap was topped up ends the feed, the row not counted in flight', async () => {
    const meter = new SpendMeter(prices, emptyCounts(), 0, 1_000);
    const stop = { reason: undefined as BreError | undefined, request: (why: BreError) => (stop.reason ??= why) };
    meter.topUp = async () => {
      stop.request(new BreError('INTERRUPTED', 'SIGTERM'));
      meter.capMicros = 1_000;
      return true;
    };
    expect(await spendGate(meter, stop).check(candidate(1))).toBe('end');
    expect([meter.rowsInFlight, stop.reason?.code]).toEqual([0, 'INTERRUPTED']);
  });
});

describe('running the gates', () => {
  /** A gate that answers `v` and records what happened to it. */
  function fixed(name: string, v: Verdict | Promise<Waited>, log: string[]): Gate {
    const check = () => {
      log.push(name);
      return v;
    };
    return { name, check, giveBack: () => log.push(`${name} given back`) };
  }

  it.each([
    ['all pass: the row starts', ['pass', 'pass', 'pass'], 'start', [], ['a', 'b', 'c']],
    [
      'a skip: counted and done, later gates not asked, earlier ones give back',
      ['pass', { skip: 'resumed' }, 'pass'],
      'not sent',
      ['resumed'],
      ['a', 'b', 'a given back'],
    ],
    ['outside: not counted', ['pass', 'outside', 'pass'], 'not sent', [], ['a', 'b', 'a given back']],
    ['end: the feed stops', ['pass', 'pass', 'end'], 'end', [], ['a', 'b', 'c', 'b given back', 'a given back']],
  ] as const)('%s', (_n, verdicts, expected, skips, log) => {
    const happened: string[] = [];
    const skipped: SkipCounter[] = [];
    const gates = new RowGates(
      verdicts.map((v, i) => fixed('abc'[i]!, v as Verdict, happened)),
      (_row, counter) => skipped.push(counter),
    );
    expect(gates.admit(candidate(1))).toBe(expected);
    expect(skipped).toEqual(skips);
    expect(happened).toEqual(log);
  });

  it.each([
    ['settles with nothing (a wait that passes)', undefined],
    ["settles with 'pass'", 'pass'],
  ] as const)('a gate that waits and %s: the gates after it are asked once the feed resumes', async (_n, settled) => {
    const happened: string[] = [];
    const gates = new RowGates(
      [fixed('a', 'pass', happened), fixed('b', Promise.resolve(settled), happened), fixed('c', 'end', happened)],
      () => undefined,
    );
    const c = candidate(1);
    const admission = gates.admit(c);
    if (typeof admission === 'string') throw new Error(`expected the row held by a gate, got ${admission}`);
    expect(admission.at).toBe(1);
    expect(happened).toEqual(['a', 'b']);
    expect(gates.resume(admission, c, await admission.until)).toBe('end');
    expect(happened).toEqual(['a', 'b', 'c', 'b given back', 'a given back']);
  });

  it('a gate whose wait settles with a skip: counted, and the gates before it give back', async () => {
    const happened: string[] = [];
    const skipped: SkipCounter[] = [];
    const gates = new RowGates(
      [fixed('a', 'pass', happened), fixed('b', Promise.resolve({ skip: 'resumed' }), happened)],
      (_row, counter) => skipped.push(counter),
    );
    const c = candidate(1);
    const admission = gates.admit(c);
    if (typeof admission === 'string') throw new Error(`expected the row held by a gate, got ${admission}`);
    expect(gates.resume(admission, c, await admission.until)).toBe('not sent');
    expect(skipped).toEqual(['resumed']);
    expect(happened).toEqual(['a', 'b', 'a given back']);
  });
});

describe('the list', () => {
  const base: GateParts = {
    selection: { retryErrors: false },
    keyField: 'reference_id',
    counters: newCounters(),
    stop: { reason: undefined, request: () => undefined },
    frontier: undefined,
    sink: undefined,
    sample: undefined,
    output: undefined,
    sinkRoom: undefined,
    window: { enter: () => undefined, giveBack: () => undefined },
    spend: undefined,
  };
  const names = (p: Partial<GateParts>) => rowGates({ ...base, ...p }).map((g) => g.name);

  it('a plain run: the stop, the read, the window', () => {
    expect(names({})).toEqual(['stopped', 'read', 'window', 'stopped while waiting']);
  });

  it('every option: in the one order (ARCHITECTURE.md: The path of a row)', () => {
    const output = { done: rows(), retry: rows(), earlierLimit: null, journalEnds: { results: 0, errors: 0 } };
    expect(
      names({
        selection: { limit: 5, shard: { index: 1, count: 2 }, retryErrors: true },
        sink: { keys: new Map() },
        sample: { chosen: new Map() },
        output,
        sinkRoom: () => undefined,
        spend: new SpendMeter(prices, emptyCounts(), 1, 1),
      }),
    ).toEqual([
      'stopped',
      'limit',
      'read',
      'sink key',
      'sample',
      'shard',
      'resume',
      'retry errors',
      'sink behind',
      'window',
      'stopped while waiting',
      'spend',
    ]);
  });

  it("a job's worker: no resume gate (its chunks come without the rows the job committed; its folder's lines are answers, not commits)", () => {
    const output = { done: rows(1), retry: rows(), earlierLimit: null, journalEnds: { results: 0, errors: 0 } };
    expect(names({ output, sink: { keys: new Map() }, job: true })).toEqual([
      'stopped',
      'read',
      'sink key',
      'retry errors',
      'window',
      'stopped while waiting',
    ]);
    expect(names({ output, job: false })).toContain('resume');
  });

  it('counts a skip once under its counter and moves the resume point past it', () => {
    const counters = newCounters();
    const frontier = new FrontierTracker();
    const parts: GateParts = {
      ...base,
      counters,
      frontier,
      selection: { shard: { index: 1, count: 2 }, retryErrors: false },
      output: { done: rows(1), retry: rows(), earlierLimit: null, journalEnds: { results: 0, errors: 0 } },
    };
    const gates = new RowGates(rowGates(parts), (row, counter) => {
      counters[counter] += 1;
      frontier.done(row.row);
    });
    const verdicts = [1, 2, 3, 4].map((r) => gates.admit(candidate(r)));
    // The shard comes before the folder's done rows: row 1, done, counts as out of the shard when it is.
    const ours = (r: number) => shardOf(`K${r}`, r, 2) === 1;
    const outOfShard = [1, 2, 3, 4].filter((r) => !ours(r)).length;
    const resumed = ours(1) ? 1 : 0;
    expect(verdicts.filter((v) => v === 'not sent')).toHaveLength(resumed + outOfShard);
    expect([counters.read, counters.resumed, counters.outOfShard]).toEqual([4, resumed, outOfShard]);
    // The resume point moves over the rows skipped, up to the first row sent (not done yet).
    const firstSent = [2, 3, 4].find(ours) ?? 5;
    expect(frontier.point?.row).toBe(firstSent - 1);
  });
});
