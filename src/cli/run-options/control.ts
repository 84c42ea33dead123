/** `run`'s run-control options: calling nothing (--dry-run, --plan), when to stop early, and how gracefully. */
import { BreError } from '@bre-batch/core/errors';
import { parseDuration } from '@bre-batch/core/units';
import { DEFAULT_CIRCUIT, type CircuitOptions } from '../../pipeline/circuit.js';
import { numberIn, wholeNumber, type OptionFamily } from './family.js';

export interface ControlArgs {
  'dry-run': boolean;
  plan: boolean;
  'window-hours'?: unknown;
  'stop-grace': string;
  'max-consecutive-failures': unknown;
  'max-failure-share': unknown;
  'failure-window': unknown;
  'expect-version'?: readonly string[] | string;
}

export const CONTROL_OPTIONS = {
  title: 'Run control:',
  options: {
    'dry-run': { type: 'boolean', default: false, describe: 'read, validate and build every request; call nothing' },
    plan: {
      type: 'boolean',
      default: false,
      describe:
        'call nothing: say how long the input needs at the configured limits (and, with --window-hours, how many egress IPs that window needs)',
    },
    'window-hours': {
      requiresArg: true,
      describe: 'H: with --plan, the window the run must fit in, in hours (e.g. 6 for a nightly window)',
    },
    'stop-grace': {
      type: 'string',
      default: '10s',
      describe: 'after a stop (signal, 401/403), how long calls in flight may finish',
    },
    'max-consecutive-failures': {
      requiresArg: true,
      default: DEFAULT_CIRCUIT.consecutive,
      describe: 'N: stop the run (exit 3) after this many consecutive service failures; 0 = never',
    },
    'max-failure-share': {
      requiresArg: true,
      default: DEFAULT_CIRCUIT.share,
      describe:
        'P (0 < P <= 1): stop the run (exit 3) when more than this share of the last --failure-window calls failed after all retries; 1 = never',
    },
    'failure-window': {
      requiresArg: true,
      default: DEFAULT_CIRCUIT.window,
      describe: 'N: calls over which --max-failure-share is measured',
    },
    'expect-version': {
      type: 'string',
      array: true,
      requiresArg: true,
      describe:
        "WORKFLOW=VERSION (e.g. location=v1, the parts of workflow_location_v1): stop the run (exit 3) at the first answer of that workflow in another version, not writing it; repeatable; over the pipeline file's expect_version",
    },
  },
} as const satisfies OptionFamily;

export interface ResolvedControl {
  readonly dryRun: boolean;
  /** --plan: what to say instead of running; undefined: run. */
  readonly plan?: { readonly windowHours?: number };
  readonly circuit: CircuitOptions;
  readonly stopGraceMs: number;
  /** --expect-version, over the pipeline file's `expect_version`; undefined when neither names one. */
  readonly expectVersion?: Readonly<Record<string, string>>;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** `--expect-version WORKFLOW=VERSION` (repeatable), each over the pipeline file's expectation of that workflow. */
export function resolveExpectVersion(
  given: readonly string[] | string | undefined,
  fromPipeline: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> | undefined {
  const out: Record<string, string> = { ...fromPipeline };
  for (const spec of given === undefined ? [] : Array.isArray(given) ? given : [given as string]) {
    const m = /^([^=\s]+)=([^=\s]+)$/.exec(spec.trim());
    if (!m || !NAME.test(m[1]) || !NAME.test(m[2]))
      throw new BreError(
        'USAGE',
        `Expected --expect-version WORKFLOW=VERSION (the two parts of workflow_<name>_<version>, e.g. location=v1), got '${spec}'`,
        { field: 'expect-version', expected: 'WORKFLOW=VERSION' },
      );
    out[m[1]] = m[2];
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export function resolveControl(a: ControlArgs, pipelineExpects?: Readonly<Record<string, string>>): ResolvedControl {
  const consecutive = wholeNumber('max-consecutive-failures', a['max-consecutive-failures'], { min: 0 });
  const share = numberIn(
    'max-failure-share',
    a['max-failure-share'],
    'a share above 0 and at most 1 (1 = never)',
    (n) => n > 0 && n <= 1,
  );
  const window = wholeNumber('failure-window', a['failure-window'], { min: 1 });
  const stopGraceMs = parseDuration(a['stop-grace'], { flag: 'stop-grace', unit: 's' });
  // Checked only for --plan, the one that reads it (as before the options were split by family).
  const windowHours =
    a.plan && a['window-hours'] !== undefined
      ? numberIn('window-hours', a['window-hours'], 'a number of hours above 0', (n) => n > 0)
      : undefined;
  return {
    dryRun: a['dry-run'],
    ...(a.plan ? { plan: windowHours !== undefined ? { windowHours } : {} } : {}),
    circuit: { consecutive, share, window },
    stopGraceMs,
    ...optional('expectVersion', resolveExpectVersion(a['expect-version'], pipelineExpects)),
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}
