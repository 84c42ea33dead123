/**
 * ParquetTableWriter reuses the BigInt a repeated value became (a session's number on every row): each row
 * must still read back as its own value, across repeats, changes, nulls and row groups.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ParquetTableWriter } from '../../../../src/output/files/parquet/table-writer.js';
import { readParquet } from '../../parquet-reader.js';
import { tempDir } from '../../../helpers/temp.js';

describe('repeated values in BigInt columns', () => {
  it.each([
    ['one value on every row', [1, 1, 1, 1]],
    ['a change, and back', [1, 1, 2, 2, 1]],
    ['nulls between repeats', [3, null, 3, undefined, 3, 4]],
    ['a null first', [null, 5, 5]],
    ['a value that does not fit (a fraction): null, then the value again', [6, 6.5, 6]],
  ] as const)('int64 and local timestamps: %s', async (_n, ints) => {
    const dir = tempDir('pq-repeat-');
    const path = join(dir, 't.parquet');
    // Two rows a group: repeats cross the groups' edges too.
    const w = new ParquetTableWriter(
      path,
      [
        { name: 'n', kind: 'int64' },
        { name: 'at', kind: 'timestamp_local_ms' },
      ],
      { rowGroupRows: 2 },
    );
    const times = ints.map((n) => (typeof n === 'number' && Number.isInteger(n) ? `2026-01-0${n}T10:00:00` : n));
    for (const [i, n] of ints.entries()) w.push([n, times[i]]);
    w.close();
    const { rows } = await readParquet(path);
    expect(rows.map((r) => r.n)).toEqual(ints.map((n) => (Number.isInteger(n) ? BigInt(n as number) : null)));
    expect(rows.map((r) => (r.at === null ? null : Number(r.at)))).toEqual(
      times.map((t) => (typeof t === 'string' ? Date.parse(`${t}Z`) : null)),
    );
  });
});
