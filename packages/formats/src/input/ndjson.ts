/** NDJSON rows: one JSON object a line; blank lines are skipped; anything else is a MALFORMED_ROW. */
import type { InputRow } from '@bre-batch/core/types';
import type { PhysicalLine } from './lines.js';

/** NDJSON rows, a batch per batch of lines (see readLineBatches). */
export async function* ndjsonRowBatches(
  batches: AsyncIterable<PhysicalLine[]>,
  maxRecordBytes: number,
  encoding: () => string = () => 'utf-8',
  /** Rows numbered on after this one (a job's chunk: the rest of a file from one of its lines, src/input/ranges.ts). */
  afterRow = 0,
): AsyncGenerator<InputRow[]> {
  const state = { row: afterRow };
  for await (const lines of batches) {
    const rows = ndjsonBatch(lines, maxRecordBytes, state, encoding);
    if (rows.length > 0) yield rows;
  }
}

function ndjsonBatch(
  lines: readonly PhysicalLine[],
  maxRecordBytes: number,
  state: { row: number },
  encoding: () => string,
): InputRow[] {
  const out: InputRow[] = [];
  let row = state.row;
  for (const l of lines) {
    if (l.tooLong) {
      row += 1;
      out.push({
        row,
        line: l.line,
        data: {},
        readError: {
          code: 'MALFORMED_ROW',
          message: `line ${l.line} is longer than ${maxRecordBytes} bytes`,
          expected: `a JSON object of at most ${maxRecordBytes} bytes`,
        },
      });
      continue;
    }
    if (l.text.trim() === '') continue;
    row += 1;
    if (l.undecodable) {
      out.push({
        row,
        line: l.line,
        data: {},
        readError: {
          code: 'MALFORMED_ROW',
          message: `line ${l.line} has bytes that are not valid ${encoding()}`,
          expected: `text in ${encoding()} (--encoding names the file's encoding)`,
        },
      });
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(l.text);
    } catch (err) {
      const why = err instanceof RangeError ? 'nested too deeply' : 'not valid JSON';
      out.push({
        row,
        line: l.line,
        data: {},
        readError: { code: 'MALFORMED_ROW', message: `line ${l.line} is ${why}`, expected: 'one JSON object per line' },
      });
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
      out.push({
        row,
        line: l.line,
        data: {},
        readError: {
          code: 'MALFORMED_ROW',
          message: `line ${l.line} is ${got}, not a JSON object`,
          expected: 'one JSON object per line',
        },
      });
      continue;
    }
    out.push({ row, line: l.line, data: value as Record<string, unknown> });
  }
  state.row = row;
  return out;
}
