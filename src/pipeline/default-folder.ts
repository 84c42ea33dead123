/**
 * The output folder of a run given no --out. The rule (docs/output.md): the latest folder
 * `output/<pipeline>-<UTC timestamp>` made by the same pipeline from the same input (the same file, unchanged:
 * its size and SHA-256; or the same database table or query), with the same key, shard, --limit and sample
 * options, is resumed while it is unfinished; once it has finished, or when its input has changed since, the
 * run starts a new timestamped folder, and says why in one line. So re-running the documented commands
 * after an interrupt sends no row twice, and a finished night is never silently taken for the next one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sourceIdentity } from '../input/db/index.js';
import { FILES, readManifest, type Manifest } from '@bre-batch/formats';
import { inputFingerprint } from '../output/folder-identity.js';
import { describeSampleOptions } from '../sample/design.js';
import { specOf } from '../sample/draw.js';
import type { RunSettings } from './settings.js';

/** Where folders without --out go, under the current directory. */
const DEFAULT_OUTPUT_ROOT = 'output';

export type FolderQuery = Pick<RunSettings, 'pipeline' | 'input' | 'source' | 'shard' | 'limit' | 'sample'> & {
  /** A new folder whatever is there (a dry run, which resumes nothing). */
  readonly fresh?: boolean;
  /** --plan: the note says what the run would do; nothing is made or taken up now. */
  readonly plan?: boolean;
};

export interface FolderChoice {
  readonly dir: string;
  /** An unfinished folder of the same run, taken up again. */
  readonly resumed: boolean;
  /** The one line that says which folder and why, when there was an earlier folder of this run. */
  readonly note?: string;
}

function utcStamp(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/**
 * Whether a folder's run is done: its summary says it finished, and no --retry-errors session is under way.
 * Only the two fields are read: a summary another version wrote in full still says whether it finished.
 */
function finishedFolder(dir: string): boolean {
  let summary: { finished?: unknown; dry_run?: unknown } | null;
  try {
    summary = JSON.parse(readFileSync(join(dir, FILES.summary), 'utf8')) as typeof summary;
  } catch {
    return false;
  }
  return summary?.finished === true && summary.dry_run !== true && !existsSync(join(dir, FILES.retrying));
}

/** The same run as far as the command line says, the input's contents aside (checked apart, they cost a read). */
function sameRun(m: Manifest, q: FolderQuery): boolean {
  if (m.pipeline.name !== q.pipeline.name || m.pipeline.sha256 !== q.pipeline.sha256) return false;
  if (
    m.key !== q.pipeline.key ||
    (m.shard ?? null) !== (q.shard ? `${q.shard.index}/${q.shard.count}` : null) ||
    (m.limit ?? null) !== (q.limit ?? null)
  )
    return false;
  const sample = (x: string | undefined) => x ?? 'none';
  if (
    sample(m.sample ? describeSampleOptions(specOf(m.sample)) : undefined) !==
    sample(q.sample ? describeSampleOptions(q.sample) : undefined)
  )
    return false;
  if (q.source) {
    const now = sourceIdentity(q.source.url, q.source.relation);
    const then = m.input.source;
    return then !== undefined && then.url === now.url && then.table === now.table && then.query === now.query;
  }
  return m.input.source === undefined && m.input.path === resolve(q.input);
}

/**
 * Chooses the folder of a run without --out under `root`, as the header says. Stdin is never resumed (its
 * contents cannot be compared): a new folder each time.
 */
export async function chooseDefaultFolder(
  q: FolderQuery,
  root = DEFAULT_OUTPUT_ROOT,
  now = new Date(),
): Promise<FolderChoice> {
  const fresh = join(root, `${q.pipeline.name}-${utcStamp(now)}`);
  if (q.fresh || (q.input === '-' && !q.source)) return { dir: fresh, resumed: false };
  const pattern = new RegExp(`^${q.pipeline.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-\\d{8}T\\d{6}Z$`);
  let names: string[];
  try {
    names = readdirSync(root)
      .filter((n) => pattern.test(n))
      .sort()
      .reverse();
  } catch {
    return { dir: fresh, resumed: false };
  }
  for (const name of names) {
    const dir = join(root, name);
    const m = readManifest(dir);
    if (!m || !sameRun(m, q)) continue;
    // The latest folder of this run decides: an older unfinished one was left behind by a newer night.
    if (finishedFolder(dir)) {
      return {
        dir: fresh,
        resumed: false,
        note: q.plan
          ? `${dir} has finished this run already: the run would start a new folder beside it (--plan makes none; --out ${dir} looks at the finished one again)`
          : `${dir} has finished this run already: starting a new one in ${fresh} (--out ${dir} looks at the finished one again)`,
      };
    }
    if (!q.source) {
      const f = await inputFingerprint(q.input);
      if (f.size !== m.input.size || f.sha256 !== m.input.sha256) {
        return {
          dir: fresh,
          resumed: false,
          note: `${dir} is unfinished, but ${q.input} has changed since it started (another size or contents): ${q.plan ? 'the run would start a new folder beside it (--plan makes none)' : `starting a new run in ${fresh}`} (to finish the old one, put its input back and give --out ${dir})`,
        };
      }
    }
    return {
      dir,
      resumed: true,
      note: `${q.plan ? 'the run would resume' : 'resuming'} the unfinished run in ${dir} (same pipeline and input; rows already done are not sent again; --out DIR chooses another folder)`,
    };
  }
  return { dir: fresh, resumed: false };
}
