/**
 * Broken rows of every kind end in errors.ndjson with their input line and field, and cost no call: the
 * sandbox counts exactly the valid rows' requests.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '@bre-batch/sandbox';
import { ROOT, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { journalText } from '../helpers/output.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ rate: { workflow: null, bureau: null, account: null } });
});
afterAll(() => sb.close());

// The sandbox runs in this process, so the CLI must be spawned asynchronously.
function run(pipeline: string, input: string, out: string, ...more: string[]) {
  return spawnCli(['run', pipeline, '--input', input, '--out', out, '--no-progress', ...more], {
    BRE_BASE_URL: sb.url,
    BRE_CLIENT_ID: sb.clientId,
    BRE_AUTH_TOKEN: sb.authToken,
  });
}

describe('invalid rows cost no call', () => {
  it('CSV: ragged, unclosed quote, not a number, out of range, missing, too long', async () => {
    const dir = tempDir('bre-invalid-');
    const input = join(dir, 'in.csv');
    writeFileSync(
      input,
      [
        'reference_id,user_id,lead_id,latitude,longitude',
        'OK-1,u1,l1,19.07,72.87',
        'BAD-2,u2,l2,19.07',
        'BAD-3,u3,l3,"19.07,72.87',
        'OK-4,u4,l4,12.97,77.59',
        'BAD-5,u5,l5,north,72.87',
        'BAD-6,u6,l6,190,72.87',
        'BAD-7,,l7,19.07,72.87',
        `BAD-8,${'u'.repeat(65)},l8,19.07,72.87`,
        'OK-9,u9,l9,28.61,77.20',
      ].join('\n') + '\n',
    );
    const before = sb.stats().services.workflow.requests;
    const out = join(dir, 'out');
    const r = await run('location', input, out);
    expect(r.code, r.stderr).toBe(1);
    expect(sb.stats().services.workflow.requests - before).toBe(3);
    const errors = journalText(join(out, 'errors.ndjson'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const byKey = Object.fromEntries(errors.map((e) => [e.key ?? `line${e.line}`, e]));
    expect(errors).toHaveLength(6);
    // Too few columns: the key cell is there, the line names it.
    expect(byKey['BAD-2']).toMatchObject({ code: 'MALFORMED_ROW', line: 3, row: 2 });
    expect(byKey.line4).toMatchObject({ code: 'MALFORMED_ROW', line: 4, row: 3 });
    expect(byKey['BAD-5']).toMatchObject({ code: 'INVALID_ROW', line: 6, field: 'latitude' });
    expect(byKey['BAD-5'].expected).toMatch(/number/);
    expect(byKey['BAD-6']).toMatchObject({ code: 'INVALID_ROW', field: 'latitude' });
    expect(byKey['BAD-7']).toMatchObject({ code: 'INVALID_ROW', field: 'user_id' });
    expect(byKey['BAD-8']).toMatchObject({ code: 'INVALID_ROW', field: 'user_id' });
    expect(byKey['BAD-8'].expected).toMatch(/64/);
    for (const e of errors) expect(e.attempts).toBe(0);
  });

  it('NDJSON and a bureau report path that does not exist', async () => {
    const dir = tempDir('bre-invalid-');
    const input = join(dir, 'in.ndjson');
    writeFileSync(
      input,
      [
        JSON.stringify({
          reference_id: 'OK-1',
          user_id: 'u1',
          bureau_report_path: join(ROOT, 'samples', 'reports', 'bureau_a.json'),
        }),
        '{not json',
        JSON.stringify({ reference_id: 'BAD-3', user_id: 'u3', bureau_report_path: 'reports/missing.json' }),
        JSON.stringify({
          reference_id: 'BAD-4',
          user_id: 'u4',
          bureau_report_path: join(ROOT, 'samples', 'reports', 'bureau_c_soap.xml'),
        }),
        '[1,2]',
      ].join('\n') + '\n',
    );
    const before = sb.stats().services.bureau.requests;
    const out = join(dir, 'out');
    // The reports are named by absolute paths inside samples/, the files root.
    const r = await run('bureau_features', input, out, '--files-root', join(ROOT, 'samples'));
    expect(r.code, r.stderr).toBe(1);
    expect(sb.stats().services.bureau.requests - before).toBe(1);
    const errors = journalText(join(out, 'errors.ndjson'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(errors.map((e) => [e.line, e.code])).toEqual(
      expect.arrayContaining([
        [2, 'MALFORMED_ROW'],
        [3, 'REPORT_UNREADABLE'],
        [4, 'REPORT_FORMAT_UNSUPPORTED'],
        [5, 'MALFORMED_ROW'],
      ]),
    );
    expect(errors.find((e) => e.line === 3).field).toBe('bureau_report_path');
  });
});
