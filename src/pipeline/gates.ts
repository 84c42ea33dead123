/**
 * The gates a row read passes before it is sent, as one ordered list (`rowGates`), each gate a small named
 * step given only what it reads. A gate passes the row on, skips it (counted, and done for a database input's
 * resume point), leaves it outside the run, or ends the feed; `RowGates` runs the list for the feed (./feed.ts).
 */
import type { BreError } from '@bre-batch/core/errors';
import { shardOf } from '../input/shard.js';
import type { SpendMeter } from '../limits/spend.js';
import type { RowSet } from '../output/journal/bitset.js';
import type { InputRow } from '@bre-batch/core/types';
import type { RunCounters } from './build-summary.js';
import type { FrontierTracker } from './frontier-tracker.js';
import type { DrawnSample } from './sample.js';
import type { RowSelection, Shard } from './settings.js';
import { sinkKeyProblem, type RunSink } from './sink.js';
import { spendCapStop } from './spend.js';
import type { RowWindow } from './window.js';

/** A row on its way through the gates, with its key; a gate may mark it as an error (the sink's key). */
export interface Candidate {
  row: InputRow;
  readonly key: string | null;
}

/** The counters of rows read and not sent (RunCounters). */
export type SkipCounter = 'notInSample' | 'outOfShard' | 'resumed';

/**
 * `pass`: on to the next gate; `skip`: not sent, counted, done; `outside`: not sent, not counted, not done (it
 * is not this run's); `end`: not sent, nor any row after it.
 */
export type Verdict = 'pass' | 'end' | 'outside' | { readonly skip: SkipCounter };

export interface Gate {
  readonly name: string;
  /**
   * A promise only when the gate waits (a full window, a sink behind): the common case stays synchronous. The
   * promise settles with the gate's verdict, or with nothing for `pass` (a wait's own promise, no other made).
   */
  readonly check: (c: Candidate) => Verdict | Promise<Waited>;
  /** What the gate holds once passed (a place in the window), given back when a later gate stops the row. */
  readonly giveBack?: () => void;
}

/** What the gates decided of a row: start it, not send it, or stop reading. */
export type Admission = 'start' | 'not sent' | 'end';

/**
 * A row held by gate `at` while it waits: the feed awaits `until` and hands what it settled with to
 * `RowGates.resume`. The feed awaits the gate's own promise: a full window has a row waiting at nearly every
 * row, and a promise chained to it for each was one more allocated a row (docs/history.md, 2026-11-29).
 */
export interface Waiting {
  readonly at: number;
  readonly until: Promise<Waited>;
}

/** What a wait settles with: a verdict, or nothing for a pass (a full window's or a sink's own promise). */
// biome-ignore lint/suspicious/noConfusingVoidType: the waits are Promise<void>, taken as they are (no promise chained to map them).
export type Waited = Verdict | void;

const pass = (ok: boolean, otherwise: Verdict): Verdict => (ok ? 'pass' : otherwise);

export const stopGate = (name: string, stop: { readonly reason: BreError | undefined }): Gate => ({
  name,
  check: () => pass(stop.reason === undefined, 'end'),
});

/** --limit N: the first N data rows; those after are not read. */
export const limitGate = (limit: number): Gate => ({ name: 'limit', check: (c) => pass(c.row.row <= limit, 'end') });

/** Every row past the limit is read: counted, and held by a database input's resume point until it is done. */
export const readGate = (counters: Pick<RunCounters, 'read'>, frontier: FrontierTracker | undefined): Gate => ({
  name: 'read',
  check: (c) => {
    counters.read += 1;
    frontier?.read(c.row);
    return 'pass';
  },
});

/** --sink: a row needs a key of its own, else it is an error (written, not sent). */
export const sinkKeyGate = (sink: Pick<RunSink, 'keys'>, keyField: string): Gate => ({
  name: 'sink key',
  check: (c) => {
    c.row = sinkKeyProblem(sink, c.row, c.key, keyField);
    return 'pass';
  },
});

/**
 * --sample: a row not drawn is neither a result nor an error. A row without a key, or unreadable, could not be
 * ranked: it goes on, to be that run's error.
 */
export const sampleGate = (sample: Pick<DrawnSample, 'chosen'>): Gate => ({
  name: 'sample',
  check: (c) =>
    pass(c.key === null || c.row.readError !== undefined || sample.chosen.has(c.row.row), { skip: 'notInSample' }),
});

/** --shard K/N: only the rows whose key hashes to shard K. */
export const shardGate = (shard: Shard): Gate => ({
  name: 'shard',
  check: (c) => pass(shardOf(c.key, c.row.row, shard.count) === shard.index, { skip: 'outOfShard' }),
});

/** A row the folder holds already (results or errors) is not sent again. */
export const resumeGate = (done: Pick<RowSet, 'has'>): Gate => ({
  name: 'resume',
  check: (c) => pass(!done.has(c.row.row), { skip: 'resumed' }),
});

/**
 * --retry-errors runs the rows of the errors file, and also the rows an earlier stopped or killed session never
 * reached (else they would be in neither file), within that run's --limit: the rows after it are outside.
 */
export const retryErrorsGate = (
  o: { readonly retryErrors: boolean; readonly retry: Pick<RowSet, 'has'>; readonly earlierLimit: number | null },
  counters: Pick<RunCounters, 'retriedRows'>,
): Gate => ({
  name: 'retry errors',
  check: (c) => {
    if (o.retry.has(c.row.row)) {
      counters.retriedRows += 1;
      return 'pass';
    }
    return pass(!o.retryErrors || o.earlierLimit === null || c.row.row <= o.earlierLimit, 'outside');
  },
});

/** --sink: a sink far behind holds the rows back (its journal lag is bounded, not the memory). */
export const sinkBehindGate = (room: () => Promise<void> | undefined): Gate => ({
  name: 'sink behind',
  check: () => room() ?? 'pass',
});

/** A place in the window of rows in flight, waited for when it is full. */
export const windowGate = (window: Pick<RowWindow, 'enter' | 'giveBack'>): Gate => ({
  name: 'window',
  check: () => window.enter() ?? 'pass',
  giveBack: () => window.giveBack(),
});

/**
 * --max-spend: a row starts only when its calls fit under the cap with those of the rows in flight (topped up
 * from a job's cap when it has one); when they cannot, the run stops.
 */
export const spendGate = (
  spend: SpendMeter,
  stop: { readonly reason: BreError | undefined; request(why: BreError): void },
): Gate => {
  const started = (): Verdict => {
    spend.rowsInFlight += 1;
    return 'pass';
  };
  return {
    name: 'spend',
    check: () =>
      spend.admits()
        ? started()
        : spend.admitsAfterTopUp().then((fits) => {
            if (!fits) stop.request(spendCapStop(spend));
            return fits && stop.reason === undefined ? started() : 'end';
          }),
    giveBack: () => {
      spend.rowsInFlight -= 1;
    },
  };
};

/** What the list is made of: the run's parts, each gate given its own. */
export interface GateParts {
  readonly selection: RowSelection;
  readonly keyField: string;
  readonly counters: RunCounters;
  readonly stop: { readonly reason: BreError | undefined; request(why: BreError): void };
  readonly frontier: FrontierTracker | undefined;
  readonly sink: Pick<RunSink, 'keys'> | undefined;
  /**
   * A job's worker: what is done is what the job committed, and its chunks' rows come without those
   * (src/job/member.ts). Its folder's lines do not say it: a line whose commit the fence refused (its chunk
   * taken over) is in the folder, and its row must be sent again if the chunk comes back to this worker.
   */
  readonly job?: boolean;
  readonly sample: Pick<DrawnSample, 'chosen'> | undefined;
  readonly output:
    | {
        readonly done: Pick<RowSet, 'has'>;
        readonly retry: Pick<RowSet, 'has'>;
        readonly earlierLimit: number | null;
        readonly journalEnds: { results: number; errors: number };
      }
    | undefined;
  readonly sinkRoom: ((ends: { results: number; errors: number }) => Promise<void> | undefined) | undefined;
  readonly window: Pick<RowWindow, 'enter' | 'giveBack'>;
  readonly spend: SpendMeter | undefined;
}

/**
 * The gates in their order, written once here. A stop or the limit ends the feed before the row is read. Every
 * row read is counted and held by the resume point before any gate may skip it (a skipped row is done at once).
 * The sink's key is checked over every row read, done ones included (a key repeated across sessions is one too).
 * Then the row's own choices: the sample, the shard, the folder's done rows, --retry-errors; a row meets the
 * first that leaves it out, and is counted there. Last the gates that wait or hold (the sink behind, a place in
 * the window, the spend): only a row that will be sent waits; after a wait the stop is looked at again; the
 * spend comes after the window, whose rows in flight its check counts.
 */
export function rowGates(p: GateParts): Gate[] {
  const { selection: s, output } = p;
  const gates: (Gate | false | undefined)[] = [
    stopGate('stopped', p.stop),
    s.limit !== undefined && limitGate(s.limit),
    readGate(p.counters, p.frontier),
    p.sink && sinkKeyGate(p.sink, p.keyField),
    p.sample && sampleGate(p.sample),
    s.shard && shardGate(s.shard),
    output && !p.job && resumeGate(output.done),
    output && retryErrorsGate({ ...output, retryErrors: s.retryErrors }, p.counters),
    output && p.sinkRoom && sinkBehindGate(() => p.sinkRoom!(output.journalEnds)),
    windowGate(p.window),
    stopGate('stopped while waiting', p.stop),
    p.spend && spendGate(p.spend, p.stop),
  ];
  return gates.filter((g): g is Gate => g !== false && g !== undefined);
}

/** Runs each row read through the gates; a skip is counted and done here, once for every gate. */
export class RowGates {
  constructor(
    readonly gates: readonly Gate[],
    private readonly skipped: (row: InputRow, counter: SkipCounter) => void,
  ) {}

  /** What the gates decide of `c`, or the gate that holds it while it waits (then `resume`). */
  admit(c: Candidate): Admission | Waiting {
    return this.#from(0, c);
  }

  /** After the wait of `w`: what it settled with decides, then the gates after it are asked. */
  resume(w: Waiting, c: Candidate, v: Waited): Admission | Waiting {
    return v === undefined || v === 'pass' ? this.#from(w.at + 1, c) : this.#stopped(w.at, c, v);
  }

  #from(first: number, c: Candidate): Admission | Waiting {
    for (let i = first; i < this.gates.length; i += 1) {
      const v = this.gates[i]!.check(c);
      if (v === 'pass') continue;
      if (v instanceof Promise) return { at: i, until: v };
      return this.#stopped(i, c, v);
    }
    return 'start';
  }

  /** Gate `at` stopped the row: the gates before it give back what they hold. */
  #stopped(at: number, c: Candidate, v: Exclude<Verdict, 'pass'>): Admission {
    for (let i = at - 1; i >= 0; i -= 1) this.gates[i]!.giveBack?.();
    if (v === 'end') return 'end';
    if (v !== 'outside') this.skipped(c.row, v.skip);
    return 'not sent';
  }
}
