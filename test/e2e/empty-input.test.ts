/**
 * The first night's inputs that are not what they should be, through the CLI as a user runs it: an input with
 * no data rows (0 bytes, a header only, blank lines, NDJSON blank lines, gzip'ed empty files, a Parquet file with a schema and no rows, an empty PostgreSQL table and query) is exit 2 naming the file and what it held, for `run`,
 * `--dry-run` and `--plan` alike, unless --allow-empty (exit 0, said in the summary); a binary file says what
 * it is and a missing path says it does not exist. Nothing is called and no folder is made when refused; with
 * --allow-empty nothing is called either: no built-in sandbox is started and no service reached.
 * Each test's first command is a spawned CLI (the exit code and message through main.ts, as a user sees them);
 * its others run the same options, resolution and executeRun in this process (runInProcess), without a CLI's
 * start-up each.
 */
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { runArgs, spawnCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { freshDatabase, itDb } from '../helpers/db.js';
import { sql } from '../helpers/db-load.js';
import { tempDir } from '../helpers/temp.js';

const HEADER = 'reference_id,user_id,lead_id,latitude,longitude\n';

/** A Parquet file with the location pipeline's columns in its schema and no rows (as an export of nothing). */
const emptyParquet = (): Buffer =>
  Buffer.from(
    parquetWriteBuffer({
      columnData: [
        { name: 'reference_id', data: [], type: 'STRING' },
        { name: 'user_id', data: [], type: 'STRING' },
        { name: 'lead_id', data: [], type: 'STRING' },
        { name: 'latitude', data: [], type: 'DOUBLE' },
        { name: 'longitude', data: [], type: 'DOUBLE' },
      ],
    }),
  );

describe('an input with no data rows', () => {
  const dir = tempDir();
  const cases: [string, string, Buffer | string, RegExp][] = [
    ['0 bytes', 'empty.csv', '', /got 0 bytes/],
    [
      'a header only',
      'header.csv',
      HEADER,
      /got a header only \(5 columns: reference_id, user_id, lead_id, latitude, longitude\)/,
    ],
    ['blank lines only', 'blank.csv', '\n\n  \n\r\n', /got only blank lines/],
    ['NDJSON of blank lines', 'blank.ndjson', '\n\n', /got only blank lines/],
    ["a gzip'ed header only", 'header.csv.gz', gzipSync(HEADER), /got a header only/],
    ["a gzip'ed 0 bytes", 'empty.ndjson.gz', gzipSync(''), /no data rows once decompressed/],
    [
      'a Parquet file with a schema and no rows',
      'empty.parquet',
      emptyParquet(),
      /got 0 rows \(its schema has 5 columns: reference_id, user_id, lead_id, latitude, longitude\)/,
    ],
    ['a Parquet file of 0 bytes', 'nothing.parquet', '', /got 0 bytes/],
  ];
  for (const [what, name, content, said] of cases) {
    it(`${what}: exit 2 naming the file and what it held, nothing written; run, --dry-run and --plan alike`, async () => {
      const input = join(dir, name);
      writeFileSync(input, content);
      for (const extra of [[], ['--dry-run'], ['--plan']]) {
        const out = join(dir, `out-${name}-${extra.join('')}`);
        const r = await (extra.length === 0 ? spawnCli : runInProcess)(runArgs('location', input, out, ...extra));
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain(`Expected data rows in the input ${input}, got`);
        expect(r.stderr).toMatch(said);
        expect(r.stderr).toContain('--allow-empty');
        expect(r.stdout).toBe('');
        expect(existsSync(out), `${out} was made`).toBe(false);
      }
    });
  }

  it('--allow-empty: exit 0, an empty folder and a summary that says the night was empty; --plan says so too', async () => {
    const input = join(dir, 'allowed.csv');
    writeFileSync(input, HEADER);
    const out = join(dir, 'out-allowed');
    const r = await spawnCli(runArgs('location', input, out, '--allow-empty'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('rows: 0 succeeded, 0 in errors');
    expect(r.stdout).toContain('input: no data rows, it held a header only (5 columns: reference_id');
    expect(r.stdout).toContain('--allow-empty: an empty night');
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      finished: boolean;
      input_empty?: string;
      rows: { read: number };
    };
    expect(summary.finished).toBe(true);
    expect(summary.rows.read).toBe(0);
    expect(summary.input_empty).toMatch(/^a header only/);
    const plan = await runInProcess(
      runArgs('location', input, join(dir, 'out-allowed-plan'), '--plan', '--allow-empty'),
    );
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('rows to do: 0');
    expect(plan.stdout).toContain('input: no data rows, it held a header only');
  });

  it('--allow-empty ends before the services: no built-in sandbox started, and the folder of a run with no rows', async () => {
    const input = join(dir, 'zero.csv');
    writeFileSync(input, '');
    const out = join(dir, 'out-zero');
    const r = await spawnCli(runArgs('location', input, out, '--allow-empty'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('input: no data rows, it held 0 bytes (--allow-empty: an empty night, nothing to do)');
    expect(r.stderr).not.toContain('built-in sandbox');
    // The control: the same command with one row does start it (and says so), so the line above can be missed.
    const one = join(dir, 'one.csv');
    writeFileSync(one, `${HEADER}LOC-1,u1,lead1,19.07,72.87\n`);
    const ran = await runInProcess(runArgs('location', one, join(dir, 'out-one')));
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toContain('no BRE_BASE_URL set: using the built-in sandbox at http://127.0.0.1:');
    // What README's output folder lists for a run, with no rows in it; nothing of the run's own left running.
    expect(readdirSync(out).sort()).toEqual([
      '.state',
      'errors.ndjson',
      'errors.parquet',
      'manifest.json',
      'report.html',
      'results.csv',
      'results.ndjson',
      'results.parquet',
      'summary.json',
    ]);
    expect(readFileSync(join(out, 'results.csv'), 'utf8')).toMatch(/^row,key,location\.decision,[^\n]*\n$/);
    // .state/ is the run's own bookkeeping (README): its lock released, no spool of results left behind.
    expect(readdirSync(join(out, '.state')).filter((f) => f === 'lock' || /spool|\.tmp$/.test(f))).toEqual([]);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      finished: boolean;
      input_empty?: string;
      stages: Record<string, { calls: number }>;
    };
    expect(summary.finished).toBe(true);
    expect(summary.input_empty).toBe('0 bytes');
    expect(summary.stages.location.calls).toBe(0);
  });

  it("--allow-empty with the user's services: none is reached (no connection, not even the check before the run)", async () => {
    const connections: Socket[] = [];
    const server = createServer((socket) => {
      connections.push(socket);
      socket.destroy();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const env = { BRE_BASE_URL: `http://127.0.0.1:${port}`, BRE_CLIENT_ID: 'c1', BRE_AUTH_TOKEN: 't0123456789' };
      const input = join(dir, 'empty-services.csv');
      writeFileSync(input, HEADER);
      const r = await spawnCli(runArgs('location', input, join(dir, 'out-services'), '--allow-empty'), env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('input: no data rows, it held a header only');
      expect(connections).toHaveLength(0);
      // The control: a dry run of one row calls nothing either, yet checks the service first (a connection).
      const one = join(dir, 'one-services.csv');
      writeFileSync(one, `${HEADER}LOC-1,u1,lead1,19.07,72.87\n`);
      const dry = await runInProcess(runArgs('location', one, join(dir, 'out-services-dry'), '--dry-run'), env);
      expect(dry.code, dry.stderr).toBe(0);
      expect(connections.length).toBeGreaterThan(0);
    } finally {
      server.close();
    }
  });

  it('--allow-empty with a Parquet file of no rows: exit 0, the summary names its schema, results.parquet empty', async () => {
    const input = join(dir, 'allowed.parquet');
    writeFileSync(input, emptyParquet());
    const out = join(dir, 'out-allowed-parquet');
    const r = await spawnCli(runArgs('location', input, out, '--allow-empty'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('input: no data rows, it held 0 rows (its schema has 5 columns: reference_id');
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      input_empty?: string;
      rows: { read: number };
    };
    expect(summary.rows.read).toBe(0);
    expect(summary.input_empty).toMatch(/^0 rows \(its schema has 5 columns/);
    expect(readFileSync(join(out, 'results.ndjson'), 'utf8')).toBe('');
  });
});

describe('an empty database input (PostgreSQL)', () => {
  itDb('postgres')(
    'an empty table and a query returning nothing: exit 2 naming them; --allow-empty: exit 0',
    async () => {
      const url = await freshDatabase('postgres');
      await sql(
        url,
        'CREATE TABLE applicants (reference_id text PRIMARY KEY, user_id text, lead_id text, latitude numeric, longitude numeric)',
      );
      const dir = tempDir();
      const table = await spawnCli([
        'run',
        'location',
        '--input',
        url,
        '--table',
        'applicants',
        '--out',
        join(dir, 'a'),
        '--no-progress',
      ]);
      expect(table.code, table.stderr).toBe(2);
      expect(table.stderr).toMatch(
        /Expected data rows in table applicants at postgres:\/\/[^ ]+, got an empty table \(0 rows\)/,
      );
      expect(existsSync(join(dir, 'a'))).toBe(false);
      await sql(url, "INSERT INTO applicants VALUES ('LOC-1', 'u1', 'l1', 19.07, 72.87)");
      const query = await runInProcess([
        'run',
        'location',
        '--input',
        url,
        '--query',
        'SELECT * FROM applicants WHERE latitude > 90',
        '--out',
        join(dir, 'q'),
        '--no-progress',
        '--plan',
      ]);
      expect(query.code, query.stderr).toBe(2);
      expect(query.stderr).toContain('got a query that returned 0 rows');
      const allowed = await runInProcess([
        'run',
        'location',
        '--input',
        url,
        '--query',
        'SELECT * FROM applicants WHERE latitude > 90',
        '--out',
        join(dir, 'ok'),
        '--no-progress',
        '--allow-empty',
      ]);
      expect(allowed.code, allowed.stderr).toBe(0);
      expect(allowed.stdout).toContain('input: no data rows, it held a query that returned 0 rows');
    },
  );
});

describe('a file that is not the input it should be', () => {
  const dir = tempDir();

  it('a PNG renamed .csv says it is a PNG image, not "give --encoding"', async () => {
    const input = join(dir, 'photo.csv');
    writeFileSync(
      input,
      Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)]),
    );
    const r = await spawnCli(runArgs('location', input, join(dir, 'o1')));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`Expected a CSV text file, got '${input}', which is a PNG image`);
    expect(r.stderr).not.toContain('--encoding with');
  });

  it('random bytes say binary data; an Excel workbook says to save it as CSV', async () => {
    let seed = 7;
    const bytes = Buffer.from(
      Array.from({ length: 4096 }, () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) >> 16) & 0xff),
    );
    writeFileSync(join(dir, 'random.ndjson'), bytes);
    const r = await spawnCli(runArgs('location', join(dir, 'random.ndjson'), join(dir, 'o2')));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/Expected an NDJSON text file, got '[^']+random\.ndjson', which is binary data/);
    writeFileSync(join(dir, 'book.csv'), Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(100)]));
    const x = await runInProcess(runArgs('location', join(dir, 'book.csv'), join(dir, 'o3')));
    expect(x.code).toBe(2);
    expect(x.stderr).toContain('a ZIP archive (an Excel .xlsx file is one: save it as CSV)');
  });

  it('windows-1252 text is still text (read with --encoding), and UTF-16 with a byte order mark is not binary', async () => {
    const latin = join(dir, 'latin.csv');
    writeFileSync(latin, Buffer.from(`${HEADER}LOC-1,Jos\xe9,lead1,19.07,72.87\n`, 'latin1'));
    const r = await spawnCli(runArgs('location', latin, join(dir, 'o4'), '--dry-run', '--encoding', 'windows-1252'));
    expect(r.code, r.stderr).toBe(0);
    const utf16 = join(dir, 'utf16.csv');
    writeFileSync(
      utf16,
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${HEADER}LOC-1,u1,lead1,19.07,72.87\n`, 'utf16le')]),
    );
    const u = await runInProcess(runArgs('location', utf16, join(dir, 'o5'), '--dry-run'));
    expect(u.code, u.stderr).toBe(0);
  });

  it('a missing path says the file does not exist (no raw ENOENT); a folder says it is a folder', async () => {
    const missing = join(dir, 'no-such-export.csv');
    const r = await spawnCli(runArgs('location', missing, join(dir, 'o6')));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`Expected --input to be a file, got '${missing}', which does not exist`);
    expect(r.stderr).not.toContain('ENOENT');
    const folder = join(dir, 'folder.csv');
    mkdirSync(folder);
    const f = await runInProcess(runArgs('location', folder, join(dir, 'o7'), '--plan'));
    expect(f.code).toBe(2);
    expect(f.stderr).toContain('which is a folder');
  });
});
