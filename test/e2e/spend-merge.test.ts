/**
 * `merge` of priced shards (src/output/merge-spend.ts): the merged folder's summary.json, closing lines and
 * report.html carry the shards' spend summed per service, each shard's being the sandbox's own count of its
 * billed calls times the price (two priced services, 5% of calls answered 503: billed, then retried). Shards
 * priced in two currencies are merged without a summed spend, and the merge says why. A merged folder that
 * lacks a shard, completed by an unsharded run, counts the merged shard's spend as its earlier sessions'.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runArgs, spawnCli } from '../helpers/cli.js';
import { invariantProblems, readOutput, rescoreCsv } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const ROWS = 60;
const PRICE = { workflow: 0.05, bureau: 0.02 } as const;
type Priced = keyof typeof PRICE;
const SERVICES: Priced[] = ['bureau', 'workflow'];
const priced = (currency = 'EUR') => [
  ...['--price', `workflow=${PRICE.workflow}`, '--price', `bureau=${PRICE.bureau}`, '--currency', currency],
  ...['--rate', 'off', '--concurrency', '4', '--files-root', join(ROOT, 'samples')],
];

describe('merge of priced shards', () => {
  let sb: TestSandbox;
  const billed = () => {
    const s = sb.sandbox.stats().services;
    return { workflow: s.workflow.billed, bureau: s.bureau.billed };
  };
  const since = (before: Record<Priced, number>) => {
    const now = billed();
    return { workflow: now.workflow - before.workflow, bureau: now.bureau - before.bureau };
  };
  const cost = (calls: Record<Priced, number>) => calls.workflow * PRICE.workflow + calls.bureau * PRICE.bureau;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null, bureau: null }, faults: { 503: 0.05 }, seed: 4141 });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it("sums the shards' spend per service; refuses to add two currencies; a completed merge counts it before its own", async () => {
    const dir = tempDir('bre-spend-merge-');
    const input = rescoreCsv(dir, ROWS);
    const shard = async (k: number, out: string, currency = 'EUR') => {
      const before = billed();
      const r = await spawnCli(runArgs('rescore', input, out, '--shard', `${k}/2`, ...priced(currency)), sb.env());
      expect(r.code, r.stderr).toBe(0);
      const calls = since(before);
      const spend = readOutput(out).summary.spend;
      for (const svc of SERVICES) {
        expect(calls[svc]).toBeGreaterThan(0);
        expect(spend.services[svc].calls_billed).toBe(calls[svc]);
        expect(spend.services[svc].spend).toBeCloseTo(calls[svc] * PRICE[svc], 6);
      }
      expect(spend.total).toBeCloseTo(cost(calls), 6);
      return calls;
    };
    const w1 = join(dir, 'w1');
    const w2 = join(dir, 'w2');
    const c1 = await shard(1, w1);
    const c2 = await shard(2, w2);
    const faults = sb.sandbox.stats().services;
    expect(faults.workflow.faults['503'] + faults.bureau.faults['503']).toBeGreaterThan(0);
    const both = { workflow: c1.workflow + c2.workflow, bureau: c1.bureau + c2.bureau };

    const merged = join(dir, 'merged');
    const m = await spawnCli(['merge', w1, w2, '--out', merged], {});
    expect(m.code, m.stderr).toBe(0);
    const out = readOutput(merged);
    expect(invariantProblems(ROWS, out)).toEqual([]);
    const spend = out.summary.spend;
    expect(spend.currency).toBe('EUR');
    expect(spend.prices).toEqual({ workflow: PRICE.workflow, bureau: PRICE.bureau });
    for (const svc of SERVICES) {
      expect(spend.services[svc].calls_billed).toBe(both[svc]);
      expect(spend.services[svc].spend).toBeCloseTo(both[svc] * PRICE[svc], 6);
    }
    expect(spend.total).toBeCloseTo(cost(both), 6);
    expect(spend.this_session).toBe(0);
    expect(spend.max_spend).toBeNull();
    const money = (units: number) => `${units.toFixed(2)} EUR`;
    expect(m.stdout).toContain(
      `spend: ${money(cost(both))} over all shards (workflow ${both.workflow} calls billed, ${money(both.workflow * PRICE.workflow)}; bureau ${both.bureau} calls billed, ${money(both.bureau * PRICE.bureau)})`,
    );
    expect(m.stderr).not.toContain('spend');
    const html = readFileSync(join(merged, 'report.html'), 'utf8');
    expect(html).toContain(money(cost(both)));
    expect(html).toContain('Every session of every shard, summed');

    // The second shard again, priced in another currency: the rows merge, their spend is not added up.
    const w2usd = join(dir, 'w2-usd');
    await shard(2, w2usd, 'USD');
    const mixed = join(dir, 'mixed');
    const x = await spawnCli(['merge', w1, w2usd, '--out', mixed], {});
    expect(x.code, x.stderr).toBe(0);
    expect(x.stderr).toContain(
      'merge: warning: spend not summed: the shards priced their calls in different currencies (EUR in 1/2; USD in 2/2)',
    );
    expect(x.stdout).toContain('spend: not summed: the shards priced their calls in different currencies');
    expect(readOutput(mixed).summary.spend).toBeUndefined();

    // One shard merged, the rest done by an unsharded run into the merged folder: its spend is the whole.
    const part = join(dir, 'part');
    const p = await spawnCli(['merge', w1, '--out', part], {});
    expect(p.code, p.stderr).toBe(0);
    expect(readOutput(part).summary.spend.total).toBeCloseTo(cost(c1), 6);
    const before = billed();
    const rest = await spawnCli(runArgs('rescore', input, part, ...priced()), sb.env());
    expect(rest.code, rest.stderr).toBe(0);
    const c3 = since(before);
    expect(rest.stderr).toContain(
      `spend: this folder's earlier sessions spent ${money(cost(c1))} (${c1.workflow + c1.bureau} calls billed)`,
    );
    const done = readOutput(part);
    expect(invariantProblems(ROWS, done)).toEqual([]);
    for (const svc of SERVICES) {
      expect(done.summary.spend.services[svc].calls_billed).toBe(c1[svc] + c3[svc]);
      expect(done.summary.spend.services[svc].calls_billed_this_session).toBe(c3[svc]);
    }
    expect(done.summary.spend.this_session).toBeCloseTo(cost(c3), 6);
    expect(done.summary.spend.total).toBeCloseTo(cost(c1) + cost(c3), 6);
    // A second session of a different currency in that folder is refused, as in any folder with spend.
    const usd = await spawnCli(runArgs('rescore', input, part, ...priced('USD')), sb.env());
    expect(usd.code).toBe(2);
    expect(usd.stderr).toContain('Expected --currency EUR');
  }, 240_000);
});
