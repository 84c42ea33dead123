/** Everything a run needs, fully resolved (the CLI builds it from options and the environment). */
import type { CircuitOptions } from './circuit.js';
import type { Pipeline } from '../config/pipeline.js';
import type { InputFormat } from '../input/read.js';
import type { Rate } from '../limits/rates.js';
import type { ServiceName } from '../types.js';

export interface Shard {
  /** From 1. */
  readonly index: number;
  readonly count: number;
}

export interface RunSettings {
  readonly pipeline: Pipeline;
  /** Input path, or '-' for stdin. */
  readonly input: string;
  readonly inputFormat: InputFormat;
  readonly outDir: string;
  readonly rates: Readonly<Record<ServiceName, Rate | null>>;
  /** Most attempts in flight per service. */
  readonly concurrency: Readonly<Record<ServiceName, number>>;
  readonly timeoutsMs: Readonly<Record<ServiceName, number>>;
  readonly maxAttempts: number;
  readonly limit?: number;
  readonly dryRun: boolean;
  readonly retryErrors: boolean;
  readonly shard?: Shard;
  readonly redisUrl?: string;
  readonly progress: boolean;
  readonly clientId: string;
  readonly authToken: string;
  readonly baseUrls: Readonly<Record<ServiceName, string>>;
  /** Personal data is masked in errors.ndjson and logs unless this is set (--keep-personal-data). */
  readonly keepPersonalData: boolean;
  readonly circuit: CircuitOptions;
  /** After a stop, how long calls in flight may finish before they are abandoned. */
  readonly stopGraceMs: number;
  /** Where human-readable lines go (stderr). */
  readonly log: (line: string) => void;
}
