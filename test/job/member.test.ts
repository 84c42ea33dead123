/**
 * A worker's side of a job (src/job/member.ts) against a store whose answers the test holds back: a chunk lost
 * under one token is not the chunk claimed again under the next. A heartbeat under way (or a sink batch being
 * committed) when the worker's own lease lapsed and it claimed the same chunk anew answers "lost" for the old
 * token; the new claim must stand: its rows still handed to the run, the sink not told to drop it, and handed
 * back at the end under its own token. And a row handed to the run is sent only while its claim stands: not once
 * its chunk is known lost, and, past its lease by the worker's own clock (a stall), only if a heartbeat renews it.
 */
import { describe, expect, it } from 'vitest';
import type { FenceOutcome, HeldChunk } from '../../src/job/fence.js';
import { JobMember } from '../../src/job/member.js';
import type { ClaimedChunk, HeldReport, JobStore } from '../../src/job/store.js';
import type { InputRow } from '@bre-batch/core/types';
import { waitFor } from '../helpers/wait.js';

const ROWS = 4;

function claimOf(chunk: number, token: string): ClaimedChunk {
  return {
    chunk,
    token,
    firstRow: chunk * ROWS + 1,
    rows: ROWS,
    afterKey: null,
    byteStart: null,
    byteEnd: null,
    committed: null,
    prevSent: 0,
    takeover: token !== '1',
  };
}

/**
 * A store that hands out the claims it is given, one a call; while `holdBack`, a heartbeat reporting chunks is
 * answered when the test says, else at once (nothing lost). Every report is kept.
 */
class HeldBackStore {
  readonly claims: ClaimedChunk[] = [];
  readonly beats: { held: readonly HeldReport[]; answer: (r: { lost: number[]; done: number[] }) => void }[] = [];
  readonly reports: (readonly HeldReport[])[] = [];
  /** Rows sent again that each heartbeat reported, of the chunks held and of those done since the last. */
  readonly resent: number[] = [];
  holdBack = false;
  released: { chunk: number; token: string }[] | undefined;

  asStore(): JobStore {
    return {
      claim: async () => this.claims.shift(),
      unfinished: async () => 0,
      heartbeat: (
        _name: string,
        _w: unknown,
        held: readonly HeldReport[],
        _lease: number,
        doneResent: readonly { resent: number }[] = [],
      ) => {
        this.reports.push(held);
        this.resent.push([...held, ...doneResent].reduce((n, r) => n + r.resent, 0));
        return held.length === 0 || !this.holdBack
          ? Promise.resolve({ lost: [], done: [] })
          : new Promise((answer) => this.beats.push({ held, answer }));
      },
      release: async (_n: string, _w: string, held: { chunk: number; token: string }[]) => {
        this.released = held;
      },
      leave: async () => undefined,
      close: async () => undefined,
    } as unknown as JobStore;
  }
}

function rowsOf(c: ClaimedChunk): InputRow[] {
  return Array.from({ length: c.rows }, (_, i) => ({ row: c.firstRow + i, line: c.firstRow + i + 1, data: {} }));
}

async function* read(c: ClaimedChunk): AsyncGenerator<InputRow[]> {
  yield rowsOf(c);
}

function member(store: HeldBackStore, log: string[], heartbeatMs = 20, leaseClock?: () => number) {
  const heard = { held: [] as HeldChunk[], dropped: [] as number[] };
  const m = new JobMember({
    ...(leaseClock ? { leaseClock } : {}),
    store: store.asStore(),
    name: 'j',
    worker: 'w',
    address: null,
    leaseMs: 60_000,
    heartbeatMs,
    rowsDone: () => 0,
    log: (l) => log.push(l),
    fail: (err) => {
      throw err;
    },
  });
  m.attach({ hold: (c) => heard.held.push(c), drop: (c) => heard.dropped.push(c) });
  return { m, heard };
}

describe('a chunk lost under one token, claimed again under the next', () => {
  it('a heartbeat under way when the worker claimed its own lapsed chunk anew: the new claim stands', async () => {
    const store = new HeldBackStore();
    const log: string[] = [];
    const { m, heard } = member(store, log);
    store.claims.push(claimOf(5, '7'));
    store.holdBack = true;
    await m.start();
    const rows = m.rows(read);
    expect((await rows.next()).value.map((r: InputRow) => r.row)).toEqual([21, 22, 23, 24]);
    // A heartbeat reports chunk 5 under token 7, and its answer is held back.
    await waitFor(() => store.beats.length > 0, 10_000, 'a heartbeat reporting chunk 5');
    const beat = store.beats[0];
    expect(beat.held).toEqual([expect.objectContaining({ chunk: 5, token: '7' })]);
    // Meanwhile the lease lapsed and this worker claims chunk 5 again, under token 8.
    store.claims.push(claimOf(5, '8'));
    expect((await rows.next()).value.map((r: InputRow) => r.row)).toEqual([21, 22, 23, 24]);
    expect(heard.held.map((h) => [h.chunk, h.token])).toEqual([
      [5, '7'],
      [5, '8'],
    ]);
    // The heartbeat's answer for token 7: lost. Token 8's claim is not.
    store.holdBack = false;
    const before = store.reports.length;
    beat.answer({ lost: [5], done: [] });
    await waitFor(() => store.reports.length > before, 10_000, 'the next heartbeat');
    expect(store.reports.at(-1)).toEqual([expect.objectContaining({ chunk: 5, token: '8' })]);
    expect(heard.dropped).toEqual([]);
    expect(log.filter((l) => l.includes('lost chunk'))).toEqual([]);
    expect(m.stats.lost).toBe(0);
    // Handed back at the end under the token it holds.
    await m.close(true);
    expect(store.released).toEqual([{ chunk: 5, token: '8' }]);
  });

  it("a batch's outcome for the old token (the sink refused its rows) leaves the new claim; for the current token it loses it", async () => {
    const store = new HeldBackStore();
    const log: string[] = [];
    const { m, heard } = member(store, log);
    store.claims.push(claimOf(2, '3'), claimOf(2, '4'));
    await m.start();
    const rows = m.rows(read);
    await rows.next();
    await rows.next();
    const outcome = (token: string): FenceOutcome => ({
      lost: [{ chunk: 2, token }],
      done: [],
      refused: 1,
      jobDone: false,
    });
    m.outcome(outcome('3'));
    expect(heard.dropped).toEqual([]);
    expect(m.stats.lost).toBe(0);
    m.outcome(outcome('4'));
    expect(heard.dropped).toEqual([2]);
    expect(m.stats.lost).toBe(1);
    expect(log.some((l) => l.includes('lost chunk 2 (its rows were refused at commit)'))).toBe(true);
    await m.close(true);
    expect(store.released).toEqual([]);
  });
});

describe('rows sent again of a chunk that finishes between two heartbeats', () => {
  it('are reported by the next heartbeat (job status counts them), not dropped with the chunk', async () => {
    const store = new HeldBackStore();
    // No heartbeat but the first and the last: the chunk finishes between them.
    const { m } = member(store, [], 3_600_000);
    // Taken over from a holder that had handed its run all 4 rows: each is sent again.
    store.claims.push({ ...claimOf(1, '2'), prevSent: ROWS });
    await m.start();
    const rows = m.rows(read);
    expect((await rows.next()).value).toHaveLength(ROWS);
    m.outcome({ lost: [], done: [1], refused: 0, jobDone: true });
    await m.close(false);
    expect(m.stats.resent).toBe(ROWS);
    expect(store.resent.reduce((n, r) => n + r, 0)).toBe(ROWS);
  });
});

describe('a row handed to the run, asked about before each attempt is sent', () => {
  it("is sendable at once while its claim's lease runs; not once the chunk is lost", async () => {
    const store = new HeldBackStore();
    const { m } = member(store, [], 3_600_000);
    store.claims.push(claimOf(3, '1'));
    await m.start();
    const rows = m.rows(read);
    const [first, second] = (await rows.next()).value as InputRow[];
    expect(m.sendable(first)).toBe(true);
    // The sink's batch says another worker holds the chunk now.
    m.outcome({ lost: [{ chunk: 3, token: '1' }], done: [], refused: 1, jobDone: false });
    expect(await m.sendable(first)).toBe(false);
    expect(await m.sendable(second)).toBe(false);
    // A row the worker never handed out is not its to send either.
    expect(await m.sendable({ row: 99, line: 100, data: {} })).toBe(false);
    await m.close(false);
  });

  it("past its lease by the worker's clock (it was stalled), the database decides: renewed, sent; taken, not", async () => {
    const store = new HeldBackStore();
    let now = 0;
    const { m } = member(store, [], 3_600_000, () => now);
    store.claims.push(claimOf(1, '1'), claimOf(2, '1'));
    await m.start();
    const rows = m.rows(read);
    const [a] = (await rows.next()).value as InputRow[];
    const [b] = (await rows.next()).value as InputRow[];
    // The lease (60 s) less a third of it: 40 s from the claim by this clock.
    now = 39_999;
    expect(m.sendable(a)).toBe(true);
    now = 40_000;
    store.holdBack = true;
    const askedA = m.sendable(a);
    const askedB = m.sendable(b);
    expect(askedA).toBeInstanceOf(Promise);
    // One heartbeat answers both: chunk 1 renewed, chunk 2 taken by another worker.
    await waitFor(() => store.beats.length > 0, 10_000, 'a heartbeat asked for');
    expect(store.beats).toHaveLength(1);
    store.beats[0].answer({ lost: [2], done: [] });
    expect(await askedA).toBe(true);
    expect(await askedB).toBe(false);
    expect(store.beats).toHaveLength(1);
    // Renewed from when the heartbeat was asked for: sendable at once again.
    expect(m.sendable(a)).toBe(true);
    store.holdBack = false;
    await m.close(false);
  });

  it('a row of the claim lost is not sent, the same row of the chunk claimed anew is', async () => {
    const store = new HeldBackStore();
    const { m } = member(store, [], 3_600_000);
    store.claims.push(claimOf(4, '1'), claimOf(4, '2'));
    await m.start();
    const rows = m.rows(read);
    const [old] = (await rows.next()).value as InputRow[];
    m.outcome({ lost: [{ chunk: 4, token: '1' }], done: [], refused: 1, jobDone: false });
    const [anew] = (await rows.next()).value as InputRow[];
    expect(anew.row).toBe(old.row);
    expect(await m.sendable(old)).toBe(false);
    expect(m.sendable(anew)).toBe(true);
    await m.close(false);
  });
});
