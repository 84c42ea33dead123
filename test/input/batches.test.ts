import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readRowBatches } from '@bre-batch/formats/input/read';
import type { InputRow } from '@bre-batch/core/types';

/** The text cut into chunks at the given sizes (cycled): chunk edges fall inside lines, quotes, CRLF, UTF-8. */
function chunked(text: string, sizes: readonly number[]): Readable {
  const buf = Buffer.from(text);
  const parts: Buffer[] = [];
  for (let at = 0, i = 0; at < buf.length; i += 1) {
    const n = sizes[i % sizes.length];
    parts.push(buf.subarray(at, at + n));
    at += n;
  }
  return Readable.from(parts);
}

async function batches(
  text: string,
  format: 'csv' | 'ndjson',
  sizes: readonly number[],
  maxRecordBytes = 64,
): Promise<InputRow[][]> {
  const out: InputRow[][] = [];
  for await (const b of readRowBatches('-', { format, stream: chunked(text, sizes), maxRecordBytes })) out.push(b);
  return out;
}

const CSV =
  '\uFEFFid,name,note\r\n1,Åsa,"multi\nline"\r\n2,"unclosed,x\n3,Bob,plain\n\n4,"a ""quoted"" word",z\n5,' +
  'y'.repeat(80) +
  ',long\n6,last,row';
const NDJSON =
  '{"id":1,"name":"Åsa"}\n\nnot json\n{"id":3}\r\n[1,2]\n{"id":5,"note":"' + 'y'.repeat(80) + '"}\n{"id":6}';

describe('rows in batches: the same rows whatever the chunking', () => {
  it.each([
    ['csv', CSV],
    ['ndjson', NDJSON],
  ] as const)(
    '%s: one chunk and chunks of 1..7 bytes give the same rows, in order, no empty batch',
    async (format, text) => {
      const whole = (await batches(text, format, [1 << 20])).flat();
      expect(whole.length).toBeGreaterThan(4);
      expect(whole.map((r) => r.row)).toEqual(whole.map((_, i) => i + 1));
      for (const sizes of [[1], [2, 3], [7, 1, 5]]) {
        const got = await batches(text, format, sizes);
        expect(got.every((b) => b.length > 0)).toBe(true);
        expect(got.flat()).toEqual(whole);
      }
    },
  );

  it('any chunking of generated CSV gives the rows of the whole file', async () => {
    const cell = fc.oneof(
      fc.stringMatching(/^[a-z0-9 ]{0,6}$/),
      fc.stringMatching(/^[a-z",\n]{0,6}$/).map((s) => `"${s.replace(/"/g, '""')}"`),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(cell, cell), { minLength: 1, maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }),
        async (records, sizes) => {
          const text = `a,b\n${records.map(([x, y]) => `${x},${y}`).join('\n')}\n`;
          const whole = (await batches(text, 'csv', [1 << 20], 1 << 20)).flat();
          expect((await batches(text, 'csv', sizes, 1 << 20)).flat()).toEqual(whole);
        },
      ),
      { numRuns: 150 },
    );
  });
});
