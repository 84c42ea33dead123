/**
 * A database input's resume point, written to `.state/source-frontier.json` (packages/formats/src/frontier.ts) as
 * the run moves it (src/pipeline/frontier-tracker.ts): about once a second while rows are done, and once more
 * after the journals are closed. A point is written only once the journal lines it covers are on the disk.
 */
import { FILES, writeFrontier } from '@bre-batch/formats';
import type { RunOutput } from '../output/run-output.js';
import type { FrontierPoint, FrontierTracker } from './frontier-tracker.js';

/** How often the resume point is written while it moves: a kill loses at most the last second's move. */
const FRONTIER_EVERY_MS = 1000;

export class FrontierSaver {
  #saved: FrontierPoint | undefined;
  #chain: Promise<void> = Promise.resolve();
  #pending = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly tracker: FrontierTracker,
    private readonly output: RunOutput,
    /** The point the run started from (nothing to write until the tracker passes it). */
    start: FrontierPoint | undefined,
    private readonly warn: (line: string) => void,
  ) {
    this.#saved = start;
  }

  /** Saves about once a second until `stopTimer`; the timer never keeps the process alive. */
  startTimer(): void {
    this.#timer = setInterval(() => void this.save(true), FRONTIER_EVERY_MS);
    this.#timer.unref();
  }

  stopTimer(): void {
    clearInterval(this.#timer);
  }

  /**
   * Writes the resume point when it has moved, once the journal lines it covers are on the disk (synced off
   * the event loop while the run goes on; the point is taken before, so it covers no line written after).
   * Saves run one after another; the timer's skips a tick while one is under way. Never rejects: a folder
   * that cannot be written shows in the journal's next write, which stops the run.
   */
  save(fromTimer = false): Promise<void> {
    if (fromTimer && this.#pending > 0) return Promise.resolve();
    this.#pending += 1;
    this.#chain = this.#chain
      .then(() => this.#write())
      .finally(() => {
        this.#pending -= 1;
      });
    return this.#chain;
  }

  async #write(): Promise<void> {
    const point = this.tracker.point;
    if (!point || point.row <= (this.#saved?.row ?? 0)) return;
    try {
      await this.output.syncJournals();
      writeFrontier(this.output.dir, point);
      this.#saved = point;
    } catch (err) {
      this.warn(`warning: cannot write ${FILES.frontier} in ${this.output.dir}: ${(err as Error).message}`);
    }
  }
}
