/**
 * `--pushgateway URL`: the run's metrics pushed to a Prometheus Pushgateway, for a job that has no node
 * exporter beside it (a Kubernetes CronJob). Following Prometheus' advice for batch jobs
 * (https://prometheus.io/docs/practices/pushing/): push-add (POST), so a night that fails before the end does
 * not wipe `bre_batch_last_success_timestamp_seconds` the last good night pushed; grouped by job and pipeline
 * (and shard, so that the shards of one run do not replace each other's series); no instance label, so a pod
 * that comes back under another name writes the same group.
 *
 * The gateway is a watcher, not a part of the run: a push goes out beside the run and is never waited for
 * while rows flow; at most one is in flight (a slow gateway gets the newest metrics when it answers, not a
 * queue); the last push at the end waits at most `endWaitMs`. A failure is said once and the run goes on.
 */
import { Agent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Registry } from 'prom-client';
import { BreError } from '@bre-batch/core/errors';

const PUSH_JOB = 'bre_batch';
const REQUEST_TIMEOUT_MS = 5_000;
const END_WAIT_MS = 5_000;

/** Checks `--pushgateway`: an http(s) URL without a password (passwords never on the command line). */
export function parsePushgatewayUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BreError('USAGE', `Expected --pushgateway to be a URL such as http://pushgateway:9091, got '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BreError('USAGE', `Expected --pushgateway to be an http:// or https:// URL, got '${url.protocol}'`);
  }
  if (url.password || url.username) {
    throw new BreError(
      'USAGE',
      'Expected --pushgateway without a user or password (they would show in ps and in logs), got a URL with credentials: put the gateway behind a proxy that adds them',
    );
  }
  if (url.search || url.hash)
    throw new BreError(
      'USAGE',
      `Expected --pushgateway to be the gateway's base URL, got one with a query or fragment: '${url.origin}${url.pathname}...'`,
    );
  return url;
}

export interface PusherOptions {
  readonly url: URL;
  /** Grouping labels beside the job (pipeline, and shard when sharded). */
  readonly groupings: Readonly<Record<string, string>>;
  readonly warn: (message: string) => void;
  /** Per request: a gateway that accepts the connection and never answers is given up after this. */
  readonly requestTimeoutMs?: number;
  /** How long the end of the run waits for the last push. */
  readonly endWaitMs?: number;
  /** The request itself (tests replace it); by default a push-add of `registry` (postText). */
  readonly send?: () => Promise<unknown>;
}

export class MetricsPusher {
  readonly #o: PusherOptions;
  readonly #send: () => Promise<unknown>;
  readonly #abort: () => void;
  #inFlight: Promise<void> | undefined;
  /** Pushes asked for, and the last of them that went out (rendered when its request started). */
  #requested = 0;
  #sent = 0;
  #lastOk = true;
  #warned = false;
  #pushes = 0;
  #failures = 0;

  constructor(registry: Registry, o: PusherOptions) {
    this.#o = o;
    if (o.send) {
      this.#send = o.send;
      this.#abort = () => undefined;
    } else {
      const timeout = o.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
      // No keep-alive: a push every few seconds gains nothing from it, and an idle socket would hold the
      // process open at the end.
      const agent =
        o.url.protocol === 'https:' ? new HttpsAgent({ keepAlive: false }) : new Agent({ keepAlive: false });
      const target = new URL(`${o.url.pathname.replace(/\/$/, '')}${groupPath(o.groupings)}`, o.url);
      this.#send = async () => postText(target, await registry.metrics(), registry.contentType, agent, timeout);
      // A push the end gave up on must not hold the process open until its socket times out.
      this.#abort = () => agent.destroy();
    }
  }

  /** What went out, for the summary line at the end and for tests. */
  get counts(): { pushes: number; failures: number } {
    return { pushes: this.#pushes, failures: this.#failures };
  }

  /** Pushes now, beside the run: returns at once. A push already in flight is followed by one more, not a queue. */
  push(): void {
    this.#requested++;
    if (this.#inFlight) return;
    this.#start();
  }

  #start(): void {
    // The registry is rendered as the push starts: this push carries every change asked for so far.
    const upTo = this.#requested;
    this.#inFlight = this.#one().finally(() => {
      this.#sent = upTo;
      this.#inFlight = undefined;
      if (this.#sent < this.#requested) this.#start();
    });
  }

  async #one(): Promise<void> {
    this.#pushes++;
    try {
      await this.#send();
      this.#lastOk = true;
    } catch (err) {
      this.#lastOk = false;
      this.#failures++;
      if (!this.#warned)
        this.#o.warn(
          `warning: cannot push metrics to the Pushgateway at ${this.#o.url.origin}${this.#o.url.pathname}: ${reason(err)}; the run goes on (said once)`,
        );
      this.#warned = true;
    }
  }

  /**
   * Waits for the pushes asked for so far (the final state among them), `endWaitMs` at most in all, then lets
   * go of the connection. Returns whether the last one reached the gateway.
   */
  async finish(): Promise<boolean> {
    if (!this.#inFlight && this.#sent === this.#requested) return this.#lastOk;
    let timer: NodeJS.Timeout | undefined;
    const last = (async () => {
      while (this.#inFlight) await this.#inFlight;
      return this.#lastOk;
    })();
    const giveUp = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.#o.endWaitMs ?? END_WAIT_MS);
      timer.unref();
    });
    try {
      const ok = await Promise.race([last, giveUp]);
      if (ok === 'late') {
        this.#o.warn(
          `warning: the last push to the Pushgateway at ${this.#o.url.origin}${this.#o.url.pathname} did not finish in time; the run's end did not wait for it`,
        );
        return false;
      }
      return ok;
    } finally {
      clearTimeout(timer);
      this.#warned = true;
      this.#abort();
    }
  }
}

/**
 * `POST /metrics/job/<job>/<label>/<value>...`: the Pushgateway's push-add. Not prom-client's Pushgateway
 * class: it parses the URL with `url.parse()`, which Node 24 and later warn about on stderr, in the middle of
 * a run's log (and of its JSON lines).
 */
function postText(target: URL, body: string, contentType: string, agent: Agent, timeoutMs: number): Promise<void> {
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: 'POST',
        agent,
        timeout: timeoutMs,
        headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => {
          text += d;
        });
        res.on('end', () =>
          (res.statusCode ?? 0) >= 400
            ? reject(new Error(`HTTP ${res.statusCode}: ${text.trim().slice(0, 200)}`))
            : resolve(),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(Object.assign(new Error(`no answer in ${timeoutMs / 1000} s`), { code: 'TIMEOUT' })),
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The group's path: the job, then each grouping label. */
export function groupPath(groupings: Readonly<Record<string, string>>): string {
  const labels = Object.entries(groupingPath(groupings)).map(
    ([k, v]) => `/${encodeURIComponent(k)}/${encodeURIComponent(v)}`,
  );
  return `/metrics/job/${encodeURIComponent(PUSH_JOB)}${labels.join('')}`;
}

/**
 * Grouping labels as the gateway's URL takes them: a value with a slash (a shard, `1/2`) or an empty one goes
 * base64url-encoded under `NAME@base64` (the Pushgateway's README, "URL").
 */
export function groupingPath(groupings: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(groupings).map(([k, v]) =>
      v === '' || v.includes('/') ? [`${k}@base64`, v === '' ? '=' : Buffer.from(v).toString('base64url')] : [k, v],
    ),
  );
}

function reason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code) return e.code;
  return e?.message?.replace(/\s+/g, ' ').slice(0, 200) ?? String(err);
}
