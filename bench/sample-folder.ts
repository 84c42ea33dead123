/**
 * A sampled output folder made from a full run's folder, as `bre-batch run --sample-share P --stratify-by ...`
 * writes one (the format fixed for both branches of issue 25: manifest.json `sample`, `stratum` and `weight` on
 * every results and errors line of a sampled row), by the same selection rule: within each stratum, the n_h keys
 * with the smallest sha256(seed + "\0" + key), n_h = round(P·N_h) half up, at least min(2, N_h). A sandbox run
 * answers a row the same whether it is run alone or among all, so the sampled folder holds exactly what a
 * sampled run would.
 *
 * The compare tests use it to make sampled folders, and the coverage benchmark (bench/sample-coverage.ts) to
 * draw 200 samples of one full run without calling the sandbox 200 times.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { periodOf, type PeriodUnit } from '../src/input/period.js';
import { readRows } from '../src/input/read.js';

export interface StratifyBy {
  readonly column: string;
  readonly group: PeriodUnit | null;
}

export interface SampleDesignSpec {
  readonly seed: string;
  readonly share: number;
  readonly stratifyBy: readonly StratifyBy[];
}

export interface InputKeys {
  /** Per data row: its key and its stratum values (null for missing). */
  readonly rows: readonly { readonly row: number; readonly key: string; readonly values: readonly (string | null)[] }[];
}

/** Reads the input's keys and stratification values once (the counting pass of `run --sample`). */
export async function readInputKeys(input: string, keyColumn: string, by: readonly StratifyBy[]): Promise<InputKeys> {
  const rows: { row: number; key: string; values: (string | null)[] }[] = [];
  for await (const r of readRows(input, {})) {
    if (r.readError) continue;
    const key = r.data[keyColumn];
    if (typeof key !== 'string' || key === '') continue;
    const values = by.map((b) => {
      const v = r.data[b.column];
      if (b.group) return periodOf(v, b.group);
      const text = v === undefined || v === null ? '' : String(v).trim();
      return text === '' ? null : text;
    });
    rows.push({ row: r.row, key, values });
  }
  return { rows };
}

export interface Selection {
  /** The manifest's `sample` object. */
  readonly block: Record<string, unknown> & { readonly population: number; readonly sampled: number; readonly strata: readonly { name: string; population: number; sample: number }[] };
  /** Sampled key -> its stratum name and weight. */
  readonly chosen: ReadonlyMap<string, { readonly stratum: string; readonly weight: number }>;
}

function rank(seed: string, key: string): string {
  return createHash('sha256').update(`${seed}\u0000${key}`, 'utf8').digest('hex');
}

/** The sample the selection rule takes from the input's keys. */
export function selectSample(keys: InputKeys, spec: SampleDesignSpec): Selection {
  const strata = new Map<string, { values: (string | null)[]; keys: string[] }>();
  for (const r of keys.rows) {
    const name = r.values.map((v) => v ?? '(missing)').join('|');
    const s = strata.get(name) ?? { values: [...r.values], keys: [] };
    s.keys.push(r.key);
    strata.set(name, s);
  }
  const chosen = new Map<string, { stratum: string; weight: number }>();
  const list = [...strata.entries()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)).map(([name, s]) => {
    const N = s.keys.length;
    const n = Math.min(N, Math.max(Math.min(2, N), Math.floor(spec.share * N + 0.5)));
    const ranked = s.keys.map((k) => ({ k, r: rank(spec.seed, k) })).sort((x, y) => (x.r < y.r ? -1 : x.r > y.r ? 1 : 0));
    for (const { k } of ranked.slice(0, n)) chosen.set(k, { stratum: name, weight: N / n });
    return { name, values: s.values, population: N, sample: n };
  });
  const block = {
    seed: spec.seed,
    method: 'stratified simple random sample without replacement; bottom-k of sha256(seed, key) per stratum',
    stratify_by: spec.stratifyBy.map((b) => ({ column: b.column, group: b.group })),
    allocation: 'proportional',
    size: null,
    share: spec.share,
    population: list.reduce((s, x) => s + x.population, 0),
    sampled: list.reduce((s, x) => s + x.sample, 0),
    strata: list,
  };
  return { block, chosen };
}

export interface SampledFolderOptions {
  /** Sampled keys to put in errors.ndjson instead of results (a failed row), with this code. */
  readonly fail?: ReadonlySet<string>;
  /** Sampled keys left out of both files (a run that has not finished). */
  readonly unprocessed?: ReadonlySet<string>;
}

/**
 * Writes the sampled folder `out` from the full run's folder `full`: its results (and errors) lines of the
 * sampled keys with their stratum and weight, and its manifest with the `sample` object.
 */
export function writeSampledFolder(full: string, out: string, sel: Selection, o: SampledFolderOptions = {}): string {
  mkdirSync(out, { recursive: true });
  const results: string[] = [];
  const errors: string[] = [];
  const tag = (line: Record<string, unknown>, c: { stratum: string; weight: number }): string => {
    const { row, key, ...rest } = line;
    return JSON.stringify({ row, key, stratum: c.stratum, weight: c.weight, ...rest });
  };
  const lines = (file: string): Record<string, unknown>[] => {
    let text = '';
    try { text = readFileSync(join(full, file), 'utf8'); } catch { return []; }
    return text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  for (const line of lines('results.ndjson')) {
    const c = sel.chosen.get(line.key as string);
    if (!c || o.unprocessed?.has(line.key as string)) continue;
    if (o.fail?.has(line.key as string)) {
      errors.push(tag({ row: line.row, key: line.key, line: (line.row as number) + 1, stage: 'challenger', status: 503, code: 'SERVER_UNAVAILABLE', message: 'the server was unavailable after 5 attempts', attempts: 5, input: null }, c));
    } else {
      results.push(tag(line, c));
    }
  }
  for (const line of lines('errors.ndjson')) {
    const c = sel.chosen.get(line.key as string);
    if (c && !o.unprocessed?.has(line.key as string)) errors.push(tag(line, c));
  }
  writeFileSync(join(out, 'results.ndjson'), results.map((l) => `${l}\n`).join(''));
  writeFileSync(join(out, 'errors.ndjson'), errors.map((l) => `${l}\n`).join(''));
  const manifest = JSON.parse(readFileSync(join(full, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(out, 'manifest.json'), JSON.stringify({ ...manifest, sample: sel.block }, null, 2) + '\n');
  return out;
}
