/**
 * Text as files really arrive: byte order marks, UTF-16 (Excel's "Unicode text"), legacy code pages, and
 * bytes that do not decode, which cost their own row only.
 */
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readRows, type InputFormat } from '@bre-batch/formats/input/read';
import type { InputRow } from '@bre-batch/core/types';

async function rows(
  bytes: Buffer,
  format: InputFormat = 'csv',
  opts: { encoding?: string; chunk?: number; delimiter?: string; notice?: (l: string) => void } = {},
): Promise<InputRow[]> {
  const parts: Buffer[] = [];
  const size = opts.chunk ?? bytes.length;
  for (let at = 0; at < bytes.length; at += size) parts.push(bytes.subarray(at, at + size));
  const out: InputRow[] = [];
  for await (const r of readRows('-', {
    format,
    stream: Readable.from(parts),
    encoding: opts.encoding,
    delimiter: opts.delimiter,
    notice: opts.notice,
  }))
    out.push(r);
  return out;
}

const utf16le = (s: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, 'utf16le')]);
const utf16be = (s: string) => {
  const b = Buffer.from(s, 'utf16le');
  b.swap16();
  return Buffer.concat([Buffer.from([0xfe, 0xff]), b]);
};

const TEXT = 'id\tname\tcity\r\n1\tÅsa Öberg\tMalmö\r\n2\t李小龍\t香港\r\n3\t"tab\tinside"\t😀 emoji\r\n';
const EXPECTED = [
  { id: '1', name: 'Åsa Öberg', city: 'Malmö' },
  { id: '2', name: '李小龍', city: '香港' },
  { id: '3', name: 'tab\tinside', city: '😀 emoji' },
];

describe('byte order marks and UTF-16', () => {
  it.each([
    ['UTF-8 without BOM', Buffer.from(TEXT)],
    ['UTF-8 with BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(TEXT)])],
    ['UTF-16LE with BOM', utf16le(TEXT)],
    ['UTF-16BE with BOM', utf16be(TEXT)],
  ])(
    '%s: the same rows whatever the chunking (odd chunk edges split code units and surrogate pairs)',
    async (_name, bytes) => {
      for (const chunk of [bytes.length, 1, 3, 7]) {
        const r = await rows(bytes, 'csv', { chunk });
        expect(r.map((x) => x.data)).toEqual(EXPECTED);
        expect(r.map((x) => x.line)).toEqual([2, 3, 4]);
      }
    },
  );

  it('--encoding utf-16le reads UTF-16 without a BOM; a BOM wins over --encoding', async () => {
    expect((await rows(Buffer.from(TEXT, 'utf16le'), 'csv', { encoding: 'utf-16le' })).map((x) => x.data)).toEqual(
      EXPECTED,
    );
    expect((await rows(utf16le(TEXT), 'csv', { encoding: 'windows-1252' })).map((x) => x.data)).toEqual(EXPECTED);
  });

  it('UTF-16 read as UTF-8 by mistake: the NUL bytes in the header say what to do', async () => {
    await expect(rows(Buffer.from(TEXT, 'utf16le'))).rejects.toThrow(
      /NUL characters: a UTF-16 file without a byte order mark\? give --encoding utf-16le/,
    );
  });

  it("an unpaired surrogate is that row's error; the rows after keep their numbers and values", async () => {
    const good = Buffer.from('a,b\n1,x\n', 'utf16le');
    const bad = Buffer.concat([
      Buffer.from('2,', 'utf16le'),
      Buffer.from([0x00, 0xd8]),
      Buffer.from('\n3,y\n', 'utf16le'),
    ]);
    const r = await rows(Buffer.concat([Buffer.from([0xff, 0xfe]), good, bad]), 'csv', { chunk: 5 });
    expect(r.map((x) => [x.row, x.line, x.readError?.code ?? x.data])).toEqual([
      [1, 2, { a: '1', b: 'x' }],
      [2, 3, 'MALFORMED_ROW'],
      [3, 4, { a: '3', b: 'y' }],
    ]);
    expect(r[1].readError?.message).toBe('line 3 has bytes that are not valid utf-16le');
  });

  it('NDJSON in UTF-16 with a BOM', async () => {
    const r = await rows(utf16le('{"a":"Åsa"}\r\n{"a":"😀"}\n'), 'ndjson', { chunk: 3 });
    expect(r.map((x) => x.data)).toEqual([{ a: 'Åsa' }, { a: '😀' }]);
  });
});

describe('other encodings (--encoding, through TextDecoder)', () => {
  it('windows-1252 (and its WHATWG label latin1): é, €, smart quotes', async () => {
    const bytes = Buffer.from([
      ...Buffer.from('name;note\n'),
      0x4a,
      0x6f,
      0x73,
      0xe9,
      0x3b,
      0x80,
      0x20,
      0x93,
      0x71,
      0x94,
      0x0a,
    ]);
    for (const encoding of ['windows-1252', 'latin1', 'ISO-8859-1']) {
      expect((await rows(bytes, 'csv', { encoding })).map((x) => x.data)).toEqual([{ name: 'José', note: '€ “q”' }]);
    }
  });

  it('shift_jis: bytes that do not decode cost their row only', async () => {
    const text = Buffer.from([
      ...Buffer.from('id,name\n1,'),
      0x93,
      0xfa,
      0x96,
      0x7b,
      0x0a,
      ...Buffer.from('2,'),
      0x85,
      0x0a,
      ...Buffer.from('3,x\n'),
    ]);
    const r = await rows(text, 'csv', { encoding: 'shift_jis' });
    expect(r.map((x) => x.readError?.code ?? x.data)).toEqual([
      { id: '1', name: '日本' },
      'MALFORMED_ROW',
      { id: '3', name: 'x' },
    ]);
    expect(r[1]).toMatchObject({ row: 2, line: 3 });
    expect(r[1].readError?.message).toBe('line 3 has bytes that are not valid shift_jis');
    expect(r[1].readError?.expected).toMatch(/--encoding/);
  });
});

describe('bytes that are not UTF-8', () => {
  it('a CSV row with invalid UTF-8 is a row error with its line; nothing shifts', async () => {
    const bytes = Buffer.concat([
      Buffer.from('a,b\n1,ok\n2,caf'),
      Buffer.from([0xe9]),
      Buffer.from('\n3,"multi\nline"\n4,end\n'),
    ]);
    const r = await rows(bytes);
    expect(r.map((x) => [x.row, x.line, x.readError ? x.readError.message : x.data])).toEqual([
      [1, 2, { a: '1', b: 'ok' }],
      [2, 3, 'line 3 has bytes that are not valid utf-8'],
      [3, 4, { a: '3', b: 'multi\nline' }],
      [4, 6, { a: '4', b: 'end' }],
    ]);
  });

  it('inside a quoted field spanning lines: the record is the error, named by the bad line', async () => {
    const bytes = Buffer.concat([Buffer.from('a,b\n1,"x\ny'), Buffer.from([0xff]), Buffer.from('"\n2,z\n')]);
    const r = await rows(bytes);
    expect(r.map((x) => [x.row, x.line, x.readError?.message ?? x.data])).toEqual([
      [1, 2, 'line 3 has bytes that are not valid utf-8'],
      [2, 4, { a: '2', b: 'z' }],
    ]);
  });

  it('a U+FFFD written in the file is a character, not an error', async () => {
    expect((await rows(Buffer.from('a\n\uFFFD x\n'))).map((x) => x.data)).toEqual([{ a: '\uFFFD x' }]);
  });

  it('a header with invalid bytes stops the reading, naming --encoding', async () => {
    await expect(
      rows(Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from(',b\n1,2\n')])),
    ).rejects.toThrow(/line 1: the header has bytes that are not valid utf-8: give --encoding/);
  });

  it('NDJSON: the line with invalid bytes is a row error', async () => {
    const r = await rows(
      Buffer.concat([Buffer.from('{"a":1}\n{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n{"a":3}\n')]),
      'ndjson',
    );
    expect(r.map((x) => x.readError?.message ?? x.data)).toEqual([
      { a: 1 },
      'line 2 has bytes that are not valid utf-8',
      { a: 3 },
    ]);
  });
});

describe('gzip', () => {
  it('csv.gz and ndjson.gz from a stream, chunked anywhere', async () => {
    expect((await rows(gzipSync(Buffer.from(TEXT)), 'tsv.gz', { chunk: 5 })).map((x) => x.data)).toEqual(EXPECTED);
    expect(
      (await rows(gzipSync(Buffer.from('{"a":1}\n{"a":2}\n')), 'ndjson.gz', { chunk: 2 })).map((x) => x.data),
    ).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('concatenated gzip members (gzip a >> f; gzip b >> f) read as one file', async () => {
    const bytes = Buffer.concat([gzipSync(Buffer.from('a,b\n1,2\n')), gzipSync(Buffer.from('3,4\n'))]);
    expect((await rows(bytes, 'csv.gz')).map((x) => x.data)).toEqual([
      { a: '1', b: '2' },
      { a: '3', b: '4' },
    ]);
  });

  it('bytes that are not gzip fail the reading', async () => {
    await expect(rows(Buffer.from('a,b\n1,2\n'), 'csv.gz')).rejects.toThrow(/incorrect header check/);
  });
});
