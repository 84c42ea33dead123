/**
 * `.state/spend.json`'s slots: each state is written at its slot's start with its newline, and read back up to
 * the first newline, so a shorter state written over a longer one is read whole, and a slot an earlier release
 * padded with spaces is read too; the newer slot (by seq) wins.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILES } from '@bre-batch/formats/files';
import { emptyCounts } from '../../src/limits/spend.js';
import { readSpendHistory } from '../../src/output/spend-file.js';
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
