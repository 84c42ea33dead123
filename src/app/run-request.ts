/**
 * What `bre-batch run` asks for, as src/cli/ resolves it from the options and the environment: every setting
 * of the run but what only starting things gives (the log, the metrics server, the built-in sandbox's address
 * and credentials), and what to do besides running (--plan, the metrics, the log's form).
 */
import type { LogFormat } from '../log/logger.js';
import type { RunSettings } from '../pipeline/settings.js';
import type { ServiceName } from '@bre-batch/core/types';

/** Where the services are and how to sign in: from the environment; no base URL at all means the built-in sandbox. */
export interface RunEndpoints {
  /** null when no base URL is set at all: the built-in sandbox is used. */
  readonly baseUrls: Readonly<Record<ServiceName, string>> | null;
  readonly clientId?: string;
  readonly authToken?: string;
}

/** The settings but for the output folder, whose default is chosen by looking at the folders there are. */
type ResolvedRunSettings = Omit<RunSettings, 'log' | 'metrics' | 'baseUrls' | 'clientId' | 'authToken' | 'outDir'>;

export interface RunRequest {
  readonly settings: ResolvedRunSettings;
  /** --out; undefined: the default folder (src/pipeline/default-folder.ts), this run's unfinished one if there is one. */
  readonly out: string | undefined;
  /** --keep-journal: leave a finished run's journal uncompressed (else src/output/journal/compact.ts gzips it). */
  readonly keepJournal: boolean;
  /** The command that resumes this run, as the person typed it (src/cli/resume-command.ts), for the stop message. */
  readonly resumeCommand: string;
  readonly endpoints: RunEndpoints;
  /** --plan: say what the run would take instead of running it. */
  readonly plan?: { readonly windowHours?: number };
  /** --metrics-file, --metrics-port, --pushgateway: started before the run, stopped after it. */
  readonly metrics?: { readonly file?: string; readonly port?: number; readonly pushgateway?: string };
  readonly logFormat: LogFormat;
}
