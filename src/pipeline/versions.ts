/**
 * Which strategy decided each row: the version a workflow answered with (StageKind.versionOf) is watched as
 * results are recorded. The first answer of each version of a stage is kept in the folder's time series (a
 * `version` line, so a resume knows what earlier sessions saw and the report marks it); a version that
 * follows another is logged once. With `--expect-version WORKFLOW=VERSION`, an answer of that workflow in
 * another version stops the run (VERSION_UNEXPECTED, exit 3) and is not written: neither it nor any other
 * answer of an unexpected version is done, so the resume sends those rows again.
 */
import { BreError } from '@bre-batch/core/errors';
import type { Log } from '../log/logger.js';
import type { TimelineVersion } from '../metrics/timeline-lines.js';
import { getStageKind } from '../stages/index.js';
import type { StrategyVersion } from '../stages/types.js';

type Result = Readonly<Record<string, unknown>>;

/** Workflow name -> the version its answers must carry (`--expect-version`, the pipeline file's `expect_version`). */
export type ExpectedVersions = Readonly<Record<string, string>>;

/** A first answer of a version, as summary.json and the report show it. */
export type FirstAnswer = Omit<TimelineVersion, 'kind'>;

interface Watched {
  readonly id: string;
  readonly read: (result: Result) => StrategyVersion;
  /** The version of this stage's last answer (the common case: the same again, one comparison). */
  last: string | null | undefined;
  readonly seen: Set<string | null>;
}

export class VersionWatch {
  readonly #watched: Watched[] = [];
  readonly #expected: ExpectedVersions;
  readonly #log: Log;
  readonly #stop: (why: BreError) => void;
  #mark: (line: TimelineVersion) => void = () => undefined;
  #session = 0;
  /** Every session's first answers, in order. */
  readonly firstAnswers: FirstAnswer[] = [];
  /** This session: answers of the expected workflows checked (those of another version: RunCounters.unexpectedVersion). */
  checked = 0;

  constructor(
    stages: readonly { readonly id: string; readonly kind: string }[],
    o: { readonly expected: ExpectedVersions; readonly log: Log; readonly stop: (why: BreError) => void },
  ) {
    for (const st of stages) {
      const kind = getStageKind(st.kind);
      if (kind?.versionOf)
        this.#watched.push({ id: st.id, read: kind.versionOf.bind(kind), last: undefined, seen: new Set() });
    }
    this.#expected = o.expected;
    this.#log = o.log;
    this.#stop = o.stop;
  }

  /** The folder's time series: the earlier sessions' first answers, where this session's go, and its number. */
  attach(o: VersionLog): void {
    this.#session = o.session;
    this.#mark = (line) => o.mark(line);
    for (const { kind: _, ...line } of o.earlier) {
      const w = this.#watched.find((x) => x.id === line.stage);
      if (!w || w.seen.has(line.version)) continue;
      w.seen.add(line.version);
      this.firstAnswers.push(line);
    }
  }

  /** Whether the row's line may be written: false for an answer of a version other than the one expected. */
  check(stages: Readonly<Record<string, Result>>, row: number): boolean {
    let ok = true;
    for (const w of this.#watched) {
      const result = stages[w.id];
      if (!result || result.skipped === true) continue;
      const v = w.read(result);
      if (v.version !== w.last) this.#changed(w, v, row);
      if (this.#expected === NONE || v.workflow === null || !Object.hasOwn(this.#expected, v.workflow)) continue;
      this.checked += 1;
      if (v.version === this.#expected[v.workflow]) continue;
      ok = false;
      this.#stop(
        new BreError(
          'VERSION_UNEXPECTED',
          `stopping: stage ${w.id} answered with workflow ${v.workflow} version ${v.version ?? '(none)'} (row ${row}), but --expect-version ${v.workflow}=${this.#expected[v.workflow]} expects another. That answer and any other of an unexpected version are not written: the resume sends those rows again. When the new version is meant, re-run the same command with --expect-version ${v.workflow}=${v.version ?? '...'} to resume.`,
          { field: 'expect-version', expected: `${v.workflow}=${this.#expected[v.workflow]}` },
        ),
      );
    }
    return ok;
  }

  #changed(w: Watched, v: StrategyVersion, row: number): void {
    w.last = v.version;
    if (w.seen.has(v.version)) return;
    const before = [...w.seen];
    w.seen.add(v.version);
    const line: TimelineVersion = {
      kind: 'version',
      session: this.#session,
      t: Date.now(),
      stage: w.id,
      workflow: v.workflow,
      version: v.version,
      row,
    };
    const { kind: _, ...first } = line;
    this.firstAnswers.push(first);
    this.#mark(line);
    if (before.length === 0) return;
    this.#log(
      `strategy: stage ${w.id} answered with a new version, ${v.workflow ?? '(no workflow)'} ${v.version ?? '(none)'} (row ${row}; ${before.map((b) => b ?? '(none)').join(', ')} before): rows from here on may be decided by another strategy (summary.json versions, the report's timeline)`,
      { level: 'warn', row, stage: w.id },
    );
  }
}

/** Where the first answers are kept: the folder's time series (src/pipeline/monitor.ts). */
export interface VersionLog {
  readonly session: number;
  readonly earlier: readonly TimelineVersion[];
  mark(line: TimelineVersion): void;
}

/** No expectation: the check's common case is one comparison per watched stage. */
const NONE: ExpectedVersions = Object.freeze({});

/** `--expect-version` (or the pipeline file's) as given; the frozen empty one when none. */
export function expectedVersions(given: ExpectedVersions | undefined): ExpectedVersions {
  return given && Object.keys(given).length > 0 ? given : NONE;
}
