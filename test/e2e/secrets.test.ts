/**
 * Secrets (issue 5, point 6): the auth token, report URLs, file URLs and file passwords never reach any file
 * of the output folder (except secrets.ndjson, mode 0600, which exists to hold the links), stdout or stderr,
 * including error messages quoting a body cut short. The token comes only from the environment or an
 * owner-only file; a non-loopback base URL must be https.
 */
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { excerpt } from '../../src/http/classify.js';
import { ROOT, runArgs, spawnCli, type CliResult } from '../helpers/cli.js';
import {
  filesUnder,
  invariantProblems,
  journalPath,
  journalText,
  readOutput,
  searchableText,
} from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

/** The sample input of an account pipeline, repeated to `n` rows with fresh reference ids. */
function accountInput(dir: string, sample: string, n: number, prefix: string): string {
  const [header, ...rows] = readFileSync(join(ROOT, 'samples', sample), 'utf8')
    .trimEnd()
    .split('\n');
  const out = [header];
  for (let i = 0; i < n; i += 1) {
    const cells = rows[i % rows.length].split(',');
    cells[0] = `${prefix}-${String(i + 1).padStart(4, '0')}`;
    out.push(cells.join(','));
  }
  const path = join(dir, sample);
  writeFileSync(path, `${out.join('\n')}\n`);
  return path;
}

interface Secret {
  name: string;
  value: string;
}

/** The secrets of each line of secrets.ndjson (one line a row). */
function secretLines(out: string): Secret[][] {
  const path = join(out, 'secrets.ndjson');
  return journalText(path)
    .trimEnd()
    .split('\n')
    .map((l) => (JSON.parse(l) as { secrets: Secret[] }).secrets);
}

/** Every place a secret was found: files of the folder (secrets.ndjson excepted) and the process's output. */
function leaks(out: string, run: CliResult, needles: readonly string[]): string[] {
  const found: string[] = [];
  const texts: [string, string][] = [
    ['stdout', run.stdout],
    ['stderr', run.stderr],
  ];
  // A finished run's journals are gzip'ed (src/output/journal/compact.ts): searched decompressed.
  for (const f of filesUnder(out))
    if (!/secrets\.ndjson(\.gz)?$/.test(f.path)) texts.push([f.path, searchableText(f.path)]);
  for (const [where, text] of texts)
    for (const n of needles) if (text.includes(n)) found.push(`${where} holds '${n.slice(0, 40)}'`);
  return found;
}

describe('error excerpts never quote a secret', () => {
  it.each([
    ['{"report_url":"http://127.0.0.1:32991/__reports/39bd22a48aa5f49', '{"report_url":"[secret]'],
    [
      '{"files":[{"url":"https://s3.example/f.pdf?X-Sig=1","file_password":"ab12cd34","generated_name":"f.pdf"}',
      '{"files":[{"url":"[secret]","file_password":"[secret]","generated_name":"[secret]"}',
    ],
    ['{"file_password":"ab\\"12', '{"file_password":"[secret]'],
    ['upstream failed at https://internal.example/x?token=abc', 'upstream failed at [url]'],
    ['{"detail":"bad value"}', '{"detail":"bad value"}'],
    ['<html>502   Bad\nGateway</html>', '<html>502 Bad Gateway</html>'],
  ])('%s', (body, expected) => {
    expect(excerpt(body)).toBe(expected);
  });

  it('cuts long bodies short', () => {
    expect(excerpt('x'.repeat(1000))).toBe(`${'x'.repeat(160)}...`);
  });
});

describe('secrets in a run', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    // Malformed bodies make row errors that quote the start of a body: a retrieve_report or fetch_uploaded
    // answer cut short begins with its link.
    sb = await startTestSandbox({ rate: { account: null }, faults: { malformed: 0.3 }, seed: 5, bsaReadyAfterMs: 100 });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it.each([
    ['aa_transactions', 'aa_transactions.csv', 'AA'],
    ['bsa_transactions', 'bsa_transactions.csv', 'BSA'],
  ])(
    '%s: token, links and passwords only in secrets.ndjson (0600)',
    async (pipeline, sample, prefix) => {
      const dir = tempDir();
      const rows = 24;
      const input = accountInput(dir, sample, rows, prefix);
      const out = join(dir, 'out');
      const run = await spawnCli(
        runArgs(pipeline, input, out, '--rate', 'account=50/s', '--max-attempts', '1'),
        sb.env(),
      );
      expect(run.code, run.stderr).toBe(1);
      const folder = readOutput(out);
      expect(invariantProblems(rows, folder)).toEqual([]);
      expect(folder.results.length).toBeGreaterThan(0);

      expect(statSync(journalPath(join(out, 'secrets.ndjson'))).mode & 0o777).toBe(0o600);
      const lines = secretLines(out);
      expect(lines.length).toBeGreaterThan(0);
      // What each line must hold is decided by the line itself: an AA report has its link; each file of a BSA
      // session its url and generated name, and a password from the second file on (the sandbox's first file
      // is not protected). Which rows get that far depends on the faults drawn, i.e. on the order of calls.
      for (const line of lines) {
        const names = line.map((s) => s.name).sort();
        if (pipeline === 'aa_transactions') {
          expect(names).toEqual(['report_url']);
          continue;
        }
        const files = Math.max(...names.map((n) => Number(/^file\.(\d+)\./.exec(n)?.[1] ?? NaN)));
        const expected: string[] = [];
        for (let f = 1; f <= files; f += 1) {
          expected.push(`file.${f}.generated_name`, `file.${f}.url`);
          if (f >= 2) expected.push(`file.${f}.file_password`);
        }
        expect(names).toEqual(expected.sort());
      }
      const secrets = lines.flat();
      // The full values, and any piece of a link (an excerpt of a body cut short would hold only its start).
      const needles = [sb.token, ...secrets.map((s) => s.value), '/__reports/', '/__files/', 'X-Sandbox-Signature'];
      expect(leaks(out, run, needles)).toEqual([]);
      // The errors were of the kind that quotes a body; a retrieve_report answer starts with its link, which
      // the quote replaces.
      const quoting = folder.errors.filter((e) => e.code === 'BAD_RESPONSE');
      expect(quoting.length).toBeGreaterThan(0);
      if (pipeline === 'aa_transactions') {
        expect(
          quoting.some((e) => e.stage === 'report' && (e.message as string).includes('{"report_url":"[secret]')),
        ).toBe(true);
      }
    },
    60_000,
  );
});

describe('where the token may come from', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  function inputFile(dir: string): string {
    const path = join(dir, 'in.csv');
    writeFileSync(
      path,
      'reference_id,user_id,lead_id,latitude,longitude\nLOC-1,u1,l1,19.07,72.87\nLOC-2,u2,l2,28.61,77.20\n',
    );
    return path;
  }

  it('BRE_AUTH_TOKEN_FILE readable by others is refused (exit 2); owner-only works', async () => {
    const dir = tempDir();
    const input = inputFile(dir);
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${sb.token}\n`);
    chmodSync(tokenFile, 0o644);
    const env = sb.env(undefined, { BRE_AUTH_TOKEN: undefined, BRE_AUTH_TOKEN_FILE: tokenFile });
    const open = await spawnCli(runArgs('location', input, join(dir, 'a')), env);
    expect(open.code).toBe(2);
    expect(open.stderr).toMatch(/readable by its owner only \(chmod 600\), got mode 644/);
    expect(open.stderr + open.stdout).not.toContain(sb.token);
    expect(sb.sandbox.stats().services.workflow.requests).toBe(0);

    chmodSync(tokenFile, 0o600);
    const out = join(dir, 'b');
    const ok = await spawnCli(runArgs('location', input, out), env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(leaks(out, ok, [sb.token])).toEqual([]);
  });

  it('a wrong token is never echoed, in any file or message', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const wrong = 'tokWRONG0123456789abcdef';
    const run = await spawnCli(
      runArgs('location', inputFile(dir), out),
      sb.env(undefined, { BRE_AUTH_TOKEN: wrong, BRE_DEBUG: '1' }),
    );
    expect(run.code).toBe(3);
    expect(leaks(out, run, [wrong, sb.token])).toEqual([]);
  });

  it('with --log-format json too: the token is in no line, field or file', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const wrong = 'tokWRONGjson456789abcdef';
    const run = await spawnCli(
      runArgs('location', inputFile(dir), out, '--log-format', 'json'),
      sb.env(undefined, { BRE_AUTH_TOKEN: wrong, BRE_DEBUG: '1' }),
    );
    expect(run.code).toBe(3);
    const lines = run.stderr
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: string; code?: string });
    expect(lines.some((l) => l.level === 'error' && l.code === 'AUTH_REFUSED')).toBe(true);
    expect(leaks(out, run, [wrong, sb.token])).toEqual([]);
  });

  it('the token is not accepted on the command line (visible in ps and shell history)', async () => {
    const dir = tempDir();
    const run = await spawnCli(
      [...runArgs('location', inputFile(dir), join(dir, 'out')), '--auth-token', 'tokcommandline123'],
      sb.env(),
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/auth-token/);
  });

  it.each([
    ['http://bre.example.com', /Expected BRE_BASE_URL to use https:\/\//],
    ['http://10.1.2.3:8080', /Expected BRE_BASE_URL to use https:\/\//],
    ['ftp://127.0.0.1', /Expected BRE_BASE_URL to use https:\/\//],
    ['not a url', /Expected BRE_BASE_URL to be a URL/],
  ])('base URL %s is refused (exit 2, nothing called)', async (url, message) => {
    const dir = tempDir();
    const run = await spawnCli(runArgs('location', inputFile(dir), join(dir, 'out')), {
      BRE_BASE_URL: url,
      BRE_CLIENT_ID: 'c',
      BRE_AUTH_TOKEN: sb.token,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toContain(sb.token);
  });

  it('an https base URL is accepted without a loopback host (the config step passes; --dry-run calls nothing, its pre-flight only connects)', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    // .invalid never resolves (RFC 2606): the URL passes the configuration check, then the pre-flight (issue 32)
    // stops the dry run before anything is written, naming the host.
    const run = await spawnCli(runArgs('location', inputFile(dir), out, '--dry-run'), {
      BRE_BASE_URL: 'https://bre.invalid',
      BRE_CLIENT_ID: 'c',
      BRE_AUTH_TOKEN: sb.token,
    });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('the workflow service at https://bre.invalid cannot be reached');
    expect(run.stderr).not.toContain('Expected BRE_BASE_URL');
    expect(run.stderr + run.stdout).not.toContain(sb.token);
    expect(existsSync(out)).toBe(false);
  });
});
