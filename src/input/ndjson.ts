/** NDJSON rows: one JSON object a line; blank lines are skipped; anything else is a MALFORMED_ROW. */
import type { InputRow } from '../types.js';
import type { PhysicalLine } from './lines.js';

export async function* ndjsonRows(lines: AsyncIterable<PhysicalLine>, maxRecordBytes: number): AsyncGenerator<InputRow> {
  let row = 0;
  for await (const l of lines) {
    if (l.tooLong) {
      row += 1;
      yield { row, line: l.line, data: {}, readError: { code: 'MALFORMED_ROW', message: `line ${l.line} is longer than ${maxRecordBytes} bytes`, expected: `a JSON object of at most ${maxRecordBytes} bytes` } };
      continue;
    }
    if (l.text.trim() === '') continue;
    row += 1;
    let value: unknown;
    try {
      value = JSON.parse(l.text);
    } catch (err) {
      const why = err instanceof RangeError ? 'nested too deeply' : 'not valid JSON';
      yield { row, line: l.line, data: {}, readError: { code: 'MALFORMED_ROW', message: `line ${l.line} is ${why}`, expected: 'one JSON object per line' } };
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
      yield { row, line: l.line, data: {}, readError: { code: 'MALFORMED_ROW', message: `line ${l.line} is ${got}, not a JSON object`, expected: 'one JSON object per line' } };
      continue;
    }
    yield { row, line: l.line, data: value as Record<string, unknown> };
  }
}
