/**
 * src/output/journal/compact.ts and packages/formats/src/journal-file.ts: a journal compacted and expanded in place,
 * each step's leftovers read by the readers' rule (X wins over X.gz; temps never read) and tidied by the next step;
 * the compacted file a standard gzip whose header keeps the plain file's size and identity; ranges of its
 * plain bytes read as from the plain file, by the readers and by the sink's tail.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compactFolder, expandFolder } from '../../../src/output/journal/compact.js';
import {
  inodeOf,
  journalForm,
  journalIdentity,
  journalLines,
  journalSize,
  openJournal,
} from '@bre-batch/formats/journal-file';
import { readNdjson } from '@bre-batch/formats/ndjson-file';
import { JournalTail } from '../../../src/output/sink/tail.js';
import { tempDir } from '../../helpers/temp.js';

/** A results journal of `n` lines, some long enough to span the gunzip's chunks. */
function folder(n = 3000): { dir: string; path: string; text: string } {
  const dir = tempDir();
  mkdirSync(join(dir, '.state'));
  const lines: string[] = [];
  for (let i = 1; i <= n; i += 1)
    lines.push(JSON.stringify({ row: i, key: `K${i}`, stages: { s: { text: 'x'.repeat(i % 7 === 0 ? 900 : 40) } } }));
  const text = `${lines.join('\n')}\n`;
  const path = join(dir, 'results.ndjson');
  writeFileSync(path, text);
  chmodSync(path, 0o600);
  return { dir, path, text };
}

async function collect(it: AsyncIterable<Buffer> | undefined): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of it ?? []) parts.push(c);
  return Buffer.concat(parts).toString('utf8');
}

describe('compaction in place', () => {
  it('X -> X.gz, mode kept, a standard gzip whose header keeps the plain size and identity', async () => {
    const { dir, path, text } = folder();
    const identity = inodeOf(path);
    const [f] = await compactFolder(dir);
    expect(f).toMatchObject({ name: 'results.ndjson', bytes: Buffer.byteLength(text) });
    expect(f.compactedBytes).toBe(statSync(`${path}.gz`).size);
    expect(f.compactedBytes).toBeLessThan(f.bytes / 5);
    expect(existsSync(path)).toBe(false);
    expect(statSync(`${path}.gz`).mode & 0o777).toBe(0o600);
    expect(gunzipSync(readFileSync(`${path}.gz`)).toString('utf8')).toBe(text);
    expect(journalForm(path)).toBe('gzip');
    expect(journalSize(path)).toBe(Buffer.byteLength(text));
    expect(journalIdentity(path)).toBe(identity);
  });

  it('readers see the same lines, and any range of the plain bytes', async () => {
    const { dir, path, text } = folder();
    const plainRows: unknown[] = [];
    for await (const v of readNdjson<{ row: number }>(path)) plainRows.push(v?.row);
    await compactFolder(dir);
    const rows: unknown[] = [];
    for await (const v of readNdjson<{ row: number }>(path)) rows.push(v?.row);
    expect(rows).toEqual(plainRows);
    let n = 0;
    for await (const l of journalLines(path)) if (l.text !== '') n += 1;
    expect(n).toBe(3000);
    const bytes = Buffer.from(text);
    for (const [start, end] of [
      [0, 10],
      [1000, 70_000],
      [150_000, bytes.length],
      [bytes.length - 5, bytes.length + 100],
    ])
      expect(await collect(openJournal(path, { start, end }))).toBe(
        bytes.subarray(start, Math.min(end, bytes.length)).toString('utf8'),
      );
  });

  it("the sink's tail reads a compacted journal by plain positions, forwards and from behind", async () => {
    const { dir, path, text } = folder();
    await compactFolder(dir);
    const size = journalSize(path);
    const tail = new JournalTail(path, 0);
    const lines: string[] = [];
    for (let c = await tail.read(size, 64 * 1024); c.lines.length > 0; c = await tail.read(size, 64 * 1024)) {
      lines.push(...c.lines);
      tail.advance(c.next);
    }
    expect(lines).toEqual(text.trimEnd().split('\n'));
    // A position behind the last read (another tail, the transactions' prefix) starts over.
    const again = await tail.read(size, 1000, 0);
    expect(again.lines[0]).toBe(text.split('\n')[0]);
    await tail.close();
  });

  it('expansion puts X back, mode kept, X.gz removed', async () => {
    const { dir, path, text } = folder();
    await compactFolder(dir);
    expect(await expandFolder(dir)).toEqual(['results.ndjson']);
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(existsSync(`${path}.gz`)).toBe(false);
    expect(await expandFolder(dir)).toEqual([]);
  });

  it('an empty journal is left plain (its gzip header would be larger)', async () => {
    const { dir } = folder(1);
    writeFileSync(join(dir, 'errors.ndjson'), '');
    expect((await compactFolder(dir)).map((f) => f.name)).toEqual(['results.ndjson']);
    expect(journalForm(join(dir, 'errors.ndjson'))).toBe('plain');
  });
});

describe('a step cut short', () => {
  it('both forms whole (killed between the rename and the removal): X is read; the next step keeps one', async () => {
    const { dir, path, text } = folder();
    await compactFolder(dir);
    // X whole beside X.gz, X one line longer on purpose: reading X.gz instead would show.
    const newer = `${text}{"row":3001,"key":"K3001","stages":{}}\n`;
    writeFileSync(path, newer);
    expect(journalForm(path)).toBe('plain');
    expect(journalSize(path)).toBe(Buffer.byteLength(newer));
    expect(await collect(openJournal(path))).toBe(newer);
    await compactFolder(dir);
    expect([existsSync(path), existsSync(`${path}.gz`)]).toEqual([false, true]);
    expect(gunzipSync(readFileSync(`${path}.gz`)).toString('utf8')).toBe(newer);
    writeFileSync(path, text);
    expect(await expandFolder(dir)).toEqual([]);
    expect([existsSync(path), existsSync(`${path}.gz`)]).toEqual([true, false]);
  });

  it('a half-written temp is never read, and removed by the next step', async () => {
    const { dir, path, text } = folder();
    writeFileSync(`${path}.gz.tmp`, 'half a gzip');
    expect(await collect(openJournal(path))).toBe(text);
    await compactFolder(dir);
    expect(existsSync(`${path}.gz.tmp`)).toBe(false);
    writeFileSync(`${path}.gunzip.tmp`, text.slice(0, 100));
    expect(journalForm(path)).toBe('gzip');
    expect(await collect(openJournal(path))).toBe(text);
    await expandFolder(dir);
    expect(existsSync(`${path}.gunzip.tmp`)).toBe(false);
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it('no journal at all: nothing to read, size 0, no identity', async () => {
    const dir = tempDir();
    const path = join(dir, 'results.ndjson');
    expect([journalForm(path), journalSize(path), journalIdentity(path), openJournal(path)]).toEqual([
      undefined,
      0,
      null,
      undefined,
    ]);
  });
});
