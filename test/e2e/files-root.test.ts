/**
 * File columns stay inside the files root (issue 24), through the CLI against a sandbox that counts every
 * call: rows naming a file outside the root by an absolute path, by `..` or through a symbolic link are their
 * own errors (FILE_OUTSIDE_ROOT) and cost no call, while the other rows are done; the file outside is a valid
 * report, so reading it would have sent it. --files-root moves the root; stdin has none unless it is given
 * (a CSV header naming a file column is exit 2 before any call; an NDJSON row using one is its error); a root
 * that is not a folder is exit 2 for run, --dry-run and --plan; a resume refuses another root.
 * Runs that read a file are the CLI's code in this process (runInProcess: the same options, resolution and
 * executeRun, without a CLI's start-up each); stdin, and one exit 2 through main.ts, are a spawned CLI's.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runArgs, spawnCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const SAMPLES = join(ROOT, 'samples');
const HEADER =
  'reference_id,user_id,lead_id,app_user_id,declared_income,bureau_report_path,bank_type,bank_data_path,fetched_timestamp';
const line = (key: string, report: string, bank: string) =>
  `${key},u-${key},l-${key},a-${key},30000,${report},bank_aa,${bank},2026-11-20 02:00:00`;

/**
 * base/in: the input's folder, with reports/ and bank/ and a link leading out; base/outside: a valid bureau
 * report and bank file that no row may reach.
 */
function tree(): { base: string; inDir: string; outside: string } {
  const base = tempDir('bre-files-root-e2e-');
  const inDir = join(base, 'in');
  const outside = join(base, 'outside');
  for (const d of [join(inDir, 'reports'), join(inDir, 'bank'), outside]) mkdirSync(d, { recursive: true });
  copyFileSync(join(SAMPLES, 'reports', 'bureau_a.json'), join(inDir, 'reports', 'bureau_a.json'));
  copyFileSync(join(SAMPLES, 'bank', 'salaried.json'), join(inDir, 'bank', 'salaried.json'));
  copyFileSync(join(SAMPLES, 'reports', 'bureau_a.json'), join(outside, 'private.json'));
  copyFileSync(join(SAMPLES, 'bank', 'salaried.json'), join(outside, 'bank.json'));
  symlinkSync(join(outside, 'private.json'), join(inDir, 'reports', 'leak.json'));
  return { base, inDir, outside };
}

describe('file columns stay inside the files root', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null, bureau: null, account: null } });
  });
  afterAll(async () => {
    await sb?.close();
  });
  const calls = () => {
    const s = sb.sandbox.stats().services;
    return { bureau: s.bureau.requests, workflow: s.workflow.requests };
  };
  const since = (before: { bureau: number; workflow: number }) => {
    const now = calls();
    return { bureau: now.bureau - before.bureau, workflow: now.workflow - before.workflow };
  };

  it('escapes by absolute path, .. and symbolic link are refused with no call; the other rows are done', async () => {
    const { base, inDir, outside } = tree();
    const input = join(inDir, 'rescore.csv');
    writeFileSync(
      input,
      `${[
        HEADER,
        line('OK-1', 'reports/bureau_a.json', 'bank/salaried.json'),
        line('ABS-2', join(outside, 'private.json'), 'bank/salaried.json'),
        line('OK-3', join(inDir, 'reports', 'bureau_a.json'), 'bank/salaried.json'),
        line('DOTS-4', '../outside/private.json', 'bank/salaried.json'),
        line('LINK-5', 'reports/leak.json', 'bank/salaried.json'),
        line('BANK-6', 'reports/bureau_a.json', 'bank/../../outside/bank.json'),
        line('OK-7', 'reports/../reports/bureau_a.json', 'bank/salaried.json'),
      ].join('\n')}\n`,
    );
    const out = join(base, 'out');
    const before = calls();
    const r = await runInProcess(runArgs('rescore', input, out), sb.env());
    expect(r.code, r.stderr).toBe(1);
    // Three rows done, each one bureau and one workflow call: the four refused rows made none.
    expect(since(before)).toEqual({ bureau: 3, workflow: 3 });
    const o = readOutput(out);
    expect(o.results.map((x) => x.key).sort()).toEqual(['OK-1', 'OK-3', 'OK-7']);
    const byKey = Object.fromEntries(o.errors.map((e) => [e.key, e]));
    expect(Object.keys(byKey).sort()).toEqual(['ABS-2', 'BANK-6', 'DOTS-4', 'LINK-5']);
    for (const key of ['ABS-2', 'DOTS-4', 'LINK-5']) {
      expect(byKey[key]).toMatchObject({
        code: 'FILE_OUTSIDE_ROOT',
        field: 'bureau_report_path',
        attempts: 0,
        status: null,
      });
    }
    expect(byKey['BANK-6']).toMatchObject({ code: 'FILE_OUTSIDE_ROOT', field: 'bank_data_path', attempts: 0 });
    expect(byKey['DOTS-4'].message).toBe(
      `bureau_report_path: '../outside/private.json' leads outside the files root ${inDir} (the input file's folder); the file was not read. Put the file inside the root, or name the folder that holds the files with --files-root`,
    );
    expect(byKey['LINK-5'].message).toMatch(
      /^bureau_report_path: 'reports\/leak.json' leads outside the files root .* through a symbolic link; the file was not read/,
    );

    // --dry-run refuses the same rows, calling nothing.
    const dry = join(base, 'dry');
    const d = await runInProcess(runArgs('rescore', input, dry, '--dry-run'), sb.env());
    expect(d.code, d.stderr).toBe(1);
    const dryErrors = readFileSync(join(dry, 'dry-run-errors.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { code: string });
    expect(dryErrors.map((e) => e.code)).toEqual([
      'FILE_OUTSIDE_ROOT',
      'FILE_OUTSIDE_ROOT',
      'FILE_OUTSIDE_ROOT',
      'FILE_OUTSIDE_ROOT',
    ]);
    expect(since(before)).toEqual({ bureau: 3, workflow: 3 });
  });

  it('--files-root: relative paths resolve against it, wherever the input is; a resume refuses another root', async () => {
    const { base, inDir, outside } = tree();
    const elsewhere = join(base, 'inputs');
    mkdirSync(elsewhere);
    const input = join(elsewhere, 'rescore.csv');
    writeFileSync(
      input,
      `${[HEADER, line('R-1', 'reports/bureau_a.json', 'bank/salaried.json'), line('R-2', '../outside/private.json', 'bank/salaried.json')].join('\n')}\n`,
    );
    const out = join(base, 'out');
    const before = calls();
    const r = await runInProcess(runArgs('rescore', input, out, '--files-root', inDir), sb.env());
    expect(r.code, r.stderr).toBe(1);
    expect(since(before)).toEqual({ bureau: 1, workflow: 1 });
    const o = readOutput(out);
    expect(o.results.map((x) => x.key)).toEqual(['R-1']);
    expect(o.errors.map((e) => [e.key, e.code])).toEqual([['R-2', 'FILE_OUTSIDE_ROOT']]);
    expect(o.errors[0].message).toContain(`the files root ${inDir} (--files-root)`);

    // The same folder with another root: the rows left would read other files.
    const again = await runInProcess(
      runArgs('rescore', input, out, '--files-root', outside, '--retry-errors'),
      sb.env(),
    );
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /refusing to resume into .*: its rows' files were read inside .*\/in \(--files-root\), now inside .*\/outside \(--files-root\)/,
    );
    expect(since(before)).toEqual({ bureau: 1, workflow: 1 });
  });

  it('stdin: a CSV header naming a file column needs --files-root (exit 2, nothing called); with it the rows run', async () => {
    const { base, inDir } = tree();
    const csv = `${[HEADER, line('S-1', 'reports/bureau_a.json', 'bank/salaried.json')].join('\n')}\n`;
    const out = join(base, 'out');
    const before = calls();
    const r = await spawnCli(
      ['run', 'rescore', '--input', '-', '--input-format', 'csv', '--out', out, '--no-progress'],
      sb.env(),
      { stdin: csv },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /the input's header \(line 1\) names bureau_report_path and bank_data_path, columns of file paths, and the input is stdin: there is no folder to read those files in\. Pass --files-root DIR/,
    );
    expect(since(before)).toEqual({ bureau: 0, workflow: 0 });
    expect(existsSync(out)).toBe(false);

    const ok = await spawnCli(
      ['run', 'rescore', '--input', '-', '--input-format', 'csv', '--out', out, '--no-progress', '--files-root', inDir],
      sb.env(),
      { stdin: csv },
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(readOutput(out).results.map((x) => x.key)).toEqual(['S-1']);
    expect(since(before)).toEqual({ bureau: 1, workflow: 1 });
  });

  it('stdin NDJSON without --files-root: a row using a file column is its error, the others run; with it, it runs', async () => {
    const { base, inDir } = tree();
    const ndjson = [
      { reference_id: 'N-1', user_id: 'u1', bureau_report_path: 'reports/bureau_a.json' },
      {
        reference_id: 'N-2',
        user_id: 'u2',
        raw_data: readFileSync(join(SAMPLES, 'reports', 'bureau_a.json')).toString('base64'),
      },
    ]
      .map((x) => JSON.stringify(x))
      .join('\n');
    const args = (out: string, ...more: string[]) => [
      'run',
      'bureau_features',
      '--input',
      '-',
      '--input-format',
      'ndjson',
      '--out',
      out,
      '--no-progress',
      ...more,
    ];
    const before = calls();
    const without = join(base, 'without');
    const r = await spawnCli(args(without), sb.env(), { stdin: ndjson });
    expect(r.code, r.stderr).toBe(1);
    expect(since(before)).toEqual({ bureau: 1, workflow: 0 });
    const o = readOutput(without);
    expect(o.results.map((x) => x.key)).toEqual(['N-2']);
    expect(o.errors).toHaveLength(1);
    expect(o.errors[0]).toMatchObject({
      key: 'N-1',
      code: 'FILES_ROOT_NEEDED',
      field: 'bureau_report_path',
      attempts: 0,
    });
    expect(o.errors[0].message).toBe(
      "bureau_report_path: 'reports/bureau_a.json' was not read: a file column needs a files root and the input is stdin; pass --files-root DIR, the folder the files are in",
    );

    // The row in errors runs once the root is given (a folder made without a root takes one).
    const retry = await spawnCli(args(without, '--retry-errors', '--files-root', inDir), sb.env(), { stdin: ndjson });
    expect(retry.code, retry.stderr).toBe(0);
    expect(
      readOutput(without)
        .results.map((x) => x.key)
        .sort(),
    ).toEqual(['N-1', 'N-2']);
    expect(since(before)).toEqual({ bureau: 2, workflow: 0 });
  });

  it('a --files-root that is not a folder is exit 2 for run, --dry-run and --plan, nothing called', async () => {
    const { base, inDir } = tree();
    const input = join(inDir, 'rescore.csv');
    writeFileSync(input, `${[HEADER, line('P-1', 'reports/bureau_a.json', 'bank/salaried.json')].join('\n')}\n`);
    const before = calls();
    for (const more of [[], ['--dry-run'], ['--plan']]) {
      for (const [root, why] of [
        [join(base, 'nope'), 'no such folder'],
        [input, 'a file, not a folder'],
      ]) {
        // The first a spawned CLI's (its exit through main.ts), the others in this process.
        const r = await (more.length === 0 && root === join(base, 'nope') ? spawnCli : runInProcess)(
          [...runArgs('rescore', input, join(base, 'out'), '--files-root', root), ...more],
          sb.env(),
        );
        expect(r.code, `${more.join(' ')} ${root}`).toBe(2);
        expect(r.stderr).toContain(`Expected --files-root to be a folder, got '${root}' (${why})`);
      }
    }
    expect(since(before)).toEqual({ bureau: 0, workflow: 0 });
    expect(existsSync(join(base, 'out'))).toBe(false);
    // --plan honours a good one.
    const plan = await runInProcess(
      [...runArgs('rescore', input, join(base, 'out'), '--files-root', inDir), '--plan'],
      sb.env(),
    );
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/rows to do: 1\n/);
  });
});
