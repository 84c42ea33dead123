/**
 * Input as it really arrives (issue 12), through the CLI against the sandbox, each file written the way the
 * real tool writes it: Excel's `;` CSV of a decimal-comma locale (windows-1252, CR LF), Excel's "Unicode
 * text" (UTF-16LE with its BOM, TAB-separated), a header with drifted names, values with CR LF and stray
 * quotes, gzip on stdin and a ZSTD Parquet file from arrow-rs (what Polars, Spark and DuckDB write).
 * What the CLI sent is read at a proxy between it and the sandbox that keeps the request bodies. The readers
 * are the point: most runs are the CLI's code in this process (runInProcess: the same options, resolution and
 * executeRun, without a CLI's start-up each); stdin, and one exit 2 of each kind through main.ts, are a
 * spawned CLI's.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as arrow from 'apache-arrow';
import iconv from 'iconv-lite';
import * as pq from 'parquet-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runArgs, spawnCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { readOutput } from '../helpers/output.js';
import { startCountingProxy, type CountingProxy } from '../helpers/proxy.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

/** The request bodies the proxy saw, parsed. */
function sentBodies(proxy: CountingProxy): Record<string, any>[] {
  return proxy.bodies.map((b) => JSON.parse(b) as Record<string, any>);
}

const SAMPLE = readFileSync(join(ROOT, 'samples', 'location.csv'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => l.split(','));
const ROWS = SAMPLE.length - 1;

/** Results as comparable across runs: the ids the service stamps on each call and each folder's run id left out. */
function decisions(dir: string): string[] {
  return readOutput(dir)
    .results.map((l) => JSON.stringify(l, (k, v) => (k === 'request_id' || k === 'run_id' ? undefined : v)))
    .sort();
}

function writeText(dir: string, name: string, bytes: Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

describe('input as it really arrives, through the CLI', () => {
  let sb: TestSandbox;
  let rec: CountingProxy;
  let reference: string[];
  const dir = tempDir('bre-e2e-input-');
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null, bureau: null, account: null } });
    rec = await startCountingProxy(sb.sandbox.url, { keepBodies: true });
    const out = join(dir, 'reference');
    const r = await runInProcess(runArgs('location', join(ROOT, 'samples', 'location.csv'), out), sb.env());
    expect(r.code, r.stderr).toBe(0);
    reference = decisions(out);
    expect(reference).toHaveLength(ROWS);
  });
  afterAll(async () => {
    await rec?.close();
    await sb?.close();
  });

  describe("Excel's ';' CSV of a decimal-comma locale (windows-1252, CR LF)", () => {
    // Excel writes the numbers as the locale shows them: 19,076; a name with é in the code page.
    const lines = SAMPLE.map((cells, i) =>
      (i === 0
        ? cells
        : [cells[0], i === 3 ? 'josé' : cells[1], cells[2], cells[3].replace('.', ','), cells[4].replace('.', ',')]
      ).join(';'),
    );
    const bytes = iconv.encode(`${lines.join('\r\n')}\r\n`, 'windows-1252');

    it('as is: the separator is sniffed and said; commas in numbers are refused naming --decimal-comma; the é row is its own error', async () => {
      const input = writeText(dir, 'semicolon.csv', bytes);
      const out = join(dir, 'semicolon-out');
      const r = await runInProcess(runArgs('location', input, out), sb.env());
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(
        "input: fields separated by ';' (semicolon) (sniffed from the first lines; --delimiter chooses another)",
      );
      const o = readOutput(out);
      // Not "3 columns, the header has 1": every row is read; only the é row is unreadable.
      expect(o.errors.filter((e) => e.code === 'MALFORMED_ROW').map((e) => e.row)).toEqual([3]);
      const byRow = new Map(o.errors.map((e) => [e.row, e]));
      expect(byRow.get(3)).toMatchObject({
        code: 'MALFORMED_ROW',
        line: 4,
        message: 'line 4 has bytes that are not valid utf-8',
      });
      expect(byRow.get(1)).toMatchObject({ code: 'INVALID_ROW', field: 'latitude' });
      expect(String(byRow.get(1)!.message)).toMatch(
        /latitude: Expected a number between -90 and 90; a comma in a number of a file separated by ';' is not guessed: give --decimal-comma if it is the decimal separator \(19,076 then reads as 19\.076\)/,
      );
      expect(o.errors).toHaveLength(ROWS);
    });

    it('with --decimal-comma --encoding windows-1252: every row, 19,076 sent as 19.076, é as é', async () => {
      const input = writeText(dir, 'semicolon2.csv', bytes);
      const out = join(dir, 'semicolon2-out');
      rec.reset();
      const r = await runInProcess(
        runArgs('location', input, out, '--decimal-comma', '--encoding', 'windows-1252'),
        sb.env(rec.url),
      );
      expect(r.code, r.stderr).toBe(0);
      const sent = new Map(sentBodies(rec).map((b) => [b.reference_id, b]));
      expect(sent.get('LOC-0001')!.input_data).toMatchObject({ latitude: 19.076, longitude: 72.8777 });
      expect(sent.get('LOC-0003')!.user_id).toBe('josé');
      expect(decisions(out)).toEqual(reference);
      // How the rows were read is recorded: a resume must read them the same way.
      expect(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).input.reading).toEqual({
        encoding: 'windows-1252',
        delimiter: ';',
        decimal_comma: true,
      });
    });
  });

  it('Excel\'s "Unicode text" (UTF-16LE with BOM, TAB, CR LF, .txt): read as the CSV is, TAB said', async () => {
    const text = `${SAMPLE.map((c) => c.join('\t')).join('\r\n')}\r\n`;
    const input = writeText(
      dir,
      'unicode.txt',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
    );
    const out = join(dir, 'unicode-out');
    const r = await runInProcess(runArgs('location', input, out, '--input-format', 'csv'), sb.env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('input: fields separated by TAB');
    expect(decisions(out)).toEqual(reference);
  });

  describe('the header check', () => {
    it("'Reference_ID' and ' user_id ' are the pipeline's columns (trimmed, case-insensitive)", async () => {
      const text =
        [' Reference_ID', ' user_id ', 'Lead_ID', 'LATITUDE', 'Longitude'].join(',') +
        '\n' +
        SAMPLE.slice(1)
          .map((c) => c.join(','))
          .join('\n');
      const out = join(dir, 'drift-out');
      const r = await runInProcess(runArgs('location', writeText(dir, 'drift.csv', Buffer.from(text)), out), sb.env());
      expect(r.code, r.stderr).toBe(0);
      expect(decisions(out)).toEqual(reference);
    });

    it.each([
      ['run', []],
      ['run --dry-run', ['--dry-run']],
      ['run --plan', ['--plan']],
    ])(
      '%s: a missing column is exit 2 before any call or output folder, naming it, the header and the fix',
      async (_name, extra) => {
        const text = 'reference_id,user_id,lead,lat,longitude\nA,u,l,19.07,72.87\n';
        const out = join(dir, `missing-out-${extra.join('')}`);
        const before = sb.sandbox.stats().services.workflow.requests;
        // The plain run through main.ts; --dry-run and --plan in this process.
        const r = await (extra.length === 0 ? spawnCli : runInProcess)(
          runArgs('location', writeText(dir, 'missing.csv', Buffer.from(text)), out, ...extra),
          sb.env(),
        );
        expect(r.code).toBe(2);
        expect(existsSync(out)).toBe(false);
        expect(sb.sandbox.stats().services.workflow.requests).toBe(before);
        expect(r.stderr).toContain(
          "bre-batch: Expected the input's header to have every column pipeline 'location' needs in every row; missing: lead_id, latitude",
        );
        expect(r.stderr).toContain(
          'header as read: line 1, 5 columns, fields separated by \',\' (comma): "reference_id", "user_id", "lead", "lat", "longitude"',
        );
        expect(r.stderr).toContain("did you mean: 'lead' for lead_id; 'lat' for latitude?");
        expect(r.stderr).toMatch(/fix: rename the header's columns to the pipeline's names/);
      },
    );

    it('two columns equal apart from case are refused (exit 2)', async () => {
      const out = join(dir, 'collide-out');
      const r = await runInProcess(
        runArgs(
          'location',
          writeText(
            dir,
            'collide.csv',
            Buffer.from('reference_id,user_id,User_ID,lead_id,latitude,longitude\nA,u,U,l,1,2\n'),
          ),
          out,
        ),
        sb.env(),
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/'user_id' \(column 2\) and 'User_ID' \(column 3\) differ only in case/);
      expect(existsSync(out)).toBe(false);
    });
  });

  describe('values reach the API byte for byte', () => {
    const pipeline = join(tempDir('bre-e2e-pipe-'), 'faithful.yaml');
    writeFileSync(
      pipeline,
      'name: faithful\ndescription: location with free-text columns sent as given\nkey: reference_id\nstages:\n  - id: loc\n    kind: workflow\n    endpoint: location_bre\n    options:\n      pass_columns: [note, height]\n',
    );

    it('CR LF inside a quoted field stays CR LF; spaces stay; a stray quote in an unquoted field is a character', async () => {
      const text = [
        'reference_id,user_id,lead_id,latitude,longitude,note,height',
        'F-1,u1,l1,19.076,72.8777,"first line\r\nsecond line",  6 ft  ',
        `F-2,u2,l2,28.6139,77.209,37°36'37.8"N,5'10"`,
        'F-3,u3,l3,"12.9716",77.5946,"say ""hi""\nthen LF",plain',
      ].join('\r\n');
      const out = join(dir, 'faithful-out');
      rec.reset();
      const r = await runInProcess(
        runArgs(pipeline, writeText(dir, 'faithful.csv', Buffer.from(`${text}\r\n`)), out),
        sb.env(rec.url),
      );
      expect(r.code, r.stderr).toBe(0);
      const sent = new Map(sentBodies(rec).map((b) => [b.reference_id, b.input_data]));
      expect(sent.get('F-1')).toMatchObject({ note: 'first line\r\nsecond line', height: '  6 ft  ' });
      expect(sent.get('F-2')).toMatchObject({ note: `37°36'37.8"N`, height: `5'10"` });
      expect(sent.get('F-3')).toMatchObject({ note: 'say "hi"\nthen LF', height: 'plain', latitude: 12.9716 });
    });

    it('really broken quoting keeps its behaviour: one error line, reading goes on at the next record', async () => {
      const text =
        'reference_id,user_id,lead_id,latitude,longitude,note,height\nB-1,u1,l1,19.076,72.8777,"closed"then text,x\nB-2,u2,l2,28.6139,77.209,fine,y\n';
      const out = join(dir, 'broken-out');
      const r = await runInProcess(runArgs(pipeline, writeText(dir, 'broken.csv', Buffer.from(text)), out), sb.env());
      expect(r.code).toBe(1);
      const o = readOutput(out);
      expect(o.errors).toEqual([expect.objectContaining({ row: 1, line: 2, code: 'MALFORMED_ROW' })]);
      expect(o.results.map((l) => l.key)).toEqual(['B-2']);
    });
  });

  it('gzip on stdin with --input-format csv.gz', async () => {
    const out = join(dir, 'stdin-gz-out');
    const r = await spawnCli([...runArgs('location', '-', out), '--input-format', 'csv.gz'], sb.env(), {
      stdin: gzipSync(readFileSync(join(ROOT, 'samples', 'location.csv'))),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(decisions(out)).toEqual(reference);
  });

  it('a ZSTD Parquet file written by arrow-rs (parquet-wasm): the same results as the CSV', async () => {
    const columns = Object.fromEntries(
      SAMPLE[0].map((name, j) => [
        name,
        j >= 3 ? Float64Array.from(SAMPLE.slice(1).map((c) => Number(c[j]))) : SAMPLE.slice(1).map((c) => c[j]),
      ]),
    );
    const props = new pq.WriterPropertiesBuilder().setCompression(pq.Compression.ZSTD).setMaxRowGroupSize(5).build();
    const input = writeText(
      dir,
      'zstd.parquet',
      Buffer.from(
        pq.writeParquet(pq.Table.fromIPCStream(arrow.tableToIPC(arrow.tableFromArrays(columns), 'stream')), props),
      ),
    );
    const out = join(dir, 'zstd-out');
    const r = await runInProcess(runArgs('location', input, out), sb.env());
    expect(r.code, r.stderr).toBe(0);
    expect(decisions(out)).toEqual(reference);
    expect(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).input).toMatchObject({
      format: 'parquet',
      reading: { encoding: null, delimiter: null, decimal_comma: false },
    });
  });

  it('stdin cannot be Parquet; --delimiter with NDJSON and an unknown --encoding are usage errors', async () => {
    const out = join(dir, 'usage-out');
    const cases: [string[], RegExp][] = [
      [
        [...runArgs('location', '-', out), '--input-format', 'parquet'],
        /Expected a Parquet file, got --input - \(stdin\)/,
      ],
      [
        [...runArgs('location_then_bank', join(ROOT, 'samples', 'location_then_bank.ndjson'), out), '--delimiter', ';'],
        /Expected --delimiter only with CSV or TSV input, got it with ndjson/,
      ],
      [
        [...runArgs('location', join(ROOT, 'samples', 'location.csv'), out), '--encoding', 'klingon'],
        /Expected --encoding to be an encoding name such as/,
      ],
      [
        [...runArgs('location', join(ROOT, 'samples', 'location.csv'), out), '--delimiter', ';;'],
        /Expected --delimiter to be one character/,
      ],
    ];
    // The first (stdin) a spawned CLI's; the others in this process.
    for (const [i, [args, message]] of cases.entries()) {
      const r = await (i === 0 ? spawnCli : runInProcess)(args, sb.env());
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(existsSync(out)).toBe(false);
  });
});
