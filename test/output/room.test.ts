/** The output's size and the disk's room (issue 24): the pure estimate, its words, and statfs. */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  assumedRowBytes,
  estimateRoom,
  formatBytes,
  freeBytes,
  journalBytesIn,
  roomWarning,
} from '../../src/output/room.js';
import { compactFolder } from '../../src/output/journal/compact.js';
import { tempDir } from '../helpers/temp.js';

describe('formatBytes', () => {
  it.each([
    [0, '0 B'],
    [999, '999 B'],
    [1000, '1.0 KB'],
    [1500, '1.5 KB'],
    [123_456, '123 KB'],
    [5.7e9, '5.7 GB'],
    [2.5e12, '2.5 TB'],
    [9e18, '9000 PB'],
  ])('%i -> %s', (n, text) => expect(formatBytes(n)).toBe(text));
});

describe('estimateRoom', () => {
  const both = new Set(['csv', 'parquet'] as const);
  it.each([
    // rows, done, bytes a row, formats -> journal, end files
    [1000, 0, 1000, both, 1_000_000, 900_000],
    [1000, 0, 1000, new Set(['csv'] as const), 1_000_000, 600_000],
    [1000, 0, 1000, new Set(['parquet'] as const), 1_000_000, 300_000],
    // the end files are rebuilt for the rows done before too
    [1000, 3000, 1000, both, 1_000_000, 3_600_000],
    // nothing left to do: only the end files
    [0, 500, 100, both, 0, 45_000],
    [-5, 0, 100, both, 0, 0],
  ] as const)(
    '%i rows (%i done) at %i B: journal %i, end files %i',
    (rows, doneRows, bytesPerRow, formats, journal, end) => {
      const e = estimateRoom({ rows, doneRows, bytesPerRow, measured: true, formats });
      expect(e.journalBytes).toBeCloseTo(journal, 6);
      expect(e.endBytes).toBeCloseTo(end, 6);
      expect(e.totalBytes).toBeCloseTo(journal + end, 6);
    },
  );

  it.each([
    // rows, done, bytes a row, keep -> left journal, left in all (the journal compacted to a twentieth unless kept,
    // and the end files once each: 0.3 of the journal per format)
    [1000, 0, 1000, false, 50_000, 650_000],
    [1000, 3000, 1000, false, 200_000, 2_600_000],
    [1000, 0, 1000, true, 1_000_000, 1_600_000],
  ] as const)(
    'left once finished: %i rows (%i done) at %i B, --keep-journal %s: journal %i, all %i',
    (rows, doneRows, bytesPerRow, keepJournal, journal, all) => {
      const e = estimateRoom({ rows, doneRows, bytesPerRow, measured: true, formats: both, keepJournal });
      expect(e.leftJournalBytes).toBeCloseTo(journal, 6);
      expect(e.leftBytes).toBeCloseTo(all, 6);
      expect(e.keepJournal).toBe(keepJournal);
    },
  );

  it("bytes a row before any row is written: the sum of the stages' typical bytes", () => {
    expect(assumedRowBytes(['workflow'])).toBe(1500);
    expect(assumedRowBytes(['bureau', 'workflow'])).toBe(2000);
    expect(assumedRowBytes([])).toBe(0);
  });
});

describe('roomWarning', () => {
  const e = estimateRoom({ rows: 2_000_000, bytesPerRow: 820, measured: true, formats: new Set(['csv', 'parquet']) });
  it('says nothing when the disk has the room', () => {
    expect(roomWarning(e, e.totalBytes, '/out')).toBeUndefined();
  });
  it('one line naming the folder, the room, the need and what to do', () => {
    expect(roomWarning(e, 1e9, '/data/out/night')).toBe(
      "warning: the disk of /data/out/night has 1.0 GB free, and this run's output needs about 3.1 GB " +
        '(2,000,000 rows at 820 B a row: 1.6 GB of journal, then 1.5 GB for the end files): free some room or choose another --out (a run stopped by a full disk resumes when re-run)',
    );
  });
});

describe('the disk and the folder', () => {
  it('freeBytes: the room of the nearest folder that exists', async () => {
    const dir = tempDir();
    const free = await freeBytes(join(dir, 'not', 'yet'));
    expect(free).toBeGreaterThan(0);
  });

  it('journalBytesIn: the journals only, not the end files', () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.state'));
    writeFileSync(join(dir, 'results.ndjson'), 'x'.repeat(100));
    writeFileSync(join(dir, 'errors.ndjson'), 'x'.repeat(20));
    writeFileSync(join(dir, '.state', 'transactions.ndjson'), 'x'.repeat(3));
    writeFileSync(join(dir, 'results.csv'), 'x'.repeat(1000));
    expect(journalBytesIn(dir)).toBe(123);
    expect(journalBytesIn(join(dir, 'none'))).toBe(0);
  });

  it('journalBytesIn: a compacted journal counts at its plain size (what a row takes while a run writes it)', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.state'));
    writeFileSync(join(dir, 'results.ndjson'), `${'{"row":1,"key":"a","stages":{}}\n'.repeat(100)}`);
    writeFileSync(join(dir, 'errors.ndjson'), 'x'.repeat(20));
    const plain = journalBytesIn(dir);
    await compactFolder(dir);
    expect(existsSync(join(dir, 'results.ndjson'))).toBe(false);
    expect(journalBytesIn(dir)).toBe(plain);
  });
});
