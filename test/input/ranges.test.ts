/**
 * A file cut into ranges for a job's workers (src/input/ranges.ts), table-driven: each range starts where the
 * run's reader starts a row (quoted newlines, CR LF, a byte order mark, blank lines, the header, a last line
 * without a newline, broken records), and the ranges read one by one give the rows, numbers, lines and errors
 * a run over the whole file gives, in every chunk size. Plus what a range read from a changed file says.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetWriteFile } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { readRowBatches, type InputFormat } from '@bre-batch/formats/input/read';
import { readRange, ShortRange, splitFile, type RangeReading } from '../../src/input/ranges.js';
import type { InputRow } from '@bre-batch/core/types';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('bre-ranges-');

/** The whole file as a run reads it, and how it was read (what openInput hands a job). */
async function whole(
  path: string,
  format: InputFormat,
  opts: { encoding?: string; maxRecordBytes?: number } = {},
): Promise<{ rows: InputRow[]; reading: RangeReading }> {
  let columns: readonly string[] | undefined;
  let delimiter: string | undefined;
  let encoding = 'utf-8';
  const rows: InputRow[] = [];
  for await (const b of readRowBatches(path, {
    format,
    ...opts,
    onEncoding: (e) => {
      encoding = e;
    },
    header: (h) => {
      delimiter = h.delimiter;
      columns = h.names.map((n) => n.trim());
      return columns;
    },
  }))
    rows.push(...b);
  const base = format as RangeReading['format'];
  return {
    rows,
    reading: {
      format: base,
      encoding,
      ...(delimiter !== undefined ? { delimiter } : {}),
      ...(columns ? { columns } : {}),
      ...(opts.maxRecordBytes ? { maxRecordBytes: opts.maxRecordBytes } : {}),
    },
  };
}

async function ranged(path: string, reading: RangeReading, rows: number): Promise<InputRow[]> {
  const out: InputRow[] = [];
  for (const r of await splitFile(path, reading, rows))
    for await (const b of readRange(path, reading, r)) out.push(...b);
  return out;
}

interface Case {
  readonly name: string;
  readonly format: InputFormat;
  readonly bytes: string | Buffer;
  readonly encoding?: string;
  readonly maxRecordBytes?: number;
  /** The rows the file holds (every row, broken ones too). */
  readonly rows: number;
  /** With one row a range: where each range starts, as text before it (its byte count is the start). */
  readonly startsAfter?: readonly string[];
}

const CASES: readonly Case[] = [
  {
    name: 'a quoted field with newlines, where a cut on \\n would fall inside it',
    format: 'csv',
    bytes: 'k,v\n1,"a\nb\nc"\n2,x\n3,"\n"\n',
    rows: 3,
    startsAfter: ['k,v\n', 'k,v\n1,"a\nb\nc"\n', 'k,v\n1,"a\nb\nc"\n2,x\n'],
  },
  {
    name: 'CR LF line ends, and CR LF inside a quoted field',
    format: 'csv',
    bytes: 'k,v\r\n1,"a\r\nb"\r\n2,x\r\n',
    rows: 2,
    startsAfter: ['k,v\r\n', 'k,v\r\n1,"a\r\nb"\r\n'],
  },
  {
    name: 'a UTF-8 byte order mark before the header',
    format: 'csv',
    bytes: '\ufeffk,v\n1,é\n2,x\n',
    rows: 2,
    startsAfter: ['\ufeffk,v\n', '\ufeffk,v\n1,é\n'],
  },
  {
    name: 'blank lines before the header, between rows and at the end',
    format: 'csv',
    bytes: '\n\nk,v\n\n1,a\n\n\n2,b\n\n',
    rows: 2,
    startsAfter: ['\n\nk,v\n\n', '\n\nk,v\n\n1,a\n\n\n'],
  },
  {
    name: 'the last line without a newline',
    format: 'csv',
    bytes: 'k,v\n1,a\n2,"b\nc"',
    rows: 2,
    startsAfter: ['k,v\n', 'k,v\n1,a\n'],
  },
  {
    name: 'a quote left open: its first line is the row in error, the lines after it rows again',
    format: 'csv',
    bytes: 'k,v\n1,"open\n2,x\n3,y\n',
    rows: 3,
    startsAfter: ['k,v\n', 'k,v\n1,"open\n', 'k,v\n1,"open\n2,x\n'],
  },
  {
    name: 'a quoted field over lines with the wrong column count, and a short record',
    format: 'csv',
    bytes: 'k,v\n1,"a\nb",extra\n2\n3,z\n',
    rows: 4,
  },
  {
    name: 'a record longer than the largest accepted, and a quote open past it',
    format: 'csv',
    bytes: `k,v\n1,${'x'.repeat(40)}\n2,"${'y'.repeat(10)}\n${'z'.repeat(30)}"\n3,w\n`,
    maxRecordBytes: 32,
    rows: 4,
  },
  {
    name: 'a sniffed semicolon, quoted newlines',
    format: 'csv',
    bytes: 'k;v;w\n1;"a;\nb";c\n2;x;y\n3;z;q\n',
    rows: 3,
  },
  {
    name: 'TSV with CR LF',
    format: 'tsv',
    bytes: 'k\tv\r\n1\ta\r\n2\t"b\r\nc"\r\n3\td\r\n',
    rows: 3,
  },
  {
    name: 'windows-1252 bytes, and a line that is not valid in it',
    format: 'csv',
    encoding: 'windows-1252',
    bytes: Buffer.concat([
      Buffer.from('k,v\n1,'),
      Buffer.from([0x80, 0xe9]),
      Buffer.from('\n2,"a\n'),
      Buffer.from([0x93]),
      Buffer.from('"\n3,x\n'),
    ]),
    rows: 3,
  },
  {
    name: 'NDJSON: blank lines, a line that is not JSON, an array, the last line without a newline',
    format: 'ndjson',
    bytes: '{"k":1}\n\n{"k":2,"t":"a\\nb"}\nnot json\n[1]\r\n\n{"k":3}',
    rows: 5,
    startsAfter: [
      '',
      '{"k":1}\n\n',
      '{"k":1}\n\n{"k":2,"t":"a\\nb"}\n',
      '{"k":1}\n\n{"k":2,"t":"a\\nb"}\nnot json\n',
      '{"k":1}\n\n{"k":2,"t":"a\\nb"}\nnot json\n[1]\r\n\n',
    ],
  },
  {
    name: 'NDJSON with a byte order mark',
    format: 'ndjson',
    bytes: '\ufeff{"k":1}\n{"k":2}\n',
    rows: 2,
    startsAfter: ['\ufeff', '\ufeff{"k":1}\n'],
  },
];

describe('splitFile and readRange: a file in ranges reads as the whole file', () => {
  it.each(CASES)('$name', async (c) => {
    const path = join(dir, `${c.name.replace(/\W+/g, '_').slice(0, 60)}.${c.format}`);
    writeFileSync(path, c.bytes);
    const { rows, reading } = await whole(path, c.format, {
      ...(c.encoding ? { encoding: c.encoding } : {}),
      ...(c.maxRecordBytes ? { maxRecordBytes: c.maxRecordBytes } : {}),
    });
    expect(rows).toHaveLength(c.rows);
    for (const size of [1, 2, 3, 1000]) {
      const ranges = await splitFile(path, reading, size);
      expect(
        ranges.map((r) => r.rows).reduce((a, b) => a + b, 0),
        `size ${size}`,
      ).toBe(c.rows);
      expect(ranges.every((r, i) => i === 0 || r.byteStart === ranges[i - 1].byteEnd)).toBe(true);
      expect(ranges.at(-1)?.byteEnd).toBe(Buffer.byteLength(c.bytes));
      expect(await ranged(path, reading, size), `ranges of ${size} rows`).toEqual(rows);
    }
    if (c.startsAfter) {
      const ranges = await splitFile(path, reading, 1);
      expect(ranges.map((r) => r.byteStart)).toEqual(c.startsAfter.map((t) => Buffer.byteLength(t)));
      expect(ranges.map((r) => [r.firstRow, r.firstLine])).toEqual(rows.map((r) => [r.row, r.line]));
    }
  });

  it('Parquet: ranges of row numbers, across row groups', async () => {
    const path = join(dir, 'groups.parquet');
    parquetWriteFile({
      filename: path,
      rowGroupSize: 4,
      columnData: [
        { name: 'k', data: Array.from({ length: 10 }, (_, i) => `K${i + 1}`), type: 'STRING' },
        { name: 'n', data: Array.from({ length: 10 }, (_, i) => i * 1.5), type: 'DOUBLE' },
      ],
    });
    const rows: InputRow[] = [];
    for await (const b of readRowBatches(path)) rows.push(...b);
    const reading: RangeReading = { format: 'parquet', encoding: 'utf-8', columns: ['k', 'n'] };
    const ranges = await splitFile(path, reading, 3);
    expect(ranges.map((r) => [r.firstRow, r.rows])).toEqual([
      [1, 3],
      [4, 3],
      [7, 3],
      [10, 1],
    ]);
    for (const size of [1, 3, 4, 7, 20]) expect(await ranged(path, reading, size), `size ${size}`).toEqual(rows);
  });
});

describe('readRange on a file that is not the one split', () => {
  it('rows cut short by a truncated file: ShortRange, naming the rows', async () => {
    const path = join(dir, 'shrinks.csv');
    writeFileSync(path, 'k,v\n1,a\n2,b\n3,c\n4,d\n');
    const { reading } = await whole(path, 'csv');
    const ranges = await splitFile(path, reading, 2);
    writeFileSync(path, 'k,v\n1,a\n2,b\n3,c\n');
    const read = async () => {
      for await (const _ of readRange(path, reading, ranges[1])) void _;
    };
    await expect(read()).rejects.toThrow(ShortRange);
    await expect(read()).rejects.toThrow('rows 3-4 (from line 4) ended 1 row short');
  });
});
