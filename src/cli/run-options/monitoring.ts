/**
 * `run`'s monitoring options: the progress bar, Prometheus metrics (a file, a port, a Pushgateway) and the log
 * lines' form. The Pushgateway's URL is checked where the metrics start (src/app/execute-run.ts): its parser comes with
 * prom-client, which only a run that asks for metrics loads.
 */
import { LOG_FORMATS, parseLogFormat, type LogFormat } from '../../log/logger.js';
import { numberIn, type OptionFamily } from './family.js';

export interface MonitoringArgs {
  progress: boolean;
  'metrics-file'?: string;
  'metrics-port'?: unknown;
  pushgateway?: string;
  'log-format'?: string;
}

export const MONITORING_OPTIONS = {
  title: 'Monitoring:',
  options: {
    progress: {
      type: 'boolean',
      default: true,
      describe:
        'progress bar on stderr (--no-progress: none); off a terminal there is none, and the run logs its plan at the start and a progress line every minute instead',
    },
    'metrics-file': {
      type: 'string',
      describe:
        "write Prometheus metrics here for node exporter's textfile collector (replaced every 5 s and at the end)",
    },
    'metrics-port': {
      requiresArg: true,
      describe: 'PORT: serve the same metrics on http://127.0.0.1:PORT/metrics while the run goes',
    },
    pushgateway: {
      type: 'string',
      describe:
        'push the same metrics to this Prometheus Pushgateway (push-add, job bre_batch, grouped by pipeline) every 5 s and at the end; a gateway that is down never stops the run',
    },
    'log-format': {
      type: 'string',
      choices: [...LOG_FORMATS],
      defaultDescription: 'human',
      describe: 'log lines on stderr: human, or json (one object a line)',
    },
  },
} as const satisfies OptionFamily;

export interface ResolvedMonitoring {
  readonly progress: boolean;
  /** Where the scheduler's metrics go; undefined: none. */
  readonly metrics?: { readonly file?: string; readonly port?: number; readonly pushgateway?: string };
  readonly logFormat: LogFormat;
}

export function resolveMonitoring(a: MonitoringArgs): ResolvedMonitoring {
  const port =
    a['metrics-port'] === undefined
      ? undefined
      : numberIn(
          'metrics-port',
          a['metrics-port'],
          'a port number from 0 to 65535',
          (n) => Number.isInteger(n) && n >= 0 && n <= 65535,
        );
  const file = a['metrics-file'];
  const pushgateway = a.pushgateway;
  const any = file !== undefined || port !== undefined || pushgateway !== undefined;
  return {
    progress: a.progress,
    ...(any
      ? {
          metrics: {
            ...(file !== undefined ? { file } : {}),
            ...(port !== undefined ? { port } : {}),
            ...(pushgateway !== undefined ? { pushgateway } : {}),
          },
        }
      : {}),
    logFormat: parseLogFormat(a['log-format']),
  };
}
