/**
 * Where a row's outcome goes: results or errors (personal data masked, secrets scrubbed), the counters,
 * and the circuit breaker, which may stop the run. The runner only hands outcomes over.
 */
import { BreError } from '@bre-batch/core/errors';
import { maskQuotedValue, maskRow, maskText } from '@bre-batch/formats/input/mask';
import { rowKey } from '../input/shard.js';
import { Redactor } from '../output/redact.js';
import type { ErrorLine } from '@bre-batch/formats';
import type { RunOutput } from '../output/run-output.js';
import type { RunCounters } from './build-summary.js';
import type { InputRow } from '@bre-batch/core/types';
import type { Circuit } from './circuit.js';
import type { RowOutcome } from './row.js';
import type { SampleMembership } from './sample.js';
import type { RunSettings } from './settings.js';
import type { VersionWatch } from './versions.js';

/** Characters of an unexpected error's own message kept in its error line. */
const MAX_BUG_MESSAGE = 200;

/** What the recorder writes to and tells, given once. */
export interface RecorderOptions {
  readonly s: RunSettings;
  /** Undefined in a dry run: error lines are kept in `dryErrors`. */
  readonly output: RunOutput | undefined;
  readonly redactor: Redactor;
  readonly circuit: Circuit;
  readonly counters: RunCounters;
  readonly requestStop: (why: BreError) => void;
  /** Lines for the person running it (stderr), already scrubbed of the run's secrets. */
  readonly log: (line: string) => void;
  /** Sees the stages of every result written (the summary counts decisions there). */
  readonly onResult?: (stages: Record<string, Record<string, unknown>>) => void;
  /**
   * A sampled run: the stratum and design weight of a row, written on its line in results or errors (a failed
   * sampled row is still in the sample: the estimates must know it is missing, not outside the design).
   */
  readonly membership?: (row: number) => SampleMembership | undefined;
  /** Watches the strategy versions answered; refuses the line of an answer of an unexpected one. */
  readonly versions?: VersionWatch;
}

export class OutcomeRecorder {
  /** Error lines of a dry run (written to dry-run-errors.ndjson at the end). */
  readonly dryErrors: string[] = [];
  private readonly s: RunSettings;
  private readonly output: RunOutput | undefined;
  private readonly redactor: Redactor;
  private readonly circuit: Circuit;
  private readonly counters: RunCounters;
  private readonly requestStop: (why: BreError) => void;
  private readonly log: (line: string) => void;
  private readonly onResult: RecorderOptions['onResult'];
  private readonly membership: RecorderOptions['membership'];
  private readonly versions: VersionWatch | undefined;

  constructor(o: RecorderOptions) {
    this.s = o.s;
    this.output = o.output;
    this.redactor = o.redactor;
    this.circuit = o.circuit;
    this.counters = o.counters;
    this.requestStop = o.requestStop;
    this.log = o.log;
    this.onResult = o.onResult;
    this.membership = o.membership;
    this.versions = o.versions;
  }

  record(row: InputRow, key: string | null, outcome: RowOutcome): void {
    const c = this.counters;
    switch (outcome.kind) {
      case 'valid':
        c.dryRunValid += 1;
        return;
      case 'interrupted':
        return;
      case 'not sent':
        c.notSent += 1;
        return;
      case 'fatal':
        this.requestStop(outcome.error);
        return;
      case 'result': {
        // An answer of a version other than the one expected is not written: the row is not done, the resume sends it.
        if (this.versions && !this.versions.check(outcome.stages, row.row)) {
          c.unexpectedVersion += 1;
          return;
        }
        // Serialised once; scrubbed only if a secret could be in it (the token echoed back, a row's own).
        const raw = JSON.stringify(outcome.stages);
        let stagesJson = raw;
        if (outcome.secrets.length > 0) {
          const rowRedactor = new Redactor();
          for (const sec of outcome.secrets) rowRedactor.add(sec.value);
          stagesJson = rowRedactor.scrub(stagesJson);
        }
        stagesJson = this.redactor.scrub(stagesJson);
        // The object goes along when it is what the line says (nothing was scrubbed): the spool reads it
        // instead of parsing the line again.
        const parsed =
          stagesJson === raw
            ? (outcome.stages as Record<string, Record<string, unknown>>)
            : (JSON.parse(stagesJson) as Record<string, Record<string, unknown>>);
        this.output!.writeResult(
          row.row,
          key,
          stagesJson,
          outcome.transactions,
          outcome.secrets,
          parsed,
          this.membership?.(row.row),
        );
        this.onResult?.(parsed);
        c.succeeded += 1;
        const open = this.circuit.record(null);
        if (open) this.#openCircuit(open);
        return;
      }
      case 'invalid': {
        c.invalid += 1;
        c.failed += 1;
        const first = outcome.errors[0];
        // A personal field's message says what kind of value it was; any other message quoting a value quotes
        // it as the masked `input` shows it. --keep-personal-data quotes them all as given.
        const said = (e: (typeof outcome.errors)[number]) =>
          this.redactor.scrub(
            this.s.keepPersonalData ? (e.quoting ?? e.message) : maskQuotedValue(e.message, e.field, row.data),
          );
        this.#writeError({
          ...this.#whose(row, key, outcome.stage),
          status: null,
          code: first.code ?? 'INVALID_ROW',
          message: outcome.errors.map(said).join('; '),
          field: first.field,
          expected: first.expected,
          errors: outcome.errors.map((e) => ({ field: e.field, expected: e.expected, message: said(e) })),
          attempts: 0,
          input: this.#input(row.data),
        });
        return;
      }
      case 'failed': {
        c.failed += 1;
        const e = outcome.error;
        const message = e.code === 'UNEXPECTED' ? this.#bug(row, outcome.stage, e) : e.message;
        this.#writeError({
          ...this.#whose(row, key, outcome.stage),
          status: e.status,
          code: e.code,
          message: this.redactor.scrub(this.s.keepPersonalData ? message : maskText(message)),
          ...(e.field ? { field: e.field } : {}),
          ...(e.expected ? { expected: e.expected } : {}),
          attempts: e.attempts ?? 1,
          input: this.#input(row.data),
        });
        const open = this.circuit.record(e.code);
        if (open) this.#openCircuit(open, e);
      }
    }
  }

  /**
   * A row the reader could not read (ragged CSV, NDJSON that is not an object, ...), or a database row without
   * a key or sharing it: those were read whole, so their line has the row (masked) and the key they share.
   */
  unreadable(row: InputRow, key: string | null = null): void {
    const r = row.readError!;
    this.counters.invalid += 1;
    this.counters.failed += 1;
    // A row refused for its key (a database's, or a file's with --sink) was read whole: its line shows it, masked.
    const input = row.sourceKey !== undefined || r.code !== 'MALFORMED_ROW' ? this.#input(row.data) : null;
    // A record with the wrong number of columns still has its key cell (when it reaches that far): the line
    // names it, for the person finding the row. Its shard stays that of its row number (../input/shard.ts).
    const shown = key ?? (r.code === 'MALFORMED_ROW' ? rowKey(row, this.s.pipeline.key) : null);
    this.#writeError({
      row: row.row,
      line: row.line,
      key: shown,
      stage: null,
      status: null,
      code: r.code,
      message: r.message,
      field: r.field ?? '(row)',
      expected: r.expected,
      attempts: 0,
      input,
    });
  }

  /**
   * A row of a sampled run without a key: it cannot be ranked by hash(seed, key), so it is in no stratum and
   * is an error of the run (src/sample/draw.ts).
   */
  withoutSampleKey(row: InputRow): void {
    this.counters.invalid += 1;
    this.counters.failed += 1;
    const field = this.s.pipeline.key;
    this.#writeError({
      row: row.row,
      line: row.line,
      key: null,
      stage: null,
      status: null,
      code: 'SAMPLE_NO_KEY',
      message: `the row has no ${field}: a sample chooses rows by a hash of their key, so a row without one is in no stratum and is not sent`,
      field,
      expected: `a ${field} (the row key) in every row of a sampled run`,
      attempts: 0,
      input: this.#input(row.data),
    });
  }

  /** Anything else that went wrong with one row is that row's error (a resume would meet it again). */
  unexpected(row: InputRow, key: string | null, err: unknown): void {
    this.counters.failed += 1;
    const message = `the row could not be processed: ${this.redactor.scrub(maskText((err as Error)?.message ?? String(err)))}`;
    this.#writeError({
      ...this.#whose(row, key, null),
      status: null,
      code: 'INVALID_ROW',
      message,
      field: '(row)',
      expected: 'a row the pipeline can read',
      attempts: 0,
      input: null,
    });
  }

  /**
   * An exception nobody expected (a bug): the stack goes to the log, masked and scrubbed like every log line;
   * the row's error line gets a short message.
   */
  #bug(row: InputRow, stage: string, e: BreError): string {
    const cause = e.cause instanceof Error ? e.cause : e;
    const stack = cause.stack ?? `${cause.name}: ${cause.message}`;
    this.log(
      `row ${row.row} (line ${row.line}), stage ${stage}: unexpected error, a bug in bre-batch (please report it): ${this.redactor.scrub(this.s.keepPersonalData ? stack : maskText(stack))}`,
    );
    const short = e.message.length > MAX_BUG_MESSAGE ? `${e.message.slice(0, MAX_BUG_MESSAGE)}...` : e.message;
    return `unexpected error (a bug in bre-batch; its stack is in the log): ${short}`;
  }

  /** The head of a row's error line: its row, line and key, a sampled row's stratum and weight, the stage. */
  #whose(row: InputRow, key: string | null, stage: string | null) {
    const m = this.membership?.(row.row);
    return { row: row.row, line: row.line, key, ...(m ? { stratum: m.stratum, weight: m.weight } : {}), stage };
  }

  #writeError(e: ErrorLine): void {
    if (this.s.dryRun) this.dryErrors.push(JSON.stringify(e));
    else this.output!.writeError(e);
  }

  /** The row as written to errors.ndjson: personal data masked (unless kept), secrets scrubbed. */
  #input(data: Record<string, unknown>): Record<string, unknown> {
    try {
      return JSON.parse(this.redactor.scrub(JSON.stringify(this.s.keepPersonalData ? data : maskRow(data)))) as Record<
        string,
        unknown
      >;
    } catch {
      // JSON nested thousands deep overflows the stack when copied; the row error must still be written.
      return { '(row)': 'not shown: the row is nested too deeply to copy' };
    }
  }

  /** The circuit breaker opened: stop, naming the failing service (the last failure's) and what to do. */
  #openCircuit(reason: string, last?: BreError): void {
    const svc = last?.service ? `the ${last.service} service is failing` : 'the services are failing';
    this.requestStop(
      new BreError(
        'CIRCUIT_OPEN',
        `stopping: ${svc}: ${reason}. When it is back, re-run the same command to resume (add --retry-errors to run the failed rows again).`,
        { service: last?.service, status: last?.status },
      ),
    );
  }
}
