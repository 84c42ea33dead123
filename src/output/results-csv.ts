/**
 * results.csv is built once, at the end of a run (and after every resume), from results.ndjson: the header
 * is the union of all fields in a stable order (row, key, then each stage in pipeline order with its known
 * columns first and any others sorted), so it is identical however the run was interrupted.
 */
import { createWriteStream } from 'node:fs';
import { rename } from 'node:fs/promises';
import { stringify } from 'csv-stringify';
import { once } from 'node:events';
import { excelSafe } from './excel.js';
import { readNdjson } from './ndjson-file.js';

export interface StageColumns {
  readonly id: string;
  readonly known: readonly string[];
}

export interface ResultLine {
  row: number;
  key: unknown;
  stages: Record<string, Record<string, unknown>>;
}

/** `visit` sees every result line in the first pass (the summary counts decisions there: no extra read). */
export async function buildResultsCsv(ndjsonPath: string, csvPath: string, stages: readonly StageColumns[], visit?: (line: ResultLine) => void): Promise<{ rows: number; columns: number }> {
  const extra = new Map<string, Set<string>>(stages.map((s) => [s.id, new Set<string>()]));
  for await (const line of readNdjson<ResultLine>(ndjsonPath)) {
    if (!line?.stages) continue;
    visit?.(line);
    for (const s of stages) {
      const known = new Set(s.known);
      const set = extra.get(s.id)!;
      for (const k of Object.keys(line.stages[s.id] ?? {})) if (!known.has(k)) set.add(k);
    }
  }
  const columns: { stage: string; field: string }[] = [];
  for (const s of stages) {
    for (const f of s.known) columns.push({ stage: s.id, field: f });
    for (const f of [...extra.get(s.id)!].sort()) columns.push({ stage: s.id, field: f });
  }
  const tmp = `${csvPath}.tmp`;
  const out = createWriteStream(tmp);
  const csv = stringify({ header: true, columns: ['row', 'key', ...columns.map((c) => `${c.stage}.${c.field}`)] });
  csv.pipe(out);
  let rows = 0;
  for await (const line of readNdjson<ResultLine>(ndjsonPath)) {
    if (!line?.stages) continue;
    const record = [String(line.row), excelSafe(line.key)];
    for (const c of columns) record.push(excelSafe(line.stages[c.stage]?.[c.field]));
    if (!csv.write(record)) await once(csv, 'drain');
    rows += 1;
  }
  csv.end();
  await once(out, 'finish');
  await rename(tmp, csvPath);
  return { rows, columns: columns.length + 2 };
}
