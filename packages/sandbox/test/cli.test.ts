/** `bre-batch sandbox` as a separate process, started as a user starts it. */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startCli } from '../../../test/helpers/cli.js';
import { waitFor } from '../../../test/helpers/wait.js';

/** `bre-batch sandbox <args>`; resolves its exit code. */
function start(args: string[], env: Record<string, string | undefined> = {}) {
  const run = startCli(['sandbox', ...args], env);
  return { child: run.child, out: run.stdout, err: run.stderr, exit: run.done.then((r) => r.code) };
}

describe('bre-batch sandbox', () => {
  it('prints its URL, default credentials and env lines; enforces --rate; stops on SIGTERM', async () => {
    const io = start(['--rate', 'workflow=2/s', '--rate', 'bureau=off', '--seed', '7']);
    await waitFor(() => io.out().includes('Ctrl+C'), 15_000, 'the banner');
    const url = /export BRE_BASE_URL=(\S+)/.exec(io.out())![1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(io.out()).toContain(`export BUREAU_BASE_URL=${url}`);
    expect(io.out()).toContain(`export ACCOUNT_BASE_URL=${url}`);
    expect(io.out()).toContain('export BRE_CLIENT_ID=sandboxclient');
    const token = /export BRE_AUTH_TOKEN=(\S+)/.exec(io.out())![1];
    expect(io.out()).toContain('workflow 2/s, bureau off, account 300/min');
    const headers = { 'x-client-id': 'sandboxclient', 'x-auth-token': token, 'content-type': 'application/json' };
    const body = JSON.stringify({
      user_id: 'u',
      reference_id: 'r',
      input_data: { lead_id: 'l', latitude: 12.97, longitude: 77.59 },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(`${url}/execute/sandboxclient/location_bre`, { method: 'POST', headers, body });
      statuses.push(res.statusCode);
      await res.body.text();
    }
    expect(statuses).toEqual([200, 200, 429]);
    const stats = (await (await request(`${url}/__sandbox/stats`)).body.json()) as {
      seed: number;
      services: { workflow: { throttled: number } };
    };
    expect(stats.seed).toBe(7);
    expect(stats.services.workflow.throttled).toBe(1);
    io.child.kill('SIGTERM');
    expect(await io.exit).toBe(0);
    expect(io.out()).toContain('bre-batch sandbox: stopped');
  });

  it('takes credentials from the environment and never prints such a token', async () => {
    const io = start(['--port', '0'], { BRE_CLIENT_ID: 'envclient', BRE_AUTH_TOKEN: 'envsecret123' });
    await waitFor(() => io.out().includes('Ctrl+C'), 15_000, 'the banner');
    expect(io.out()).toContain('export BRE_CLIENT_ID=envclient');
    expect(io.out()).toContain('from BRE_AUTH_TOKEN');
    expect(io.out()).not.toContain('envsecret123');
    const url = /export BRE_BASE_URL=(\S+)/.exec(io.out())![1];
    const res = await request(`${url}/bsa/status_check`, {
      method: 'POST',
      headers: { 'x-client-id': 'envclient', 'x-auth-token': 'envsecret123', 'content-type': 'application/json' },
      body: '{"user_id":"u","aa_session_id":"s"}',
    });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    io.child.kill('SIGINT');
    expect(await io.exit).toBe(0);
  });

  it.each([
    [
      ['--rate', 'workflow=5/hour'],
      "Expected --rate SERVICE=N/UNIT (UNIT s or min, e.g. workflow=500/min), SERVICE=off or off, got 'workflow=5/hour'",
    ],
    [['--faults', '429=0.5,503=0.9'], 'Expected fault probabilities summing to at most 1, got 1.4'],
    [['--port', 'eighty'], "Expected --port to be a whole number from 0 to 65535, got 'eighty'"],
    [
      ['--allow', 'somewhere'],
      "Expected --allow to be an IP address or CIDR block (e.g. 10.0.0.0/8 or ::1), got 'somewhere'",
    ],
  ])('exits 2 on bad options %j', async (args, message) => {
    const io = start(args);
    expect(await io.exit).toBe(2);
    expect(io.err()).toContain(message);
    expect(io.out()).toBe('');
  });
});
