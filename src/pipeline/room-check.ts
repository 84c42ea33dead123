/**
 * The room check of a run: once this session has written its first ROOM_SAMPLE_ROWS rows, what it
 * wrote a row, times the rows it still has to do, plus the end files (../output/room.ts), against the free
 * room of the output folder's disk. One warning line when short; the run goes on (a full disk stops it with
 * DISK_FULL, resumable). The rows still to do come from the run's estimate of its input (a file's lines, a
 * database's count, a sample's size; none for stdin).
 */
import type { RunOutput } from '../output/run-output.js';
import { estimateRoom, freeBytes, roomWarning } from '../output/room.js';
import type { OutputSettings, RowSelection } from './settings.js';

export async function checkRoom(
  s: RowSelection & OutputSettings,
  output: RunOutput,
  bytesAtOpen: number,
  estimate: () => Promise<number> | undefined,
  warn: (line: string) => void,
): Promise<void> {
  const written = output.sessionRows;
  if (written === 0) return;
  const bytesPerRow = Math.max(0, output.journalBytes - bytesAtOpen) / written;
  let remaining: number;
  if (s.retryErrors) remaining = output.retry.size - written;
  else {
    const inputRows = estimate();
    if (inputRows === undefined) return;
    const rows = Math.min(s.limit ?? Infinity, await inputRows);
    remaining = Math.round(rows / (s.shard?.count ?? 1)) - output.succeededBefore - output.failedBefore - written;
  }
  const est = estimateRoom({
    rows: remaining,
    doneRows: output.succeededBefore + output.failedBefore + written,
    bytesPerRow,
    measured: true,
    formats: s.outputFormats,
  });
  const free = await freeBytes(s.outDir);
  const line = free === undefined ? undefined : roomWarning(est, free, s.outDir);
  if (line) warn(line);
}
