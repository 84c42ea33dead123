/**
 * manifest.json's record of how a session ran (src/output/audit.ts): the options in effect, named as a person
 * gives them, from an allow-list of the settings: never a token, a password, a key or a proxy's credentials (a
 * database's or Redis's URL without its user information; TLS and proxy settings only as "set"). The
 * record is scrubbed once more with the run's secrets before it is written.
 */
import { describeRate } from '@bre-batch/core/rates';
import { SERVICES } from '@bre-batch/core/types';
import type { RunSettings } from './settings.js';

/** A URL's scheme, host, port and path: its user, password and parameters are left out. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(not shown: not a URL)';
  }
}

const perService = <T>(f: (svc: (typeof SERVICES)[number]) => T): Record<string, T> =>
  Object.fromEntries(SERVICES.map((svc) => [svc, f(svc)]));

export function effectiveOptions(s: RunSettings): Record<string, unknown> {
  const o: Record<string, unknown> = {
    rate: perService((svc) => describeRate(s.rates[svc])),
    concurrency: perService((svc) => s.concurrency[svc]),
    timeout_ms: perService((svc) => s.timeoutsMs[svc]),
    base_urls: perService((svc) => withoutCredentials(s.baseUrls[svc])),
    max_attempts: s.maxAttempts,
    stop_grace_ms: s.stopGraceMs,
    circuit: { ...s.circuit },
    output_formats: [...s.outputFormats].sort(),
    keep_personal_data: s.keepPersonalData,
    retry_errors: s.retryErrors,
    limit: s.limit ?? null,
    shard: s.shard ? `${s.shard.index}/${s.shard.count}` : null,
  };
  if (s.rateSlackMs !== undefined) o.rate_slack_ms = s.rateSlackMs;
  if (s.throttleDeadlineMs !== undefined) o.throttle_deadline_ms = s.throttleDeadlineMs;
  if (s.maxResponseBytes !== undefined) o.max_response_bytes = s.maxResponseBytes;
  if (s.allowEmpty) o.allow_empty = true;
  if (s.expectVersion) o.expect_version = { ...s.expectVersion };
  if (s.sample)
    o.sample = {
      seed: s.sample.seed,
      stratify_by: s.sample.stratifyBy.map((c) => (c.group ? `${c.column}:${c.group}` : c.column)),
      allocation: s.sample.allocation,
      size: s.sample.size,
      share: s.sample.share,
    };
  if (s.sink) o.sink = { url: s.sink.url.display, table: s.sink.table, schema: s.sink.schema ?? null };
  if (s.source) o.source = { url: s.source.url.display };
  if (s.redisUrl) o.redis = withoutCredentials(s.redisUrl);
  if (s.localAddresses) o.local_addresses = [...s.localAddresses];
  if (s.network)
    o.network = { proxy: Boolean(s.network.proxy.httpProxy ?? s.network.proxy.httpsProxy), tls: 'set (not shown)' };
  if (s.job) o.job = { name: s.job.name, worker: s.job.worker };
  return o;
}
