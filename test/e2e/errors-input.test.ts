/**
 * The errors file quotes the row faithfully, through a real run: an empty cell is empty in `input` (not a
 * latitude of 0), a value masked in `input` is said the same way in the message (no `got 'abc'` beside
 * `[text of 3 characters]`), and a record with the wrong number of columns keeps its key when its key cell is there.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runArgs, spawnCli } from '../helpers/cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { journalText } from '../helpers/output.js';

interface ErrorLine {
  row: number;
  key: string | null;
  code: string;
  message: string;
  errors?: { message: string }[];
  input: Record<string, unknown> | null;
}

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startTestSandbox({ rate: { workflow: null } });
});
afterAll(async () => {
  await sb.close();
});

describe('errors.ndjson quotes the row as it was', () => {
  it('empty cells, masked values and rows of the wrong width', async () => {
    const dir = tempDir();
    const input = join(dir, 'in.csv');
    writeFileSync(
      input,
      [
        'reference_id,user_id,lead_id,latitude,longitude',
        'OK-1,user1,lead1,19.076,72.8777',
        'BAD-5,user5,lead5,,72.8',
        'BAD-6,user6,lead6,abc,72.8',
        'BAD-7,user7,lead7,19.07',
        'BAD-8,user8,lead8,19.07,72.8,extra',
        '',
      ].join('\n'),
    );
    const out = join(dir, 'out');
    const r = await spawnCli(runArgs('location', input, out, '--rate', 'off'), sb.env());
    expect(r.code, r.stderr).toBe(1);
    // Off a terminal (this spawn's stderr is a pipe) the run says its plan when it starts, in place of a bar
    // (--no-progress, which runArgs gives, turns the bar off, not the lines).
    expect(r.stderr.split('\n')).toContain(
      'plan: 5 rows to do, 5 calls (workflow 5 unlimited), as fast as the services answer (--rate off); a progress line every minute (no terminal for a bar)',
    );
    const lines = journalText(join(out, 'errors.ndjson'))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as ErrorLine);
    const byKey = new Map(lines.map((l) => [l.key, l]));
    expect([...byKey.keys()].sort()).toEqual(['BAD-5', 'BAD-6', 'BAD-7', 'BAD-8']);
    // The empty latitude: empty, as in the file; the longitude masked to about 1 km as always.
    expect(byKey.get('BAD-5')!.input).toEqual({
      reference_id: 'BAD-5',
      user_id: 'user5',
      lead_id: 'lead5',
      latitude: '',
      longitude: 72.8,
    });
    // A value masked in the row is said by the same words in the message: its kind, not the value.
    const six = byKey.get('BAD-6')!;
    expect(six.input!.latitude).toBe('[text of 3 characters]');
    expect(six.message).toBe('latitude: Expected a number between -90 and 90, got text of 3 characters');
    expect(JSON.stringify(six)).not.toContain("'abc'");
    expect(six.errors!.map((e) => e.message)).toEqual([six.message]);
    // Too few and too many columns: MALFORMED_ROW naming the row's key; its cells are not shown (they may be shifted).
    for (const [key, row, n] of [
      ['BAD-7', 4, 4],
      ['BAD-8', 5, 6],
    ] as const) {
      expect(byKey.get(key)).toMatchObject({
        row,
        code: 'MALFORMED_ROW',
        message: `line ${row + 1}: ${n} columns, the header has 5`,
        input: null,
      });
    }
  });

  it('--keep-personal-data quotes the value as given', async () => {
    const dir = tempDir();
    const input = join(dir, 'in.csv');
    writeFileSync(input, 'reference_id,user_id,lead_id,latitude,longitude\nBAD-6,user6,lead6,abc,72.8\n');
    const out = join(dir, 'out');
    const r = await spawnCli(runArgs('location', input, out, '--rate', 'off', '--keep-personal-data'), sb.env());
    expect(r.code, r.stderr).toBe(1);
    const [line] = journalText(join(out, 'errors.ndjson'))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as ErrorLine);
    expect(line.message).toBe("latitude: Expected a number between -90 and 90, got 'abc'");
    expect(line.input!.latitude).toBe('abc');
  });
});
