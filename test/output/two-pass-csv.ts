/**
 * The reference for results.csv: how earlier builds wrote it, in two passes over results.ndjson (the union of
 * all fields first, in a stable order: row, key, then each stage in pipeline order with its known columns
 * first and any others sorted; then the rows, in row order). The spool and the one-pass rebuild (src/output/spool/spool.ts)
 * must write the same bytes; tests compare them with this.
 */
import { createWriteStream } from 'node:fs';
import { rename } from 'node:fs/promises';
import { stringify } from 'csv-stringify/sync';
import { once } from 'node:events';
import { excelSafe } from '../../src/output/files/excel.js';
import { resultLineBatches, type ResultLine } from '@bre-batch/formats';

export interface StageColumns {
  readonly id: string;
  readonly known: readonly string[];
}

/** `visit` sees every result line in the first pass (the summary counts decisions there: no extra read). */
export async function buildResultsCsv(
  ndjsonPath: string,
  csvPath: string,
  stages: readonly StageColumns[],
  visit?: (line: ResultLine) => void,
): Promise<{ rows: number; columns: number }> {
  const extra = new Map<string, Set<string>>(stages.map((s) => [s.id, new Set<string>()]));
  const known = new Map<string, Set<string>>(stages.map((s) => [s.id, new Set(s.known)]));
  for await (const batch of resultLineBatches(ndjsonPath)) {
    for (const line of batch) {
      if (!line) continue;
      visit?.(line);
      for (const s of stages) {
        const fields = line.stages[s.id];
        if (!fields) continue;
        const knownOf = known.get(s.id)!;
        const set = extra.get(s.id)!;
        for (const k of Object.keys(fields)) if (!knownOf.has(k)) set.add(k);
      }
    }
  }
  const columns: { stage: string; field: string }[] = [];
  for (const s of stages) {
    for (const f of s.known) columns.push({ stage: s.id, field: f });
    for (const f of [...extra.get(s.id)!].sort()) columns.push({ stage: s.id, field: f });
  }
  const tmp = `${csvPath}.tmp`;
  const out = createWriteStream(tmp);
  // csv-stringify's synchronous form over a file chunk's records at a time: the same quoting as its stream,
  // without a stream write per row.
  const write = async (records: string[][]): Promise<void> => {
    if (!out.write(stringify(records))) await once(out, 'drain');
  };
  // The run and session that wrote each row come last (issue 42's columns: after every stage's).
  await write([['row', 'key', ...columns.map((c) => `${c.stage}.${c.field}`), 'run_id', 'run_session']]);
  let rows = 0;
  // In row order (the input's), as results.csv is since issue 31; the journal holds them as they finished.
  const lines: ResultLine[] = [];
  for await (const batch of resultLineBatches(ndjsonPath)) for (const line of batch) if (line) lines.push(line);
  lines.sort((a, b) => a.row - b.row);
  for (const batch of [lines]) {
    const records: string[][] = [];
    for (const line of batch) {
      if (!line) continue;
      const record = [String(line.row), excelSafe(line.key)];
      for (const c of columns) record.push(excelSafe(line.stages[c.stage]?.[c.field]));
      record.push(excelSafe(line.run_id), excelSafe(line.run_session));
      records.push(record);
    }
    if (records.length > 0) await write(records);
    rows += records.length;
  }
  out.end();
  await once(out, 'finish');
  await rename(tmp, csvPath);
  return { rows, columns: columns.length + 4 };
}
