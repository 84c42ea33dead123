/**
 * One row through the pipeline: validate every stage first (a row with a bad field costs no call), then run
 * the stages in order, each only when its `when:` holds. The outcome is a result, a row error, or "not done"
 * (the run is stopping: the row is left for the resume).
 */
import { type BreError, isFatal, toBreError } from '@bre-batch/core/errors';
import { getStageKind } from '../stages/index.js';
import type { ServiceCall, StageConfig, StageContext } from '../stages/types.js';
import type { FieldError, PrepareResult } from '../input/validation.js';
import type { SecretValue } from '@bre-batch/core/types';
import type { InputRow, NormalisedTransaction } from '@bre-batch/core/types';
import { wasNotSent } from '../http/layers/sendable.js';
import { allHold } from './condition.js';

export type RowOutcome =
  | {
      readonly kind: 'result';
      readonly stages: Record<string, Record<string, unknown>>;
      readonly transactions: NormalisedTransaction[];
      readonly secrets: (SecretValue & { stage: string })[];
    }
  | { readonly kind: 'invalid'; readonly stage: string; readonly errors: readonly FieldError[] }
  | { readonly kind: 'failed'; readonly stage: string; readonly error: BreError }
  | { readonly kind: 'fatal'; readonly stage: string; readonly error: BreError }
  | { readonly kind: 'interrupted' }
  /** A call the row's `sendable` refused (its job chunk is another worker's now): not written, counted. */
  | { readonly kind: 'not sent' }
  | { readonly kind: 'valid' };

export interface StageRuntime {
  readonly config: StageConfig;
  readonly call: ServiceCall;
  readonly counters: { ran: number; skipped: number; failed: number; calls: number };
}

type Prepared = { prepared: unknown[] } | { stage: string; errors: FieldError[] };

/** Every stage's prepare, in order. Synchronous when every stage answers synchronously (no file read). */
export function prepareRow(
  row: InputRow,
  stages: readonly StageRuntime[],
  ctx: StageContext,
): Prepared | Promise<Prepared> {
  const acc = new PreparedRow(row, ctx);
  for (let i = 0; i < stages.length; i += 1) {
    const res = tryPrepare(row, stages[i], ctx);
    if (res instanceof Promise) return prepareRest(acc, res, i, row, stages, ctx);
    acc.add(stages[i], res);
  }
  return acc.finish();
}

async function prepareRest(
  acc: PreparedRow,
  pending: Promise<PrepareResult<unknown>>,
  at: number,
  row: InputRow,
  stages: readonly StageRuntime[],
  ctx: StageContext,
): Promise<Prepared> {
  acc.add(stages[at], await pending);
  for (let i = at + 1; i < stages.length; i += 1) acc.add(stages[i], await tryPrepare(row, stages[i], ctx));
  return acc.finish();
}

/** A stage kind must not throw for bad input; if one does, the row still ends in errors, not a crash. */
function prepareThrew(err: unknown): PrepareResult<unknown> {
  return {
    ok: false,
    errors: [{ field: '(row)', expected: 'a row the stage can read', message: toBreError(err).message }],
  };
}

function tryPrepare(
  row: InputRow,
  s: StageRuntime,
  ctx: StageContext,
): PrepareResult<unknown> | Promise<PrepareResult<unknown>> {
  try {
    const res = getStageKind(s.config.kind)!.prepare(row, s.config, ctx);
    return res instanceof Promise ? res.catch(prepareThrew) : res;
  } catch (err) {
    return prepareThrew(err);
  }
}

class PreparedRow {
  readonly prepared: unknown[] = [];
  readonly errors: FieldError[] = [];
  firstStage: string | undefined;

  constructor(
    readonly row: InputRow,
    readonly ctx: StageContext,
  ) {}

  add(s: StageRuntime, res: PrepareResult<unknown>): void {
    if (res.ok) {
      this.prepared.push(res.value);
      if (res.warnings) for (const w of res.warnings) this.ctx.warn(`${s.config.id}: ${w}`, this.row);
      return;
    }
    this.firstStage ??= s.config.id;
    for (const e of res.errors)
      if (!this.errors.some((x) => x.field === e.field && x.message === e.message)) this.errors.push(e);
  }

  finish(): Prepared {
    return this.errors.length > 0 ? { stage: this.firstStage!, errors: this.errors } : { prepared: this.prepared };
  }
}

/**
 * `sendable`: asked before each attempt of the row's calls is sent (src/http/layers/sendable.ts); a job's worker
 * gives it, whether it still holds the row's chunk. An attempt it refuses makes the row `not sent`: not written.
 */
export async function runRow(
  row: InputRow,
  stages: readonly StageRuntime[],
  ctx: StageContext,
  dryRun: boolean,
  sendable?: () => boolean | Promise<boolean>,
): Promise<RowOutcome> {
  const pending = prepareRow(row, stages, ctx);
  const prep = pending instanceof Promise ? await pending : pending;
  if ('errors' in prep) return { kind: 'invalid', stage: prep.stage, errors: prep.errors };
  if (dryRun) return { kind: 'valid' };
  const results: Record<string, Record<string, unknown>> = {};
  const transactions: NormalisedTransaction[] = [];
  const secrets: (SecretValue & { stage: string })[] = [];
  for (let i = 0; i < stages.length; i += 1) {
    const s = stages[i];
    if (ctx.signal.aborted) return { kind: 'interrupted' };
    if (!allHold(s.config.when, results)) {
      results[s.config.id] = { skipped: true };
      s.counters.skipped += 1;
      continue;
    }
    const kind = getStageKind(s.config.kind)!;
    const call: ServiceCall = sendable ? (path, body, o) => s.call(path, body, { ...o, sendable }) : s.call;
    try {
      const out = await kind.execute(prep.prepared[i], call, s.config, ctx);
      results[s.config.id] = out.result as Record<string, unknown>;
      if (out.transactions) transactions.push(...out.transactions);
      if (out.secrets) for (const sec of out.secrets) secrets.push({ ...sec, stage: s.config.id });
      s.counters.ran += 1;
      s.counters.calls += out.calls ?? 1;
    } catch (err) {
      let e = toBreError(err).with({ stage: s.config.id });
      // A stage only reads the body of a 2xx answer (src/http/classify.ts): an answer it cannot read is
      // reported with that status, like a body that is not JSON at all.
      if (e.code === 'BAD_RESPONSE' && e.status === null) e = e.with({ status: 200 });
      if (wasNotSent(e)) return { kind: 'not sent' };
      if (e.code === 'INTERRUPTED' || (ctx.signal.aborted && !isFatal(e.code))) return { kind: 'interrupted' };
      if (isFatal(e.code)) return { kind: 'fatal', stage: s.config.id, error: e };
      s.counters.failed += 1;
      return { kind: 'failed', stage: s.config.id, error: e };
    }
  }
  return { kind: 'result', stages: results, transactions, secrets };
}
