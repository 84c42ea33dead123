/**
 * The spool's thread (started by ./spool-thread.ts): follows results.ndjson as the run appends to it, and
 * feeds each line, with its byte range, to a ResultSpool (./spool.ts). The run's thread only says how far
 * the file has grown; the lines are read back from the page cache here, parsed and encoded on this thread.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { dirname } from 'node:path';
import { diskFullCode, diskFullError, internalError, isBreError, outputUnwritable } from '@bre-batch/core/errors';
import { ColumnUnion } from '../journal/columns.js';
import { DecisionCounter } from '../../stages/index.js';
import { SpoolRecorder } from './records.js';
import { newSpoolId, ResultSpool, type ResultLine } from './spool.js';
import { POLL_MS, type FromSpool, type SpoolWorkerData, type ToSpool } from './spool-thread.js';
import { threadPort } from '../worker-thread.js';

/** Bytes read at a time; a line longer than this is read whole with a larger buffer. */
const CHUNK = 1 << 20;

/** Reads the complete lines of a growing file from `start`, up to a line boundary the writer names. */
export class JournalFollower {
  #fd: number;
  #buf = Buffer.allocUnsafe(CHUNK);
  pos: number;

  constructor(path: string, start: number) {
    this.#fd = openSync(path, 'r');
    this.pos = start;
  }

  /** Hands over the lines in [pos, target), at most one buffer's worth; `each` gets a line and its bytes. */
  step(target: number, each: (text: string, start: number, end: number) => void): void {
    const want = Math.min(target - this.pos, this.#buf.length);
    const n = readSync(this.#fd, this.#buf, 0, want, this.pos);
    let from = 0;
    for (let nl = this.#buf.indexOf(0x0a, 0); nl !== -1 && nl < n; nl = this.#buf.indexOf(0x0a, from)) {
      if (nl > from) each(this.#buf.toString('utf8', from, nl), this.pos + from, this.pos + nl + 1);
      from = nl + 1;
    }
    if (from === 0) {
      // No whole line in a full buffer: the line is longer than the buffer. Else the writer named an end
      // that is not there (the file was cut from outside): nothing to follow any more.
      if (n === this.#buf.length) this.#buf = Buffer.allocUnsafe(this.#buf.length * 2);
      else throw new Error(`results.ndjson has no complete line between bytes ${this.pos} and ${target}`);
    }
    this.pos += from;
  }

  close(): void {
    closeSync(this.#fd);
  }
}

function parse(text: string): ResultLine | undefined {
  try {
    return JSON.parse(text) as ResultLine;
  } catch {
    // Read from the journal, a line that does not parse is left out (./spool.ts assembleResultFiles too).
    return undefined;
  }
}

const port = threadPort<SpoolWorkerData, ToSpool, FromSpool>();
if (port) {
  const { data } = port;
  const written = new BigInt64Array(data.end);
  let spool: ResultSpool | undefined;
  let follower: JournalFollower | undefined;
  let target = data.start;
  /** The run's last floor, and the length of results.ndjson its rows' lines are within. */
  let floor = 0;
  let floorAt = 0;
  let finishAt: number | undefined;
  let scheduled = false;
  let failed = false;

  const fail = (err: unknown) => {
    failed = true;
    clearInterval(poll);
    try {
      spool?.abandon();
    } catch {
      /* the message below is what matters */
    }
    // The output folder is the state folder's parent. A failure with a system code is the disk's or the folder's.
    const folder = dirname(data.stateDir);
    const code = (err as { code?: unknown } | null)?.code;
    const e = isBreError(err)
      ? err
      : diskFullCode(err)
        ? diskFullError(folder, err)
        : typeof code === 'string'
          ? outputUnwritable(folder, err)
          : internalError(err, "in the spool's thread");
    port.fail(e);
  };

  const step = () => {
    scheduled = false;
    try {
      if (follower!.pos < target) {
        follower!.step(target, (text, start, end) => {
          const line = parse(text);
          if (line?.stages) spool!.add(line, start, end);
        });
      }
      // Every line below the floor's length read: its rows can go out of the reorder buffer.
      if (floor > 0 && follower!.pos >= floorAt) spool!.release(floor, floorAt);
      // One buffer a turn, so that the finish message is seen between them.
      if (follower!.pos < target) schedule();
      else if (finishAt !== undefined) {
        clearInterval(poll);
        follower!.close();
        port.post({ type: 'done', contents: spool!.finish(finishAt) });
      }
    } catch (err) {
      fail(err);
    }
  };

  const schedule = () => {
    if (scheduled || failed) return;
    scheduled = true;
    setImmediate(step);
  };

  port.onMessage((m) => {
    finishAt = m.size;
    target = Math.max(target, m.size);
    schedule();
  });
  const poll = setInterval(() => {
    // The floor before the length (SpoolThread.notify stores them the other way round).
    const f = Number(Atomics.load(written, 1));
    const end = Number(Atomics.load(written, 0));
    // A new floor, or 0: the run turned it off (a row started below an earlier one), and none is used from here.
    if (f !== floor) {
      floor = f;
      floorAt = end;
    }
    if (end > target) {
      target = end;
      schedule();
    }
  }, POLL_MS);

  try {
    const union = new ColumnUnion();
    for (const c of data.union) union.add(c.stage, c.field, c.types);
    const id = data.id ?? newSpoolId();
    const stages = data.decisions;
    spool = new ResultSpool(
      {
        stateDir: data.stateDir,
        csv: data.csv,
        parquet: data.parquet,
        stages: data.stages,
        union,
        sampled: data.sampled,
        ...(data.chunkRows ? { chunkRows: data.chunkRows } : {}),
        id,
        recorder: new SpoolRecorder(data.stateDir, id, data.resultsPath, data.start),
        ...(stages ? { tally: () => new DecisionCounter(stages) } : {}),
      },
      data.start,
    );
    follower = new JournalFollower(data.resultsPath, data.start);
  } catch (err) {
    fail(err);
  }
}
