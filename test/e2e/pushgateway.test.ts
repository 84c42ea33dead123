/**
 * --pushgateway against the real Pushgateway (Debian's prometheus-pushgateway, started here on a free port
 * with its own storage): push-add grouped by job and pipeline with no instance label, the last success kept
 * through a failed night, shards in groups of their own; a gateway that is down or never answers leaves the
 * run's outcome as it would be without it; credentials in the URL are refused before any call. Runs whose
 * pushes are the point are the CLI's code in this process (runInProcess); the first night (no warning on a
 * process's stderr), the stopped one (exit 3), the one whose end must not wait on a held push, and the first
 * refusal (exit 2 through main.ts) are spawned CLIs.
 */
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runArgs, spawnCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { countLines, locationCsv } from '../helpers/output.js';
import { freePort, startPushgateway, type TestPushgateway } from '../helpers/pushgateway.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { describeWithTools } from '../helpers/gate.js';

const GROUP = { job: 'bre_batch', pipeline: 'location', instance: '' };

describeWithTools('the Pushgateway')('--pushgateway', () => {
  let sb: TestSandbox;
  let gw: TestPushgateway;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null, bureau: null } });
    gw = await startPushgateway();
  });
  afterAll(async () => {
    await gw?.stop();
    await sb?.close();
  });

  it('pushes the finished run, and a failed night keeps the last success while its state says stopped', async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 12);
    const good = await spawnCli(
      runArgs('location', input, join(dir, 'night1'), '--rate', 'off', '--pushgateway', gw.url),
      sb.env(),
    );
    expect(good.code, good.stderr).toBe(0);
    expect(good.stderr).not.toContain('Pushgateway');
    // Nothing else on stderr either: no deprecation warning of Node 24+ (url.parse) among the run's log lines.
    expect(good.stderr).not.toContain('DeprecationWarning');
    expect(await gw.samples('bre_batch_run_state', { ...GROUP, state: 'finished' })).toMatchObject([{ value: 1 }]);
    expect(await gw.samples('bre_batch_rows_total', { ...GROUP, outcome: 'succeeded' })).toMatchObject([{ value: 12 }]);
    expect(await gw.samples('bre_batch_calls_total', { ...GROUP, service: 'workflow' })).toMatchObject([{ value: 12 }]);
    const [success] = await gw.samples('bre_batch_last_success_timestamp_seconds', GROUP);
    expect(success.value).toBeGreaterThan(0);
    // Grouped by job and pipeline only: the gateway adds an empty instance, and the push's own time is there.
    expect(success.labels).toEqual({ job: 'bre_batch', pipeline: 'location', shard: '', instance: '' });
    expect(await gw.samples('push_time_seconds', GROUP)).toHaveLength(1);

    // The next night is refused (a wrong token): stopped, exit 3; the success of the night before stays.
    const bad = await spawnCli(
      runArgs('location', input, join(dir, 'night2'), '--pushgateway', gw.url),
      sb.env(undefined, { BRE_AUTH_TOKEN: 'tokWRONGwrongWRONG0123' }),
    );
    expect(bad.code, bad.stderr).toBe(3);
    expect(await gw.samples('bre_batch_run_state', { ...GROUP, state: 'stopped' })).toMatchObject([{ value: 1 }]);
    expect(await gw.samples('bre_batch_run_state', { ...GROUP, state: 'finished' })).toMatchObject([{ value: 0 }]);
    expect(await gw.samples('bre_batch_last_success_timestamp_seconds', GROUP)).toEqual([success]);
  });

  it('the shards of one run push to groups of their own, neither replacing the other', async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 20);
    for (const k of [1, 2]) {
      const run = await runInProcess(
        runArgs('location', input, join(dir, `w${k}`), '--rate', 'off', '--shard', `${k}/2`, '--pushgateway', gw.url),
        sb.env(),
      );
      expect(run.code, run.stderr).toBe(0);
    }
    const done = await gw.samples('bre_batch_rows_done', { job: 'bre_batch', pipeline: 'location' });
    const byShard = new Map(done.filter((s) => s.labels.shard).map((s) => [s.labels.shard, s.value]));
    expect([...byShard.keys()].sort()).toEqual(['1/2', '2/2']);
    expect(byShard.get('1/2')! + byShard.get('2/2')!).toBe(20);
  });

  it('a gateway that refuses connections, or accepts them and never answers, is warned about and the run ends as without it', async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 12);
    const down = await runInProcess(
      runArgs(
        'location',
        input,
        join(dir, 'down'),
        '--rate',
        'off',
        '--pushgateway',
        `http://127.0.0.1:${await freePort()}`,
      ),
      sb.env(),
    );
    expect(down.code, down.stderr).toBe(0);
    expect(down.stderr).toMatch(
      /warning: cannot push metrics to the Pushgateway at http:\/\/127\.0\.0\.1:\d+\/: ECONNREFUSED; the run goes on/,
    );
    expect(countLines(join(dir, 'down', 'results.ndjson'))).toBe(12);

    // A gateway that takes the connection and the request and never answers.
    const held: Socket[] = [];
    const silent = createServer((s) => {
      held.push(s);
      s.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as { port: number }).port;
      const hung = await spawnCli(
        runArgs('location', input, join(dir, 'hung'), '--rate', 'off', '--pushgateway', `http://127.0.0.1:${port}`),
        sb.env(),
      );
      expect(hung.code, hung.stderr).toBe(0);
      expect(countLines(join(dir, 'hung', 'results.ndjson'))).toBe(12);
      expect(hung.stderr).toMatch(
        /Pushgateway at http:\/\/127\.0\.0\.1:\d+\/ did not finish in time; the run's end did not wait for it/,
      );
      // It was pushed to (and held). That a slow gateway gets one push at a time, never a queue, is the
      // pusher's rule, tested in test/metrics/pushgateway.test.ts (seen from this server, the close of a
      // timed-out push and the next push's connection may arrive in either order).
      expect(held.length).toBeGreaterThan(0);
    } finally {
      for (const s of held) s.destroy();
      silent.close();
    }
  });

  it('refuses a URL with credentials or of another scheme before any call (exit 2), never printing the password', async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 3);
    const before = sb.sandbox.stats().services.workflow.requests;
    const cred = await spawnCli(
      runArgs('location', input, join(dir, 'a'), '--pushgateway', 'http://ops:s3cretPUSH@127.0.0.1:9091'),
      sb.env(),
    );
    expect(cred.code).toBe(2);
    expect(cred.stderr).toContain('Expected --pushgateway without a user or password');
    expect(cred.stderr + cred.stdout).not.toContain('s3cretPUSH');
    // The first refusal went through main.ts; this one in this process.
    const ftp = await runInProcess(
      runArgs('location', input, join(dir, 'b'), '--pushgateway', 'ftp://127.0.0.1:9091'),
      sb.env(),
    );
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toContain("Expected --pushgateway to be an http:// or https:// URL, got 'ftp:'");
    expect(sb.sandbox.stats().services.workflow.requests).toBe(before);
  });
});
