/**
 * `.state/spend.json`'s slots: each state is written at its slot's start with its newline, and read back up to
 * the first newline, so a shorter state written over a longer one is read whole, and a slot an earlier release
 * padded with spaces is read too; the newer slot (by seq) wins. A session's writer: whenever the process dies
 * (the file read back at any moment, as the next session reads it), the count is at least what the server may
 * bill, and at most the reserve and the attempts out above it; it writes once per RESERVE_ATTEMPTS attempts, not
 * per change; its end writes the exact counts.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILES } from '@bre-batch/formats/files';
import type { ServiceName } from '@bre-batch/core/types';
import { emptyCounts, SpendMeter, type Prices } from '../../src/limits/spend.js';
import { readSpendHistory, RESERVE_ATTEMPTS, SpendFile } from '../../src/output/spend-file.js';
import { tempDir } from '../helpers/temp.js';

const SLOT = 4096;

function state(seq: number, workflowMicros: number, sessions = 0): string {
  const before = emptyCounts();
  const now = {
    ...emptyCounts(),
    pending: { workflow: 0, bureau: 0, account: 0 },
    pending_micros: { workflow: 0, bureau: 0, account: 0 },
    rows: 1,
  };
  now.micros.workflow = workflowMicros;
  now.billed.workflow = 1;
  const s = Array.from({ length: sessions }, () => ({ rows: 1, micros: 1, attempts: 1, billed: 1 }));
  return JSON.stringify({ v: 1, seq, currency: 'EUR', before, sessions: s, now });
}

function folderWith(slot0: string, slot1: string): string {
  const dir = tempDir('bre-spend-slots-');
  mkdirSync(join(dir, '.state'), { recursive: true });
  const buf = Buffer.alloc(2 * SLOT, 0x20);
  buf.write(slot0, 0, 'utf8');
  buf.write(slot1, SLOT, 'utf8');
  writeFileSync(join(dir, FILES.spend), buf);
  return dir;
}

describe('the spend file', () => {
  it("reads a shorter state written over a longer one up to its newline, not the longer one's tail", () => {
    const longer = state(1, 100, 30);
    const shorter = state(3, 300);
    expect(shorter.length).toBeLessThan(longer.length);
    // Slot 1 held seq 1 (long); seq 3 was written over it: its newline, then what is left of the longer one.
    const slot1 = `${shorter}\n${longer.slice(shorter.length + 1)}\n`;
    const dir = folderWith(`${state(2, 200)}\n`, slot1);
    expect(readSpendHistory(dir).before.micros.workflow).toBe(300);
  });

  it('reads a slot an earlier release padded with spaces, and takes the newer slot', () => {
    const dir = folderWith(`${state(4, 400).padEnd(SLOT - 1, ' ')}\n`, `${state(3, 300)}\n`);
    expect(readSpendHistory(dir).before.micros.workflow).toBe(400);
  });

  it('a torn newer state (no newline, cut) is passed over for the other slot', () => {
    const torn = state(5, 500).slice(0, 40);
    const dir = folderWith(`${state(4, 400)}\n`, torn);
    expect(readSpendHistory(dir).before.micros.workflow).toBe(400);
  });
});

describe("a session's writer of the spend file", () => {
  // Two workflows at different prices and the bureau at its own: the reserve is at each service's dearest.
  const prices: Prices = {
    currency: 'EUR',
    service: { workflow: 50_000, bureau: 20_000 },
    workflow: { location_bre: 70_000 },
    billed: new Set(['2xx', '5xx', 'timeout']),
  };
  const priceOf = (svc: ServiceName, i: number) => (svc === 'bureau' ? 20_000 : i % 3 === 0 ? 70_000 : 50_000);

  /** The newest slot's seq: how many times the state was written. */
  const writes = (dir: string) => {
    const buf = readFileSync(join(dir, FILES.spend));
    const seqs = [0, 4096].map((at) => {
      const end = buf.indexOf(0x0a, at);
      return end === -1 || end > at + 4096 ? 0 : (JSON.parse(buf.subarray(at, end).toString('utf8')).seq as number);
    });
    return Math.max(...seqs);
  };

  it('read back at any moment (a kill -9), counts at least what may be billed, at most the reserve and the attempts out above it', () => {
    const dir = tempDir('bre-spend-kill-');
    mkdirSync(join(dir, '.state'), { recursive: true });
    const meter = new SpendMeter(prices, emptyCounts(), undefined, 120_000);
    const failures: Error[] = [];
    const file = SpendFile.open(
      dir,
      meter,
      readSpendHistory(dir),
      () => 0,
      (e) => failures.push(e),
    );
    // A seeded walk of attempts starting and ending (up to 16 out at once), answers billed or not.
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const out: { svc: ServiceName; price: number }[] = [];
    let checks = 0;
    for (let i = 0; i < 2_000; i += 1) {
      if (out.length < 16 && (out.length === 0 || random() < 0.55)) {
        const svc: ServiceName = random() < 0.7 ? 'workflow' : 'bureau';
        const price = priceOf(svc, i);
        meter.start(svc, price);
        out.push({ svc, price });
      } else {
        const a = out.splice(Math.floor(random() * out.length), 1)[0];
        meter.end(a.svc, a.price, random() < 0.8 ? 200 : 400);
      }
      if (i % 7 !== 0) continue;
      const disk = readSpendHistory(dir).before;
      for (const svc of ['workflow', 'bureau'] as const) {
        const mayBill = meter.session.billed[svc] + meter.pending[svc];
        const mayBillMicros = meter.session.micros[svc] + meter.pendingMicros[svc];
        expect(disk.billed[svc]).toBeGreaterThanOrEqual(mayBill);
        expect(disk.micros[svc]).toBeGreaterThanOrEqual(mayBillMicros);
        expect(disk.billed[svc]).toBeLessThanOrEqual(mayBill + RESERVE_ATTEMPTS + 16);
      }
      checks += 1;
    }
    expect(checks).toBeGreaterThan(250);
    // No timer ran in this synchronous walk: every write was one the reserve called for.
    const attempts = meter.session.attempts.workflow + meter.session.attempts.bureau;
    expect(writes(dir)).toBeLessThanOrEqual(1 + Math.ceil(attempts / RESERVE_ATTEMPTS) + 1);
    expect(writes(dir)).toBeGreaterThan(attempts / RESERVE_ATTEMPTS / 2);
    for (const a of out.splice(0)) meter.end(a.svc, a.price, 200);
    file.close();
    // The end: the exact counts, no reserve.
    const end = readSpendHistory(dir).before;
    expect(end.billed).toEqual({ ...meter.session.billed });
    expect(end.micros).toEqual({ ...meter.session.micros });
    expect(failures).toEqual([]);
  });

  it('a session killed before its first call leaves its reserve counted, and the earlier sessions once', () => {
    const dir = tempDir('bre-spend-first-');
    mkdirSync(join(dir, '.state'), { recursive: true });
    const first = new SpendMeter(prices, emptyCounts(), undefined, 120_000);
    const f1 = SpendFile.open(
      dir,
      first,
      readSpendHistory(dir),
      () => 0,
      () => undefined,
    );
    first.start('workflow', 50_000);
    first.end('workflow', 50_000, 200);
    f1.close();
    // The second session opens (its reserve written) and dies before it sends anything.
    const history = readSpendHistory(dir);
    expect(history.before.billed.workflow).toBe(1);
    SpendFile.open(
      dir,
      new SpendMeter(prices, history.before, undefined, 120_000),
      history,
      () => 0,
      () => undefined,
    );
    const after = readSpendHistory(dir).before;
    expect(after.billed).toEqual({ workflow: 1 + RESERVE_ATTEMPTS, bureau: RESERVE_ATTEMPTS, account: 0 });
    expect(after.micros).toEqual({
      workflow: 50_000 + RESERVE_ATTEMPTS * 70_000,
      bureau: RESERVE_ATTEMPTS * 20_000,
      account: 0,
    });
  });
});
