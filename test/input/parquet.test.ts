/**
 * Parquet input, from files written by real Parquet writers: hyparquet-writer (the family this project reads
 * and writes with) and parquet-wasm, which is arrow-rs's writer (the Rust parquet crate) compiled to
 * WebAssembly, for the ZSTD and SNAPPY files warehouses write (ZSTD is Polars' default).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { parquetWriteFile } from 'hyparquet-writer';
import * as pq from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { getField } from '@bre-batch/formats/input/fields';
import { resolveHeader } from '@bre-batch/formats/input/header';
import { estimateRows, readRowBatches, readRows } from '@bre-batch/formats/input/read';
import type { InputRow } from '@bre-batch/core/types';
import { tempDir } from '../helpers/temp.js';

async function all(path: string, opts: Parameters<typeof readRows>[1] = {}): Promise<InputRow[]> {
  const out: InputRow[] = [];
  for await (const r of readRows(path, { format: 'parquet', ...opts })) out.push(r);
  return out;
}

function arrowFile(path: string, table: arrow.Table, codec: 'ZSTD' | 'SNAPPY', rowGroupSize: number): void {
  const props = new pq.WriterPropertiesBuilder()
    .setCompression(pq.Compression[codec])
    .setMaxRowGroupSize(rowGroupSize)
    .build();
  writeFileSync(path, pq.writeParquet(pq.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), props));
}

describe('Parquet written by hyparquet-writer', () => {
  const dir = tempDir('bre-parquet-');
  const path = join(dir, 'typed.parquet');
  parquetWriteFile({
    filename: path,
    rowGroupSize: 2,
    columnData: [
      { name: 'Reference_ID', data: ['00123', 'R2', 'R3', 'R4', 'R5'], type: 'STRING' },
      { name: 'income', data: [18000, 25000.5, null, 0, -1], type: 'DOUBLE' },
      { name: 'count', data: [1n, 2n, 9007199254740993n, 4n, 5n], type: 'INT64' },
      { name: 'flag', data: [true, false, true, null, false], type: 'BOOLEAN' },
      { name: 'when', data: [new Date('2024-01-31T18:30:00Z'), null, null, null, new Date(0)], type: 'TIMESTAMP' },
    ],
  });

  it('rows in file order across row groups, numbered from 1; types kept', async () => {
    const r = await all(path);
    expect(r.map((x) => [x.row, x.line])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
      [5, 5],
    ]);
    expect(r[0].data).toEqual({
      Reference_ID: '00123',
      income: 18000,
      count: 1,
      flag: true,
      when: '2024-01-31T18:30:00.000Z',
    });
    expect(r[1].data).toMatchObject({ income: 25000.5, flag: false, when: null });
    // beyond 2^53 an INT64 keeps its digits, as text
    expect(r[2].data).toMatchObject({ income: null, count: '9007199254740993' });
  });

  it('the header check sees the schema: names matched without regard to case', async () => {
    const req = { what: 'test', required: [['reference_id']], known: ['reference_id'] };
    const r = await all(path, { header: (h) => resolveHeader(h, req) });
    expect(r[0].data.reference_id).toBe('00123');
    await expect(all(path, { header: (h) => resolveHeader(h, { ...req, required: [['lead_id']] }) })).rejects.toThrow(
      BreError,
    );
    await expect(all(path, { header: (h) => resolveHeader(h, { ...req, required: [['lead_id']] }) })).rejects.toThrow(
      /header as read: the Parquet schema, 5 columns: "Reference_ID", "income"/,
    );
  });

  it('batches hold at most a row group (cut smaller), never empty', async () => {
    const sizes: number[] = [];
    for await (const b of readRowBatches(path, { format: 'parquet' })) sizes.push(b.length);
    expect(sizes).toEqual([2, 2, 1]);
    expect(await estimateRows(path, 'parquet')).toBe(5);
  });

  it('a struct column is reached by dotted path, as nested NDJSON is', async () => {
    const nested = join(dir, 'nested.parquet');
    parquetWriteFile({
      filename: nested,
      columnData: [
        { name: 'reference_id', data: ['A', 'B'] },
        { name: 'external', data: [{ bank_type: 'bank_aa', bank_data: { accounts: [1, 2] } }, null] },
      ],
      schema: [
        { name: 'root', num_children: 2 },
        { name: 'reference_id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
        { name: 'external', repetition_type: 'OPTIONAL', num_children: 2 },
        { name: 'bank_type', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
        { name: 'bank_data', type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type: 'OPTIONAL' },
      ],
    });
    const seen: string[][] = [];
    const r = await all(nested, {
      header: (h) => {
        seen.push([...h.names], [...(h.nested ?? [])]);
        return h.names;
      },
    });
    expect(seen).toEqual([
      ['reference_id', 'external'],
      ['external.bank_type', 'external.bank_data'],
    ]);
    expect(getField(r[0].data, 'external.bank_type')).toEqual({ value: 'bank_aa', column: 'external.bank_type' });
    expect(getField(r[0].data, 'external.bank_data')?.value).toEqual({ accounts: [1, 2] });
    expect(getField(r[1].data, 'external.bank_type')).toBeUndefined();
  });
});

describe('Parquet written by arrow-rs (parquet-wasm), compressed as warehouses do', () => {
  const dir = tempDir('bre-parquet-arrow-');
  const table = arrow.tableFromArrays({
    reference_id: ['00123', 'B-2', 'C-3'],
    declared_income: Float64Array.from([18000, 22000.75, 0]),
    age: Int32Array.from([30, 41, 52]),
  });
  it.each(['ZSTD', 'SNAPPY'] as const)('%s: every row, types kept', async (codec) => {
    const path = join(dir, `${codec}.parquet`);
    arrowFile(path, table, codec, 2);
    const r = await all(path);
    expect(r.map((x) => x.data)).toEqual([
      { reference_id: '00123', declared_income: 18000, age: 30 },
      { reference_id: 'B-2', declared_income: 22000.75, age: 41 },
      { reference_id: 'C-3', declared_income: 0, age: 52 },
    ]);
  });

  it('a file that is not Parquet fails the reading with what it is', async () => {
    const path = join(dir, 'not.parquet');
    writeFileSync(path, 'a,b\n1,2\n');
    await expect(all(path)).rejects.toThrow(/parquet/i);
  });

  it('0 bytes read as no rows and no schema (an empty input); fewer bytes than any Parquet file say so', async () => {
    const empty = join(dir, 'empty.parquet');
    writeFileSync(empty, '');
    let header = false;
    const sawHeader = (h: Parameters<typeof resolveHeader>[0]) => {
      header = true;
      return resolveHeader(h);
    };
    expect(await all(empty, { header: sawHeader })).toEqual([]);
    expect(header, 'no schema to check').toBe(false);
    const cut = join(dir, 'cut.parquet');
    writeFileSync(cut, 'PAR1');
    await expect(all(cut)).rejects.toThrow(
      'it is 4 bytes, fewer than any Parquet file holds (12: its magic number and footer): was it cut short?',
    );
  });
});
