import type { CircuitOptions } from './circuit.js';
import type { Pipeline } from '../config/pipeline.js';
import type { FilesRoot } from '../input/files-root.js';
import type { DbUrl, SourceRelation } from '../db/index.js';
import type { InputFormat } from '@bre-batch/formats/input/read';
import type { Log } from '../log/logger.js';
import type { RunMetrics } from '../metrics/prometheus.js';
import type { Rate } from '@bre-batch/core/rates';
import type { Prices } from '../limits/spend.js';
import type { SampleSpec } from '../sample/design.js';
import type { NetworkSettings } from '../http/network.js';
import type { ServiceName } from '@bre-batch/core/types';
import type { SinkTarget } from '../output/sink/index.js';

/** @public */
export interface Shard {
  /** From 1. */
  readonly index: number;
  readonly count: number;
}

/** A database input: `--input postgres://...` (or mysql://, env:VAR, file:PATH) with --table or --query. */
export interface DbInputSettings {
  readonly url: DbUrl;
  readonly relation: SourceRelation;
  /** How long a source that went away mid-run is tried again before the run stops (--input-retry; default 60 s). */
  readonly retryForMs: number;
  /** How long one statement may go unanswered before its connection is taken for lost (--input-timeout; default 5 min). */
  readonly statementTimeoutMs?: number;
  /** Rows a keyset page keeps (default DEFAULT_PAGE_ROWS, src/input/db/source.ts). */
  readonly pageRows?: number;
}

/** `run --job NAME` (with --sink): this worker's part in a job shared by many hosts (./job.ts). */
export interface JobSettings {
  readonly name: string;
  /** This process's name in the job's tables (src/job/member.ts newWorkerId). */
  readonly worker: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** Rows per chunk when this worker is the one that splits the input; undefined: a minute's (./job.ts chunkRowsFor). */
  readonly chunkRows?: number;
  /** --retry-errors: a job that is done has its chunks with errors re-opened, those rows sent again. */
  readonly retryErrors: boolean;
}

/** What the input is and how it is read (./input.ts, src/input/). */
export interface SourceSettings {
  /** Input path, or '-' for stdin; for a database input, its URL without the password (for messages). */
  readonly input: string;
  /** The file's format; a database's rows are typed values, read as NDJSON's are (its value here: 'ndjson'). */
  readonly inputFormat: InputFormat;
  /** Set for a database input (then `input` is only its name and `encoding`, `delimiter` are unset). */
  readonly source?: DbInputSettings;
  /** Text encoding of the input (WHATWG label); undefined: UTF-8 unless a byte order mark says otherwise. */
  readonly encoding?: string;
  /** CSV field separator; undefined: TAB for TSV, else sniffed among , ; TAB |. */
  readonly delimiter?: string;
  /** --decimal-comma: numbers written as text use a decimal comma and dot grouping (19,076 = 19.076). Default false. */
  readonly decimalComma?: boolean;
  /**
   * The folder file columns (bureau_report_path, bank_data_path) must lie inside: --files-root, else the input
   * file's folder, else none (stdin): src/input/files-root.ts.
   */
  readonly filesRoot: FilesRoot;
  /** --allow-empty: an input with no data rows is an empty night (exit 0), not INPUT_EMPTY (exit 2). */
  readonly allowEmpty?: boolean;
}

/** Which rows of the input the run sends: read by the feed's gates (./gates.ts), and by the folder's identity. */
export interface RowSelection {
  readonly limit?: number;
  readonly retryErrors: boolean;
  readonly shard?: Shard;
  /**
   * --sample N | --sample-share P (with --stratify-by, --seed, --sample-allocation): only the rows of a
   * stratified sample are sent, each carrying its stratum and design weight (./sample.ts). Undefined: every row.
   */
  readonly sample?: SampleSpec;
}

/** How calls are made: the limiters, the clients and their lanes (./egress.ts, src/http/), the circuit. */
export interface CallSettings {
  readonly rates: Readonly<Record<ServiceName, Rate | null>>;
  /** How late an unanswered call is taken to reach the server, ms (--rate-slack; default PATH_SLACK_MS, limits/pacer.ts). */
  readonly rateSlackMs?: number;
  /** Most attempts in flight per service. */
  readonly concurrency: Readonly<Record<ServiceName, number>>;
  readonly timeoutsMs: Readonly<Record<ServiceName, number>>;
  readonly maxAttempts: number;
  /**
   * --throttle-deadline: how long a service may answer nothing but 429s before the run stops (THROTTLED, exit 3,
   * resumable), ms. Default DEFAULT_THROTTLE_DEADLINE_MS (src/http/).
   */
  readonly throttleDeadlineMs?: number;
  /** --max-response-size: an answer longer than this is cut while it streams (RESPONSE_TOO_LARGE), bytes. */
  readonly maxResponseBytes?: number;
  readonly redisUrl?: string;
  /**
   * --local-address / BRE_LOCAL_ADDRESSES: the source addresses calls leave from, each with its own limiters
   * and connections (./egress.ts). Undefined: the system picks, as without the option.
   */
  readonly localAddresses?: readonly string[];
  /** Proxies and TLS settings of the calls (--proxy, --ca-file, --client-cert, ...; src/http/network.ts). */
  readonly network?: NetworkSettings;
  readonly clientId: string;
  readonly authToken: string;
  readonly baseUrls: Readonly<Record<ServiceName, string>>;
  readonly circuit: CircuitOptions;
}

/** Where the rows' outcomes go: the folder, its end files, the sink, a job's tables. */
export interface OutputSettings {
  readonly outDir: string;
  /** The formats of the files rebuilt at the end (--output-formats; default csv and parquet). */
  readonly outputFormats: ReadonlySet<'csv' | 'parquet'>;
  /** Personal data is masked in errors.ndjson and logs unless this is set (--keep-personal-data). */
  readonly keepPersonalData: boolean;
  /** BRE_ROW_GROUP_ROWS: rows a row group of results.parquet holds, a chunk of the spool. Undefined: 10,000. */
  readonly rowGroupRows?: number;
  /**
   * --sink URL (--sink-table, --sink-schema, --sink-retry): results, errors and transactions are also written
   * into database tables, exactly once (./sink.ts). Undefined: the folder only.
   */
  readonly sink?: SinkTarget;
  /** --job NAME: this run is one worker of a job; its rows come from the chunks it claims. Undefined: a run of its own. */
  readonly job?: JobSettings;
}

/** What calls cost and the cap (./spend.ts). */
export interface SpendSettings {
  /** What calls cost and which answers are billed (--price, --billed, the pipeline file's prices); undefined: none. */
  readonly prices?: Prices;
  /** --max-spend in micro-units: no row starts that could take the folder's spend past it. */
  readonly maxSpendMicros?: number;
}

/** What the run tells while it goes (./monitor.ts, ./progress.ts, ./versions.ts). */
export interface WatchSettings {
  /** Where log lines go (stderr; for people, or JSON with `--log-format json`). */
  readonly log: Log;
  readonly progress: boolean;
  /** The scheduler's metrics (--metrics-file, --metrics-port), already started; none by default. */
  readonly metrics?: RunMetrics;
  /**
   * Workflow name -> the strategy version its answers must carry (--expect-version over the pipeline file's
   * `expect_version`): an answer of another version stops the run and is not written (./versions.ts).
   */
  readonly expectVersion?: Readonly<Record<string, string>>;
}

/**
 * Everything a run needs, fully resolved (the CLI builds it from options and the environment), in groups by
 * the part of the run that reads them: a part is given its group, not the whole.
 */
export interface RunSettings
  extends SourceSettings,
    RowSelection,
    CallSettings,
    OutputSettings,
    SpendSettings,
    WatchSettings {
  readonly pipeline: Pipeline;
  readonly dryRun: boolean;
  /** After a stop, how long calls in flight may finish before they are abandoned. */
  readonly stopGraceMs: number;
}
