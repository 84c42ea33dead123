/**
 * Where calls leave from: one lane without --local-address (the system's choice of source address), else one
 * lane per address, each with its own client (an undici pool bound to the address), its own limiter per service
 * at the full configured rate (the limits are per IP: decision spec section 8) and its own circuit breaker.
 * How a row is given a lane and moves after a network failure: `Egress`.
 */
import { BreError, type ErrorCode } from '@bre-batch/core/errors';
import { createClient, type ServiceClient } from '../http/chain.js';
import type { LimiterFactory } from '../limits/factory.js';
import type { LimiterStats, ServiceLimiter } from '../limits/limiter.js';
import { CallStats } from '../metrics/service-stats.js';
import { kindOf } from '../stages/index.js';
import type { StageContext } from '../stages/types.js';
import { perService, SERVICES, type InputRow, type ServiceName } from '@bre-batch/core/types';
import { Circuit } from './circuit.js';
import { createLimiters } from './limiters.js';
import { runRow, type RowOutcome, type StageRuntime } from './row.js';
import type { CallSettings, RunSettings } from './settings.js';

/** What the lanes read: how calls are made, and the pipeline's stages. */
type EgressSettings = CallSettings & Pick<RunSettings, 'pipeline' | 'log' | 'dryRun'>;
import type { RunStop } from './stop.js';
import type { SpendMeter } from '../limits/spend.js';
import { stagePrice } from './spend.js';

/** Failures of the path from one address, not of the row or the service: another address may get through. */
const ADDRESS_FAILURES: ReadonlySet<ErrorCode> = new Set(['NETWORK', 'TIMEOUT']);

/** One source address: its client, limiters, stages (bound to its client) and circuit, and what it did. */
export interface Lane {
  /** undefined: the system picks (no --local-address). */
  readonly address: string | undefined;
  readonly client: ServiceClient;
  readonly limiters: Record<ServiceName, ServiceLimiter>;
  readonly stages: readonly StageRuntime[];
  readonly circuit: Circuit;
  /** Rows started here (moved-in ones included), rows in flight, rows that failed here, rows moved away. */
  rows: number;
  inFlight: number;
  failures: number;
  movedAway: number;
  /** Why its circuit opened; undefined while it takes rows. */
  down: string | undefined;
  /** Its limiters' figures, taken when they are stopped. */
  limiterStats: Partial<Record<ServiceName, LimiterStats>>;
}

/** What the stages of a run share whatever lane runs them: config, counters, per-stage stats. */
export interface StageShared {
  readonly config: StageRuntime['config'];
  readonly counters: StageRuntime['counters'];
  readonly stats: CallStats;
}

/**
 * A row goes to the lane whose next start for the row's first service comes soonest (ServiceLimiter's
 * nextStartInMs; fewest rows in flight breaks ties, as when no rate is set), and all its stages leave from
 * that address: the service sees one caller per applicant. A 429 pauses only its own lane's limiter.
 *
 * A lane failing at the network (NETWORK or TIMEOUT after all its retries): the row runs again, whole, on a
 * lane it has not tried and whose circuit is closed, and is written as an error only when there is none.
 * Each lane's circuit counts its own outcomes first; an open one takes no more rows this session, and when
 * every lane is open the run stops (CIRCUIT_OPEN). Rows a lane wrote are counted by the run's circuit
 * (./recorder.ts) as before. A row only moves after it failed, so a row that succeeded is never sent again.
 */
export class Egress {
  /** Per service, every lane's attempts together (the first lane's own stats when there is one lane). */
  readonly stats: Readonly<Record<ServiceName, CallStats>>;
  readonly #firstService: ServiceName;

  private constructor(
    readonly lanes: readonly Lane[],
    stats: Record<ServiceName, CallStats>,
    private readonly s: EgressSettings,
    private readonly stop: RunStop,
    private readonly log: (line: string) => void,
  ) {
    this.stats = stats;
    this.#firstService = kindOf(s.pipeline.stages[0]).service;
  }

  /** A lane per address (one without the option), each with its limiters and client; on failure, those made are stopped. */
  static async open(
    s: EgressSettings,
    factory: LimiterFactory,
    stages: readonly StageShared[],
    stop: RunStop,
    log: (line: string) => void,
    spend?: SpendMeter,
  ): Promise<Egress> {
    const addresses: (string | undefined)[] =
      s.localAddresses && s.localAddresses.length > 0 ? [...s.localAddresses] : [undefined];
    const runStats = addresses.length > 1 ? perService(() => new CallStats()) : undefined;
    const lanes: Lane[] = [];
    try {
      for (const address of addresses) {
        const limiters = await createLimiters(s, factory, address);
        const client = createClient({
          clientId: s.clientId,
          authToken: s.authToken,
          maxAttempts: s.maxAttempts,
          signal: stop.signal,
          hardSignal: stop.hardSignal,
          ...(s.throttleDeadlineMs !== undefined ? { throttleDeadlineMs: s.throttleDeadlineMs } : {}),
          ...(s.maxResponseBytes !== undefined ? { maxResponseBytes: s.maxResponseBytes } : {}),
          targets: perService((svc) => ({
            baseUrl: s.baseUrls[svc],
            timeoutMs: s.timeoutsMs[svc],
            limiter: limiters[svc],
            connections: s.concurrency[svc],
          })),
          ...(address ? { localAddress: address } : {}),
          ...(runStats ? { alsoStats: runStats } : {}),
          ...(s.network ? { network: s.network } : {}),
          ...(spend ? { spend } : {}),
        });
        const bound = stages.map((st): StageRuntime => {
          const service = kindOf(st.config).service;
          const price = spend ? stagePrice(spend, st.config) : 0;
          // A call without options of its own (every stage's but a job's worker's) shares one priced options object.
          const priced = { price };
          return {
            config: st.config,
            counters: st.counters,
            call:
              price > 0
                ? (path, body, o) => client.call(service, path, body, o ? { ...o, price } : priced, st.stats)
                : (path, body, o) => client.call(service, path, body, o, st.stats),
          };
        });
        lanes.push({
          address,
          client,
          limiters,
          stages: bound,
          circuit: new Circuit(s.circuit),
          rows: 0,
          inFlight: 0,
          failures: 0,
          movedAway: 0,
          down: undefined,
          limiterStats: {},
        });
      }
    } catch (err) {
      for (const lane of lanes) for (const svc of SERVICES) await lane.limiters[svc].stop().catch(() => undefined);
      throw err;
    }
    return new Egress(lanes, runStats ?? (lanes[0].client.stats as Record<ServiceName, CallStats>), s, stop, log);
  }

  get several(): boolean {
    return this.lanes.length > 1;
  }

  /** Retry sleeps per service, over every lane. */
  get retryWaitMs(): Readonly<Record<ServiceName, number>> {
    return perService((svc) => this.lanes.reduce((n, l) => n + l.client.retryWaitMs[svc], 0));
  }

  /**
   * The row's stages, from one lane, moved to another while its lane fails at the network and another is healthy.
   * `sendable`: asked before each attempt is sent (./row.ts `runRow`).
   */
  async run(row: InputRow, ctx: StageContext, sendable?: () => boolean | Promise<boolean>): Promise<RowOutcome> {
    if (!this.several) return runRow(row, this.lanes[0].stages, ctx, this.s.dryRun, sendable);
    const tried = new Set<Lane>();
    for (let lane = this.#pick(tried) ?? this.#anyLane(); ; ) {
      tried.add(lane);
      lane.rows += 1;
      lane.inFlight += 1;
      let outcome: RowOutcome;
      try {
        outcome = await runRow(row, lane.stages, ctx, this.s.dryRun, sendable);
      } finally {
        lane.inFlight -= 1;
      }
      const next = this.#afterOutcome(lane, outcome, tried);
      if (!next)
        return outcome.kind === 'fatal' ? { ...outcome, error: fromAddress(outcome.error, lane.address) } : outcome;
      lane.movedAway += 1;
      const failed = outcome.kind === 'failed' ? lane.stages.find((st) => st.config.id === outcome.stage) : undefined;
      // The row did not fail in the end: its stage's count of failed rows is taken back (its calls stay counted).
      if (failed) failed.counters.failed -= 1;
      lane = next;
    }
  }

  /** Counts the outcome in the lane's circuit; returns the lane to move the row to, if it is to move. */
  #afterOutcome(lane: Lane, outcome: RowOutcome, tried: ReadonlySet<Lane>): Lane | undefined {
    if (outcome.kind === 'result') lane.circuit.record(null);
    if (outcome.kind !== 'failed') return undefined;
    lane.failures += 1;
    const code = outcome.error.code;
    const opened = lane.circuit.record(code);
    if (opened && !lane.down) this.#laneDown(lane, opened);
    if (!ADDRESS_FAILURES.has(code) || this.stop.signal.aborted) return undefined;
    return this.#pick(tried);
  }

  #laneDown(lane: Lane, why: string): void {
    lane.down = why;
    const healthy = this.lanes.filter((l) => !l.down).length;
    this.log(
      `address ${lane.address} is failing (${why}): ${healthy > 0 ? `its rows go to the ${healthy} other address${healthy > 1 ? 'es' : ''}` : 'no address is left'}`,
    );
    if (healthy === 0) {
      this.stop.request(
        new BreError(
          'CIRCUIT_OPEN',
          `stopping: every --local-address is failing (the last, ${lane.address}: ${why}). When they are back, re-run the same command to resume (add --retry-errors to run the failed rows again).`,
        ),
      );
    }
  }

  /**
   * The healthy lane not yet tried whose next start for the first service comes soonest; fewest rows in
   * flight among starts within half a millisecond (no rate: every lane says 0).
   */
  #pick(tried: ReadonlySet<Lane>): Lane | undefined {
    let best: Lane | undefined;
    let bestMs = Infinity;
    for (const lane of this.lanes) {
      if (lane.down || tried.has(lane)) continue;
      const ms = lane.limiters[this.#firstService].nextStartInMs();
      if (!best || ms < bestMs - 0.5 || (ms <= bestMs + 0.5 && lane.inFlight < best.inFlight)) {
        best = lane;
        bestMs = ms;
      }
    }
    return best;
  }

  /** Every lane is open (the run is stopping): the row goes to the least busy, where it will be interrupted. */
  #anyLane(): Lane {
    return this.lanes.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));
  }

  async closeClients(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.client.close()));
  }

  /** Every limiter of every lane is stopped, even when one fails to (the first failure is thrown after). */
  async stopLimiters(): Promise<void> {
    let failure: unknown;
    for (const lane of this.lanes)
      for (const svc of SERVICES) {
        try {
          await lane.limiters[svc].stop();
          lane.limiterStats[svc] = lane.limiters[svc].stats();
        } catch (err) {
          failure ??= err;
        }
      }
    if (failure !== undefined) throw failure;
  }

  /** The limiters' figures per service over every lane: waits summed, rates summed, the widest slack and margin. */
  limiterStats(): Partial<Record<ServiceName, LimiterStats>> {
    const out: Partial<Record<ServiceName, LimiterStats>> = {};
    for (const svc of SERVICES) {
      const all = this.lanes.map((l) => l.limiterStats[svc]).filter((x): x is LimiterStats => x !== undefined);
      if (all.length === 0) continue;
      if (all.length === 1) {
        out[svc] = all[0];
        continue;
      }
      const widest = (pick: (x: LimiterStats) => number | undefined) => {
        const xs = all.map(pick).filter((x): x is number => x !== undefined);
        return xs.length > 0 ? Math.max(...xs) : undefined;
      };
      const slackMs = widest((x) => x.slackMs);
      const marginMs = widest((x) => x.marginMs);
      out[svc] = {
        waitMs: all.reduce((n, x) => n + x.waitMs, 0),
        scheduled: all.reduce((n, x) => n + x.scheduled, 0),
        currentPerMinute: all.some((x) => x.currentPerMinute === null)
          ? null
          : all.reduce((n, x) => n + x.currentPerMinute!, 0),
        ...(slackMs !== undefined ? { slackMs } : {}),
        ...(marginMs !== undefined ? { marginMs } : {}),
        ...heldMost(all),
      };
    }
    return out;
  }
}

/** The lane whose bound on calls in flight held its rate back longest speaks for the service. */
function heldMost(all: readonly LimiterStats[]): Pick<LimiterStats, 'inFlight'> {
  let most: LimiterStats['inFlight'];
  for (const x of all) if (x.inFlight && (!most || x.inFlight.boundHeldMs > most.boundHeldMs)) most = x.inFlight;
  return most ? { inFlight: most } : {};
}

/** A fatal answer to one address (403 IP not allowed, say) names the address in the stop's message. */
function fromAddress(e: BreError, address: string | undefined): BreError {
  if (!address) return e;
  return new BreError(e.code, `${e.message} (calls from --local-address ${address})`, {
    status: e.status,
    service: e.service,
    stage: e.stage,
    attempts: e.attempts,
    cause: e,
  });
}
