/**
 * Log lines on stderr, for people (default) or for log collectors (`--log-format json`: one JSON object
 * a line with time, level, message and fields such as row, stage, service and code; written by pino).
 * Both go through the same scrubber as every output (the auth token and row secrets replaced), and the
 * messages reaching here are already masked for personal data by their callers (packages/formats/src/input/mask.ts).
 *
 * pino writes synchronously to fd 2 here: a batch job logs a few lines, not thousands a second, and a
 * synchronous write is never lost at exit (pino#1705: the CLI sets process.exitCode instead of calling
 * process.exit(), so the last lines are flushed either way).
 */
import { createRequire } from 'node:module';
import type { Logger as Pino, pino as PinoFactory } from 'pino';
import { BreError } from '@bre-batch/core/errors';

export type LogFormat = 'human' | 'json';
export const LOG_FORMATS: readonly LogFormat[] = ['human', 'json'];

/** @public */
export type LogLevel = 'info' | 'warn' | 'error';

/**
 * Context of a line; in JSON they are fields of the object, in human form the message says it already.
 * @public
 */
export interface LogFields {
  readonly level?: LogLevel;
  readonly row?: number;
  readonly line?: number;
  readonly stage?: string | null;
  readonly service?: string;
  readonly code?: string;
  readonly status?: number | null;
  readonly [field: string]: unknown;
}

export type Log = (message: string, fields?: LogFields) => void;

export interface LoggerOptions {
  readonly format: LogFormat;
  /** Replaces secrets in the text of a line (src/output/redact.ts). */
  readonly scrub?: (text: string) => string;
  /** Test hook: where lines go (default: stderr, fd 2). */
  readonly write?: (text: string) => void;
}

export function parseLogFormat(value: string | undefined): LogFormat {
  if (value === undefined) return 'human';
  if ((LOG_FORMATS as readonly string[]).includes(value)) return value as LogFormat;
  throw new BreError('USAGE', `Expected --log-format to be one of ${LOG_FORMATS.join(', ')}, got '${value}'`);
}

export function createLog(o: LoggerOptions): Log {
  const scrub = o.scrub ?? ((t: string) => t);
  if (o.format === 'human') {
    const write = o.write ?? ((t: string) => process.stderr.write(t));
    return (message) => write(`${scrub(message)}\n`);
  }
  // Loaded only for JSON logs: the human form needs none of it.
  const pino = createRequire(import.meta.url)('pino') as typeof PinoFactory;
  const destination = o.write ? { write: (s: string) => o.write!(s) } : pino.destination({ fd: 2, sync: true });
  const logger: Pino = pino(
    {
      base: { pid: process.pid },
      messageKey: 'message',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // The whole serialised line is scrubbed, so a secret in any field is caught, not only in the message.
      hooks: { streamWrite: (s) => scrub(s) },
    },
    destination,
  );
  return (message, fields = {}) => {
    const { level = 'info', ...rest } = fields;
    logger[level](rest, message);
  };
}
