/**
 * A file input's chunks as a worker reads them (src/job/file-chunks.ts): refused formats say what to do; a
 * claimed chunk's rows are its range's; a file whose size or modification time moved since the worker hashed
 * it, or whose range no longer holds its rows, is SOURCE_CHANGED, not rows read out of another file.
 */
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isBreError } from '@bre-batch/core/errors';
import { checkSplittable, fileChunkRows, fileSeen, splitFileChunks } from '../../src/job/index.js';
import type { ClaimedChunk } from '../../src/job/index.js';
import type { RangeReading } from '../../src/input/ranges.js';
import type { InputRow } from '@bre-batch/core/types';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('bre-file-chunks-');
const reading: RangeReading = { format: 'csv', encoding: 'utf-8', delimiter: ',', columns: ['k', 'v'] };

async function rowsOf(gen: AsyncIterable<InputRow[]>): Promise<InputRow[]> {
  const out: InputRow[] = [];
  for await (const b of gen) out.push(...b);
  return out;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return isBreError(err) ? `${err.code}: ${err.message}` : `not a BreError: ${String(err)}`;
  }
  return 'no error';
}

function claimed(path: string, n: number): Promise<ClaimedChunk[]> {
  return splitFileChunks(path, reading, n).then((plans) =>
    plans.map((p, i) => ({ ...p, chunk: i, token: '1', committed: null, prevSent: 0, takeover: false })),
  );
}

describe('a file input of a job', () => {
  it('gzip and UTF-16 are refused saying what to do instead', () => {
    expect(() => checkSplittable('a.csv.gz', 'csv.gz', null)).toThrow(/gunzip -k a\.csv\.gz.*--shard K\/N/);
    expect(() => checkSplittable('a.csv', 'csv', 'utf-16le')).toThrow(/iconv -f UTF-16LE -t UTF-8 a\.csv/);
    expect(() => checkSplittable('a.csv', 'csv', 'windows-1252')).not.toThrow();
  });

  it("a claimed chunk's rows are its range's, with the file's rows and lines", async () => {
    const path = join(dir, 'ok.csv');
    writeFileSync(path, 'k,v\n1,"a\nb"\n2,c\n3,d\n');
    const chunks = await claimed(path, 2);
    const seen = fileSeen(path);
    expect(await rowsOf(fileChunkRows(path, reading, seen, chunks[1]))).toEqual([
      { row: 3, line: 5, data: { k: '3', v: 'd' } },
    ]);
  });

  it('a file changed after the worker joined: SOURCE_CHANGED, before any row of it is read', async () => {
    const path = join(dir, 'moved.csv');
    writeFileSync(path, 'k,v\n1,a\n2,b\n3,c\n');
    const chunks = await claimed(path, 2);
    const seen = fileSeen(path);
    writeFileSync(path, 'k,v\n1,a\n2,b\n3,c\n4,d\n');
    expect(await codeOf(rowsOf(fileChunkRows(path, reading, seen, chunks[0])))).toMatch(
      /^SOURCE_CHANGED: the input .*moved\.csv changed after the job was split \(16 bytes when this worker joined, 20 now\)/,
    );
    // The same size, rewritten: its modification time tells.
    writeFileSync(path, 'k,v\n1,a\n2,b\n3,x\n');
    utimesSync(path, new Date(), new Date(seen.mtimeMs + 5000));
    const same = { ...seen, size: 16 };
    expect(await codeOf(rowsOf(fileChunkRows(path, reading, same, chunks[0])))).toMatch(
      /^SOURCE_CHANGED: .*its modification time moved/,
    );
  });

  it('a range that no longer holds its rows (the file cut short, seen as it is now): SOURCE_CHANGED', async () => {
    const path = join(dir, 'short.csv');
    writeFileSync(path, 'k,v\n1,a\n2,b\n3,c\n4,d\n');
    const chunks = await claimed(path, 2);
    writeFileSync(path, 'k,v\n1,a\n2,b\n3,c\n');
    expect(await codeOf(rowsOf(fileChunkRows(path, reading, fileSeen(path), chunks[1])))).toMatch(
      /^SOURCE_CHANGED: .*chunk 1: rows 3-4 \(from line 4\) ended 1 row short/,
    );
  });
});
