/**
 * A job's file input (issue 30): what the split costs the worker that makes it, and what reading a file a chunk
 * at a time costs the workers, each beside reading the file whole as a run does (the same reader, no calls),
 * measured in turn in one process: a CSV of location rows whose every third row has a quoted note over lines.
 * The median of `rounds` rounds of each.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRange, splitFile, type RangeReading } from '../src/input/ranges.js';
import { readRowBatches } from '@bre-batch/formats/input/read';

export interface JobSplitFigures {
  readonly rows: number;
  readonly bytes: number;
  readonly chunks: number;
  readonly chunk_rows: number;
  /** Seconds, medians. */
  readonly read_whole_s: number;
  readonly split_s: number;
  readonly read_chunks_s: number;
  /** split_s / read_whole_s, read_chunks_s / read_whole_s. */
  readonly split_ratio: number;
  readonly chunks_ratio: number;
}

function csv(path: string, rows: number): number {
  const out = ['reference_id,user_id,lead_id,latitude,longitude,note'];
  for (let i = 1; i <= rows; i += 1) {
    const id = String(i).padStart(7, '0');
    const note = i % 3 === 0 ? '"called back,\r\nasked for\nthe statement"' : 'plain';
    out.push(`LOC-${id},user${id},lead${id},${(10 + (i % 2000) / 100).toFixed(4)},77.5000,${note}`);
  }
  const text = `${out.join('\n')}\n`;
  writeFileSync(path, text);
  return Buffer.byteLength(text);
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const r3 = (x: number) => Math.round(x * 1000) / 1000;

async function seconds(work: () => Promise<number>, expect: number): Promise<number> {
  const t0 = performance.now();
  const n = await work();
  if (n !== expect) throw new Error(`expected ${expect} rows, read ${n}`);
  return (performance.now() - t0) / 1000;
}

export async function benchJobSplit(o: {
  dir: string;
  rows: number;
  chunkRows: number;
  rounds: number;
}): Promise<JobSplitFigures> {
  const path = join(o.dir, 'job-split.csv');
  const bytes = csv(path, o.rows);
  const reading: RangeReading = {
    format: 'csv',
    encoding: 'utf-8',
    delimiter: ',',
    columns: ['reference_id', 'user_id', 'lead_id', 'latitude', 'longitude', 'note'],
  };
  const whole = async () => {
    let n = 0;
    for await (const b of readRowBatches(path)) n += b.length;
    return n;
  };
  const ranges = await splitFile(path, reading, o.chunkRows);
  const chunks = async () => {
    let n = 0;
    for (const r of ranges) for await (const b of readRange(path, reading, r)) n += b.length;
    return n;
  };
  const t = { whole: [] as number[], split: [] as number[], chunks: [] as number[] };
  for (let i = 0; i < o.rounds; i += 1) {
    t.whole.push(await seconds(whole, o.rows));
    t.split.push(
      await seconds(async () => (await splitFile(path, reading, o.chunkRows)).reduce((n, r) => n + r.rows, 0), o.rows),
    );
    t.chunks.push(await seconds(chunks, o.rows));
  }
  const w = median(t.whole);
  const s = median(t.split);
  const c = median(t.chunks);
  return {
    rows: o.rows,
    bytes,
    chunks: ranges.length,
    chunk_rows: o.chunkRows,
    read_whole_s: r3(w),
    split_s: r3(s),
    read_chunks_s: r3(c),
    split_ratio: r3(s / w),
    chunks_ratio: r3(c / w),
  };
}
