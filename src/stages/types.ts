/**
 * The contract between the runner and a stage kind. A stage kind (workflow call, bureau features,
 * AA fetch, BSA fetch, ...) registers by name in ./registry.ts. The runner:
 *   1. calls `prepare` for every stage of a row before any call is made (validation, building bodies,
 *      reading report files): a row with any field error goes to errors.ndjson and costs no call;
 *   2. calls `execute` for each stage whose `when` holds, with a `ServiceCall` that already goes through
 *      auth, the service's limiter, retries and the per-attempt time-out (src/http/chain.ts);
 *   3. writes `result` under `stages.<id>` and `transactions` to transactions.csv.
 */
import type { z } from 'zod';
import type { CallOptions, CallResult } from '../http/chain.js';
import type { FilesRoot } from '../input/files-root.js';
import type { ColumnSpec, PrepareResult } from '../input/validation.js';
import type {
  InputRow,
  JsonObject,
  NormalisedResult,
  NormalisedTransaction,
  NumberStyle,
  ResultField,
  SecretValue,
  ServiceName,
} from '@bre-batch/core/types';

/** One validated stage of a pipeline file (see src/config/pipeline.ts for the file format). */
export interface StageConfig<Options = Record<string, unknown>> {
  /** Stage id, unique in the pipeline; prefixes the stage's columns in results.csv. */
  readonly id: string;
  /** Registered stage kind name (workflow, bureau_features, aa_fetch, aa_report, bsa_fetch). */
  readonly kind: string;
  /** Workflow endpoint name, for kind `workflow`. */
  readonly endpoint?: string;
  /** Conditions on earlier stages' normalised results; all must hold for the stage to run. */
  readonly when: readonly StageCondition[];
  /** Kind-specific options, already validated by the kind's `optionsSchema`. */
  readonly options: Options;
}

export interface StageCondition {
  /** Earlier stage id. */
  readonly stage: string;
  /** Field of that stage's normalised result (e.g. `decision`, `bureau_intel.bureau_score`). */
  readonly field: string;
  readonly equals?: unknown;
  readonly not_equals?: unknown;
  readonly in?: readonly unknown[];
  readonly not_in?: readonly unknown[];
  readonly gte?: number;
  readonly lte?: number;
  readonly exists?: boolean;
}

export interface StageContext {
  /** The folder file columns (`*_path`) must lie inside: the input file's folder, --files-root, or none. */
  readonly filesRoot: FilesRoot;
  readonly clientId: string;
  /** The run's clock (tests move it). */
  readonly now: () => Date;
  /** Aborted when the run is stopping (401/403, circuit breaker, SIGINT): long polls must give up. */
  readonly signal: AbortSignal;
  /** A warning about a row that does not make it fail (e.g. an AA date range over 6 months). */
  readonly warn: (message: string, row?: InputRow) => void;
  /** How numbers written as text are read in this run's input (see src/input/coerce.ts). Default: a comma file's. */
  readonly numberStyle?: NumberStyle;
}

/**
 * POST `path` (e.g. `/execute/<client>/location_bre`, `/api/bureau`, `/aa/fetch_data`) with a JSON body to
 * the stage's service. Resolves on 2xx with the parsed body. Throws a BreError (packages/core/src/errors.ts) otherwise,
 * after retries: its code says what happened (WORKFLOW_REJECTED_INPUT, VALIDATION_FAILED, ACCOUNT_ERROR,
 * BAD_RESPONSE, RATE_LIMITED after the last attempt, ...). Stages never retry by themselves, except
 * polling a state (BSA status_check), which is a new call each time.
 */
export type ServiceCall = (path: string, body: JsonObject, options?: CallOptions) => Promise<CallResult>;

/** @public */
export interface StageOutput {
  readonly result: NormalisedResult;
  readonly transactions?: readonly NormalisedTransaction[];
  /** Kept in secrets.ndjson (mode 0600) and scrubbed from every other output. */
  readonly secrets?: readonly SecretValue[];
  /** Calls made by this stage for this row (a multi-consent AA fetch makes several). */
  readonly calls?: number;
}

/** Stage id -> decision label -> rows (summary.json's `decisions`). */
export type DecisionCounts = Record<string, Record<string, number>>;

/** The strategy that answered a result: the two parts of `workflow_<name>_<version>` (either null when absent). */
export interface StrategyVersion {
  readonly workflow: string | null;
  readonly version: string | null;
}

/** Stage id -> version -> its rows and their decisions (summary.json's `versions`). */
export type VersionCounts = Record<
  string,
  Record<string, { rows: number; workflow: string | null; decisions: Record<string, number> }>
>;

/**
 * A stage kind: everything the rest of the program needs to know about it is declared here, so that
 * nothing outside src/stages/ names a kind.
 */
export interface StageKind<Options = Record<string, unknown>, Prepared = unknown> {
  readonly kind: string;
  /** The service its calls go to (its limiter, base URL and time-out). */
  readonly service: ServiceName;
  /**
   * Whether `execute` returns bank transactions: the run then keeps a journal of them and writes
   * transactions.csv. Default false.
   */
  readonly producesTransactions?: boolean;
  /** Calls one row nominally costs, for `run --plan` (no retries; a conditional stage counted as run). Default 1. */
  callsPerRow?(stage: StageConfig<Options>): number;
  /**
   * The label a row's result is counted under in summary.json's `decisions` (e.g. `Approve`); kinds
   * without a decision leave it out. A skipped stage counts as `(skipped)` whatever the kind.
   */
  decisionOf?(result: Readonly<Record<string, unknown>>): string;
  /**
   * The strategy that answered (a workflow's `workflow_version_path`), for the counts per version, the first
   * answer of a new version and `--expect-version`. Kinds whose answers carry no version leave it out.
   */
  versionOf?(result: Readonly<Record<string, unknown>>): StrategyVersion;
  /** One-line description for `bre-batch pipelines`. */
  readonly description: string;
  /** Validates `options:` of the stage in a pipeline file; supplies defaults. */
  readonly optionsSchema: z.ZodType<Options>;
  /** Checks across the stage config (e.g. `endpoint` present for workflow); returns messages. */
  checkConfig?(stage: StageConfig<Options>): string[];
  columns(stage: StageConfig<Options>): ColumnSpec;
  /**
   * Result fields known before the run, typed: a stable results.csv header, results.parquet's and the sink's
   * columns from the first row, null or not. More may appear (a workflow's `<engine>.<feature>`): those get
   * their columns as they are met.
   */
  resultFields?(stage: StageConfig<Options>): readonly ResultField[];
  /**
   * Validate the row and build the request(s). No network. Never throws for bad input. May answer
   * synchronously (no promise) when it reads no file: the runner only waits when it is given a promise.
   */
  prepare(
    row: InputRow,
    stage: StageConfig<Options>,
    ctx: StageContext,
  ): PrepareResult<Prepared> | Promise<PrepareResult<Prepared>>;
  /** Make the call(s) and normalise. Throws BreError for a row error. */
  execute(prepared: Prepared, call: ServiceCall, stage: StageConfig<Options>, ctx: StageContext): Promise<StageOutput>;
}
