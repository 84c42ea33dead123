/**
 * A small disk for the full-disk tests (issue 24). As root (CI), a tmpfs of the given size mounted on a
 * temporary folder, remounted to grow it: the kernel's own ENOSPC, everywhere the CLI writes (its spool thread
 * too). Without the right to mount, the CLI is started with ./disk-budget.mjs preloaded: the same failure
 * injected into node:fs for the files under the folder, from a byte budget (BRE_TEST_SMALL_DISK=budget forces
 * it, to test the fallback itself).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from './temp.js';

export interface SmallDisk {
  readonly dir: string;
  readonly how: 'tmpfs' | 'budget';
  /** The CLI's environment on this disk (the budget hook when no tmpfs could be mounted). */
  env(): Record<string, string | undefined>;
  /**
   * About `bytes` of room for the next run: the tmpfs remounted at what it holds plus that (what is on it
   * stays); the budget of what the next CLI may write under `dir`.
   */
  leaveRoom(bytes: number): Promise<void>;
  /** What the files under `sub` take on this disk: tmpfs pages, or bytes for the budget. */
  taken(sub: string, names?: readonly string[]): number;
  /** Unmounts the tmpfs. */
  close(): void;
}

const PAGE = 4096;
const kb = (bytes: number) => `${Math.ceil(bytes / PAGE) * (PAGE / 1024)}k`;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

export function smallDisk(bytes: number): SmallDisk {
  const dir = tempDir('bre-disk-');
  let how: SmallDisk['how'] = 'budget';
  if (process.env.BRE_TEST_SMALL_DISK !== 'budget') {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kb(bytes)}`, 'tmpfs', dir], { stdio: 'pipe' });
      how = 'tmpfs';
    } catch {
      /* not root, or no mount in this container: the budget below */
    }
  }
  let budget = bytes;
  const hook = pathToFileURL(join(import.meta.dirname, 'disk-budget.mjs')).href;
  const size = (path: string) => (how === 'tmpfs' ? Math.ceil(statSync(path).size / PAGE) * PAGE : statSync(path).size);
  return {
    dir,
    how,
    env: () =>
      how === 'tmpfs'
        ? {}
        : { NODE_OPTIONS: `--import=${hook}`, BRE_TEST_DISK_DIR: dir, BRE_TEST_DISK_BYTES: String(budget) },
    async leaveRoom(n) {
      if (how === 'budget') {
        budget = n;
        return;
      }
      const s = await statfs(dir);
      execFileSync('mount', ['-o', `remount,size=${kb((s.blocks - s.bfree) * s.bsize + n)}`, dir], { stdio: 'pipe' });
    },
    taken: (sub, names) =>
      (names ? names.map((n) => join(dir, sub, n)) : filesUnder(join(dir, sub))).reduce((sum, p) => {
        try {
          return sum + size(p);
        } catch {
          return sum;
        }
      }, 0),
    close() {
      if (how === 'tmpfs') execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
    },
  };
}
