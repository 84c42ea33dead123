/**
 * Pass 2 of the streaming join: bucket by bucket, load run A's and run B's lines of that bucket, pair them by
 * key, and hand every line to `visit` exactly once (a matched pair together). Keys that occur more than once in
 * either run are not paired at all (which line would be "the" row is unknowable): all their lines are handed
 * over as `duplicate`. Lines without a key are `no_key`. Within a bucket, lines are visited and written in A's row
 * order (B's for lines only in B), so a small comparison (one bucket) comes out in input order, and the figures
 * (the bootstrap's units, the sums) do not depend on the order answers reached the journal: the same rows give the
 * same figures however the run went (a resume, a busy machine).
 */
import { Readable } from 'node:stream';
import { openJournal } from '@bre-batch/formats/journal-file';
import { readLines } from '@bre-batch/formats/input/lines';
import type { TextSink } from './files.js';
import { MAX_RESULT_LINE_BYTES, parseResultLine, type ResultLine } from './folder.js';

type MatchClass = 'matched' | 'only_a' | 'only_b' | 'duplicate' | 'no_key';

export interface JoinedLine {
  readonly key: string | null;
  readonly match: MatchClass;
  readonly a: ResultLine | null;
  readonly b: ResultLine | null;
}

export interface JoinCounts {
  matched: number;
  onlyA: number;
  onlyB: number;
  /** Distinct keys that occur more than once in A / in B / in either. */
  duplicateKeysA: number;
  duplicateKeysB: number;
  duplicateKeys: number;
  /** Lines of A / B whose key is a duplicate key (in either run): excluded from the figures. */
  duplicateRowsA: number;
  duplicateRowsB: number;
  noKeyA: number;
  noKeyB: number;
  onlyAKeys: string[];
  onlyBKeys: string[];
  duplicateSample: string[];
}

export interface JoinOptions {
  readonly aPaths: readonly string[];
  readonly bPaths: readonly string[];
  /** Returns the compare.csv line for a joined line (or '' for none). */
  readonly visit: (line: JoinedLine) => string;
  readonly out: TextSink;
  /** Most keys listed for only-A, only-B and duplicates. */
  readonly listCap: number;
}

async function loadBucket(path: string): Promise<{ byKey: Map<string, ResultLine[]>; noKey: ResultLine[] }> {
  const byKey = new Map<string, ResultLine[]>();
  const noKey: ResultLine[] = [];
  // A bucket file, or with one bucket the results journal itself, plain or compacted
  // (packages/formats/src/journal-file.ts).
  for await (const line of readLines(openJournal(path) ?? Readable.from([]), MAX_RESULT_LINE_BYTES)) {
    if (line.tooLong || line.text.trim() === '') continue;
    const parsed = parseResultLine(line.text);
    // Malformed lines were counted in pass 1.
    if (!parsed) continue;
    if (parsed.key === null) {
      noKey.push(parsed);
      continue;
    }
    const list = byKey.get(parsed.key);
    if (list) list.push(parsed);
    else byKey.set(parsed.key, [parsed]);
  }
  return { byKey, noKey };
}

export async function joinBuckets(opts: JoinOptions): Promise<JoinCounts> {
  if (opts.aPaths.length !== opts.bPaths.length)
    throw new RangeError('Expected the same number of buckets for A and B');
  const c: JoinCounts = {
    matched: 0,
    onlyA: 0,
    onlyB: 0,
    duplicateKeysA: 0,
    duplicateKeysB: 0,
    duplicateKeys: 0,
    duplicateRowsA: 0,
    duplicateRowsB: 0,
    noKeyA: 0,
    noKeyB: 0,
    onlyAKeys: [],
    onlyBKeys: [],
    duplicateSample: [],
  };
  const cap = opts.listCap;
  for (let i = 0; i < opts.aPaths.length; i += 1) {
    const A = await loadBucket(opts.aPaths[i]);
    const B = await loadBucket(opts.bPaths[i]);
    const joined: { order: number; tie: number; j: JoinedLine }[] = [];
    const emit = (j: JoinedLine): void => {
      joined.push({
        order: j.a?.row ?? j.b?.row ?? Number.MAX_SAFE_INTEGER,
        tie: j.a ? (j.b?.row ?? 0) : 1e15 + (j.b?.row ?? 0),
        j,
      });
    };
    for (const r of A.noKey) {
      c.noKeyA += 1;
      emit({ key: null, match: 'no_key', a: r, b: null });
    }
    for (const r of B.noKey) {
      c.noKeyB += 1;
      emit({ key: null, match: 'no_key', a: null, b: r });
    }
    for (const [key, la] of A.byKey) {
      const lb = B.byKey.get(key);
      if (la.length > 1 || (lb && lb.length > 1)) {
        c.duplicateKeys += 1;
        if (la.length > 1) c.duplicateKeysA += 1;
        if (lb && lb.length > 1) c.duplicateKeysB += 1;
        if (c.duplicateSample.length < cap) c.duplicateSample.push(key);
        for (const r of la) {
          c.duplicateRowsA += 1;
          emit({ key, match: 'duplicate', a: r, b: null });
        }
        for (const r of lb ?? []) {
          c.duplicateRowsB += 1;
          emit({ key, match: 'duplicate', a: null, b: r });
        }
      } else if (lb) {
        c.matched += 1;
        emit({ key, match: 'matched', a: la[0], b: lb[0] });
      } else {
        c.onlyA += 1;
        if (c.onlyAKeys.length < cap) c.onlyAKeys.push(key);
        emit({ key, match: 'only_a', a: la[0], b: null });
      }
    }
    for (const [key, lb] of B.byKey) {
      if (A.byKey.has(key)) continue;
      if (lb.length > 1) {
        c.duplicateKeys += 1;
        c.duplicateKeysB += 1;
        if (c.duplicateSample.length < cap) c.duplicateSample.push(key);
        for (const r of lb) {
          c.duplicateRowsB += 1;
          emit({ key, match: 'duplicate', a: null, b: r });
        }
      } else {
        c.onlyB += 1;
        if (c.onlyBKeys.length < cap) c.onlyBKeys.push(key);
        emit({ key, match: 'only_b', a: null, b: lb[0] });
      }
    }
    joined.sort((x, y) => x.order - y.order || x.tie - y.tie);
    for (const { j } of joined) {
      const text = opts.visit(j);
      if (text !== '') opts.out.write(text);
    }
  }
  return c;
}
