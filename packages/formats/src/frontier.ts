/**
 * `.state/source-frontier.json`: where a resumed database input starts reading (src/pipeline/frontier-tracker.ts).
 * Every row numbered up to `row` is done (in results or errors, out of this shard, ...), and `row` was the
 * last row of its key `key` (null: of the rows whose key is NULL, read first), so reading again after `key`,
 * numbering from `row + 1`, skips nothing unsettled. Written after the journal lines it covers, whole (a
 * temporary file renamed); a missing or damaged file means reading from the start, where the done rows are
 * skipped as for a file.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { FILES } from './files.js';
import { readJsonFile, writeJsonFile } from './json-file.js';

const frontierSchema = z.object({
  version: z.literal(1),
  row: z.number().int().positive(),
  key: z.string().nullable(),
  written_at: z.string(),
});
export type Frontier = z.infer<typeof frontierSchema>;

/** The folder's frontier; undefined when it has none or it cannot be read (then `problem` says why). */
export function readFrontier(dir: string): { frontier?: Frontier; problem?: string } {
  const read = readJsonFile(join(dir, FILES.frontier), frontierSchema);
  if (read.state === 'ok') return { frontier: read.value };
  return read.state === 'invalid' ? { problem: read.problem } : {};
}

export function writeFrontier(dir: string, point: { readonly row: number; readonly key: string | null }): void {
  writeJsonFile(join(dir, FILES.frontier), {
    version: 1,
    row: point.row,
    key: point.key,
    written_at: new Date().toISOString(),
  } satisfies Frontier);
}
