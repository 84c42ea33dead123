import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readRows } from '@bre-batch/formats/input/read';
import type { InputRow } from '@bre-batch/core/types';

async function rows(
  text: string | Buffer,
  format: 'csv' | 'ndjson' = 'csv',
  maxRecordBytes?: number,
): Promise<InputRow[]> {
  const out: InputRow[] = [];
  for await (const r of readRows('-', { format, stream: Readable.from([Buffer.from(text)]), maxRecordBytes }))
    out.push(r);
  return out;
}

describe('CSV reader', () => {
  it('numbers data rows from 1 and keeps the physical line', async () => {
    const r = await rows('a,b\n1,2\n\n3,4\n');
    expect(r.map((x) => [x.row, x.line, x.data])).toEqual([
      [1, 2, { a: '1', b: '2' }],
      [2, 4, { a: '3', b: '4' }],
    ]);
  });

  it('keeps a quoted field with a newline in one record', async () => {
    const r = await rows('a,b\n"x\ny",2\n3,4\n');
    expect(r).toHaveLength(2);
    expect(r[0].data).toEqual({ a: 'x\ny', b: '2' });
    expect(r[1]).toMatchObject({ row: 2, line: 4 });
  });

  it.each([
    ['ragged row (too few columns)', 'a,b\n1\n2,3\n', 1, /1 columns, the header has 2/],
    ['ragged row (too many columns)', 'a,b\n1,2,3\n2,3\n', 1, /3 columns/],
  ])('%s becomes a MALFORMED_ROW and the run goes on', async (_name, text, badRow, msg) => {
    const r = await rows(text);
    expect(r).toHaveLength(2);
    expect(r[badRow - 1].readError?.code).toBe('MALFORMED_ROW');
    expect(r[badRow - 1].readError?.message).toMatch(msg);
    expect(r[1].readError).toBeUndefined();
  });

  it('an unclosed quote costs only its own line', async () => {
    const r = await rows('a,b\n1,"oops\n2,3\n4,5\n');
    expect(r.map((x) => x.row)).toEqual([1, 2, 3]);
    expect(r[0].readError?.message).toMatch(/quoted field is not closed/);
    expect(r[0].line).toBe(2);
    expect(r.slice(1).map((x) => x.data)).toEqual([
      { a: '2', b: '3' },
      { a: '4', b: '5' },
    ]);
  });

  it('an unclosed quote at a record size limit does not swallow the file', async () => {
    const body = Array.from({ length: 50 }, (_, i) => `${i},x`).join('\n');
    const r = await rows(`a,b\n1,"never closed\n${body}\n`, 'csv', 64);
    expect(r[0].readError?.code).toBe('MALFORMED_ROW');
    expect(r.length).toBe(51);
    expect(r.filter((x) => !x.readError).length).toBe(50);
  });

  it('strips a UTF-8 BOM and CRLF line ends', async () => {
    const r = await rows(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a,b\r\n1,2\r\n')]));
    expect(r[0].data).toEqual({ a: '1', b: '2' });
  });

  it('a CR LF inside a quoted field stays CR LF, a LF stays LF, spaces stay', async () => {
    const r = await rows('a,b\r\n"one\r\ntwo\nthree",  padded  \r\n" x ",y\r\n');
    expect(r.map((x) => x.data)).toEqual([
      { a: 'one\r\ntwo\nthree', b: '  padded  ' },
      { a: ' x ', b: 'y' },
    ]);
  });

  it.each([
    ['coordinates', '37°36\'37.8"N', '122°22\'12.3"W'],
    ['a height', '5\'10"', 'tall "ish"'],
    ['a lone quote', 'a"', 'b'],
  ])('a quote inside an unquoted field is a character (%s)', async (_name, x, y) => {
    const r = await rows(`a,b\n${x},${y}\nnext,row\n`);
    expect(r.map((z) => z.data)).toEqual([
      { a: x, b: y },
      { a: 'next', b: 'row' },
    ]);
  });

  it('text after a closing quote is broken quoting: one row error, the next record read as usual', async () => {
    const r = await rows('a,b\n"abc"def,x\n1,2\n');
    expect(r.map((x) => x.readError?.code ?? x.data)).toEqual(['MALFORMED_ROW', { a: '1', b: '2' }]);
    expect(r[0].readError?.message).toMatch(/line 2: a quoted field is followed by more text/);
  });

  it('a semicolon file is sniffed and said in one line; --delimiter and TSV choose without sniffing', async () => {
    const said: string[] = [];
    const out: InputRow[] = [];
    for await (const r of readRows('-', {
      format: 'csv',
      stream: Readable.from([Buffer.from('a;b\n1,5;"x;y"\n')]),
      notice: (l) => said.push(l),
    }))
      out.push(r);
    expect(out.map((x) => x.data)).toEqual([{ a: '1,5', b: 'x;y' }]);
    expect(said).toEqual([
      "input: fields separated by ';' (semicolon) (sniffed from the first lines; --delimiter chooses another)",
    ]);
    const forced: InputRow[] = [];
    for await (const r of readRows('-', {
      format: 'csv',
      delimiter: '|',
      stream: Readable.from([Buffer.from('a;b|c\n1;2|3\n')]),
    }))
      forced.push(r);
    expect(forced.map((x) => x.data)).toEqual([{ 'a;b': '1;2', c: '3' }]);
    const tsv: InputRow[] = [];
    for await (const r of readRows('-', { format: 'tsv', stream: Readable.from([Buffer.from('a,b\tc\n1,2\t3\n')]) }))
      tsv.push(r);
    expect(tsv.map((x) => x.data)).toEqual([{ 'a,b': '1,2', c: '3' }]);
  });

  it('a header with a duplicate column is refused', async () => {
    await expect(rows('a,a\n1,2\n')).rejects.toThrow(/names column 'a' twice/);
  });
});

describe('NDJSON reader', () => {
  it.each([
    ['not JSON', '{"a":1}\n{oops\n{"a":2}\n', /not valid JSON/],
    ['an array', '{"a":1}\n[1,2]\n{"a":2}\n', /an array, not a JSON object/],
    ['a string', '{"a":1}\n"x"\n{"a":2}\n', /string, not a JSON object/],
  ])('%s on a line becomes a MALFORMED_ROW', async (_n, text, msg) => {
    const r = await rows(text, 'ndjson');
    expect(r.map((x) => x.row)).toEqual([1, 2, 3]);
    expect(r[1].readError?.message).toMatch(msg);
    expect(r[1].line).toBe(2);
  });

  it('an oversized line is a row error, not a crash, and is not buffered', async () => {
    const r = await rows(`{"a":1}\n{"big":"${'x'.repeat(5000)}"}\n{"a":2}\n`, 'ndjson', 1000);
    expect(r.map((x) => !!x.readError)).toEqual([false, true, false]);
    expect(r[1].readError?.message).toMatch(/longer than 1000 bytes/);
  });

  it('deep nesting is a row error', async () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const r = await rows(`${deep}\n{"a":1}\n`, 'ndjson');
    expect(r[0].readError?.code).toBe('MALFORMED_ROW');
    expect(r[1].data).toEqual({ a: 1 });
  });
});
