import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FileCache } from '../../src/services/bureau/file-cache.js';
import {
  buildBureauFeaturesRequest,
  formatTimestampUtc,
  parseFetchedTimestamp,
  type BureauRequestOptions,
} from '../../src/services/bureau/request.js';
import { folderRoot } from '../../src/input/files-root.js';

const SAMPLES = join(dirname(fileURLToPath(import.meta.url)), '../../samples');
const b64 = (name: string): string => readFileSync(join(SAMPLES, 'reports', name)).toString('base64');
const NOW = new Date('2026-11-21T04:05:06.789Z');
const opts: BureauRequestOptions = { filesRoot: folderRoot(SAMPLES, false), now: () => NOW, cache: new FileCache() };
const TOP = { reference_id: 'R1', user_id: 'U1' };

describe('bureau feature request (2.8)', () => {
  const cases: Array<[string, Record<string, unknown>, Partial<BureauRequestOptions>, Record<string, string>]> = [
    [
      'report by path, format detected, ISO timestamp',
      { ...TOP, bureau_report_path: 'reports/bureau_d_softpull.json', fetched_timestamp: '2026-11-20T09:30:00Z' },
      {},
      {
        user_id: 'U1',
        reference_id: 'R1',
        fetched_timestamp: '2026-11-20 09:30:00',
        raw_data: b64('bureau_d_softpull.json'),
        format_type: 'bureau_d_softpull_json',
      },
    ],
    [
      'raw_data column, format_type column, default timestamp now (UTC)',
      { ...TOP, raw_data: b64('bureau_b.xml'), format_type: 'bureau_b_xml' },
      {},
      {
        user_id: 'U1',
        reference_id: 'R1',
        fetched_timestamp: '2026-11-21 04:05:06',
        raw_data: b64('bureau_b.xml'),
        format_type: 'bureau_b_xml',
      },
    ],
    [
      'bureau_raw_json and bureau_type, as for the workflows',
      {
        ...TOP,
        bureau_raw_json: b64('bureau_a.json'),
        bureau_type: 'bureau_a_json',
        fetched_timestamp: '2026-11-20 02:00:00',
      },
      {},
      {
        user_id: 'U1',
        reference_id: 'R1',
        fetched_timestamp: '2026-11-20 02:00:00',
        raw_data: b64('bureau_a.json'),
        format_type: 'bureau_a_json',
      },
    ],
    [
      'a forced format beats the row',
      { ...TOP, bureau_report_path: 'reports/bureau_b.json', format_type: 'bureau_a_json' },
      { format: 'bureau_b_json' },
      {
        user_id: 'U1',
        reference_id: 'R1',
        fetched_timestamp: '2026-11-21 04:05:06',
        raw_data: b64('bureau_b.json'),
        format_type: 'bureau_b_json',
      },
    ],
  ];
  it.each(cases)('%s', async (_name, data, extra, expected) => {
    const r = await buildBureauFeaturesRequest(data, { ...opts, ...extra });
    expect(r).toEqual({ ok: true, value: { body: expected } });
  });

  const broken: Array<
    [string, Record<string, unknown>, Partial<BureauRequestOptions>, Array<[string, string | undefined]>]
  > = [
    [
      'bureau_c_softpull_json_v2 is not accepted by /api/bureau',
      { ...TOP, format_type: 'bureau_c_softpull_json_v2', raw_data: b64('bureau_a.json') },
      {},
      [['format_type', 'REPORT_FORMAT_UNSUPPORTED']],
    ],
    [
      'the SOAP bureau_c report',
      { ...TOP, bureau_report_path: 'reports/bureau_c_soap.xml' },
      {},
      [['bureau_report_path', 'REPORT_FORMAT_UNSUPPORTED']],
    ],
    [
      'no report at all, bad timestamp, long user id',
      { reference_id: 'R', user_id: 'u'.repeat(65), fetched_timestamp: '20-11-2026' },
      {},
      [
        ['user_id', undefined],
        ['fetched_timestamp', undefined],
        ['raw_data', undefined],
      ],
    ],
    [
      'an unknown format name',
      { ...TOP, format_type: 'cibil_json', raw_data: b64('bureau_a.json') },
      {},
      [['format_type', undefined]],
    ],
  ];
  it.each(broken)('%s', async (_name, data, extra, expected) => {
    const r = await buildBureauFeaturesRequest(data, { ...opts, ...extra });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => [e.field, e.code])).toEqual(expected);
  });
});

describe('fetched_timestamp', () => {
  const cases: Array<[unknown, string | undefined]> = [
    ['2026-11-20 02:00:00', '2026-11-20 02:00:00'],
    ['2026-11-20T09:30:00Z', '2026-11-20 09:30:00'],
    ['2026-11-20T09:30:00.123+05:30', '2026-11-20 09:30:00'],
    ['2026-11-20T09:30:00-0400', '2026-11-20 09:30:00'],
    ['2026-11-20T09:30', '2026-11-20 09:30:00'],
    ['2026-11-20', '2026-11-20 00:00:00'],
    [' 2024-02-29 23:59:59 ', '2024-02-29 23:59:59'],
    ['2026-02-29', undefined],
    ['2026-02-30 10:00:00', undefined],
    ['2026-11-20 24:00:00', undefined],
    ['2026-11-20 10:60:00', undefined],
    ['20-11-2026', undefined],
    ['2026/11/20 10:00:00', undefined],
    [1763600000, undefined],
    ['', undefined],
  ];
  it.each(cases)('%j -> %j', (input, expected) => expect(parseFetchedTimestamp(input)).toBe(expected));
  it('formats the run clock in UTC', () =>
    expect(formatTimestampUtc(new Date('2026-01-02T03:04:05Z'))).toBe('2026-01-02 03:04:05'));
});
