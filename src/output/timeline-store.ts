/**
 * .state/timeline.ndjson, the run's time series (the line format is src/metrics/timeline-lines.ts), appended
 * every few seconds while a run goes. A resumed run appends to the same file, so the report shows one
 * timeline with the gaps between sessions marked. A torn last line (kill -9) is cut when the file is opened
 * again.
 */
import { join } from 'node:path';
import { existsSync, renameSync } from 'node:fs';
import type {
  Timeline,
  TimelineEnd,
  TimelineLine,
  TimelineSample,
  TimelineSession,
  TimelineVersion,
} from '../metrics/timeline-lines.js';
import { AppendFile, readNdjson } from '@bre-batch/formats/ndjson-file';

import { FILES } from '@bre-batch/formats';

export class TimelineWriter {
  readonly session: number;
  /** The first answers of each version the earlier sessions saw (src/pipeline/versions.ts). */
  readonly earlierVersions: readonly TimelineVersion[];
  readonly #file: AppendFile;

  private constructor(file: AppendFile, session: number, earlierVersions: readonly TimelineVersion[]) {
    this.#file = file;
    this.session = session;
    this.earlierVersions = earlierVersions;
  }

  /** Opens the folder's timeline for a new session (numbered after the last one in the file). */
  static async open(dir: string, start: Omit<TimelineSession, 'kind' | 'session'>): Promise<TimelineWriter> {
    const path = join(dir, FILES.timeline);
    const file = new AppendFile(path); // repairs a torn tail before it is read
    let last = 0;
    const versions: TimelineVersion[] = [];
    for await (const l of readNdjson<TimelineLine>(path)) {
      if (l && typeof l.session === 'number' && l.session > last) last = l.session;
      if (l?.kind === 'version') versions.push(l);
    }
    const w = new TimelineWriter(file, last + 1, versions);
    w.#write({ kind: 'session', session: w.session, ...start });
    return w;
  }

  /** Told when a write of the time series fails (a full disk) as it happens; later writes throw it. */
  set onFailure(fn: ((err: Error) => void) | undefined) {
    this.#file.onFailure = fn;
  }

  sample(s: Omit<TimelineSample, 'kind' | 'session'>): void {
    this.#write({ kind: 'sample', session: this.session, ...s });
  }

  version(line: Omit<TimelineVersion, 'session'>): void {
    this.#write({ ...line, session: this.session });
  }

  end(t: number, state: TimelineEnd['state']): void {
    this.#write({ kind: 'end', session: this.session, t, state });
  }

  #write(line: TimelineLine): void {
    this.#file.append(JSON.stringify(line));
  }

  close(): void {
    this.#file.close();
  }
}

/** The timeline of a folder; undefined when it has none (a folder written by an older build). */
export async function readTimeline(dir: string): Promise<Timeline | undefined> {
  const path = join(dir, FILES.timeline);
  if (!existsSync(path)) return undefined;
  const sessions: TimelineSession[] = [];
  const ends: TimelineEnd[] = [];
  const samples: TimelineSample[] = [];
  const versions: TimelineVersion[] = [];
  for await (const l of readNdjson<TimelineLine>(path)) {
    if (!l || typeof l.t !== 'number') continue;
    if (l.kind === 'session') sessions.push(l);
    else if (l.kind === 'end') ends.push(l);
    else if (l.kind === 'sample') samples.push(l);
    else if (l.kind === 'version') versions.push(l);
  }
  return { sessions, ends, samples, versions };
}

/**
 * The merged folder's timeline: every shard's lines, each marked with its shard (shards ran side by side;
 * the report adds them up per interval). Written under a temporary name and renamed.
 */
export async function mergeTimelines(
  shards: readonly { readonly dir: string; readonly shard: string }[],
  outDir: string,
): Promise<number> {
  const path = join(outDir, FILES.timeline);
  const tmp = `${path}.tmp`;
  const out = new AppendFile(tmp);
  let n = 0;
  try {
    for (const s of shards) {
      for await (const l of readNdjson<TimelineLine>(join(s.dir, FILES.timeline))) {
        if (!l || typeof l.t !== 'number') continue;
        out.append(JSON.stringify({ ...l, shard: s.shard }));
        n += 1;
      }
    }
  } finally {
    out.close();
  }
  renameSync(tmp, path);
  return n;
}
