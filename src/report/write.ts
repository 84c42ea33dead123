/** report.html of an output folder: gathered (./data.ts), rendered (./render.ts), replaced atomically. */
import { chmodSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { READABLE_FILE_MODE } from '../output/modes.js';
import { join } from 'node:path';
import { FILES } from '@bre-batch/formats';
import { loadRunReport, type ErrorCodeCount } from './data.js';
import { renderRunReport } from './render.js';

export async function writeRunReport(
  dir: string,
  opts: { errors?: ErrorCodeCount[]; now?: Date } = {},
): Promise<{ path: string; missing: readonly string[] }> {
  const data = await loadRunReport(dir, opts);
  const path = join(dir, FILES.report);
  try {
    writeFileSync(`${path}.tmp`, renderRunReport(data));
    // Counts, rates, codes and charts, no applicant's data: it may be shared beyond the folder's owner (the
    // folder's own mode, --output-mode, still decides who reaches it).
    chmodSync(`${path}.tmp`, READABLE_FILE_MODE);
    renameSync(`${path}.tmp`, path);
  } catch (err) {
    // A half-written page (a full disk) must not hold the room a re-run needs.
    rmSync(`${path}.tmp`, { force: true });
    throw err;
  }
  return { path, missing: data.missing };
}
