/** Which folder a full disk is reported for, wherever the write was (issue 24; src/app/execute-run.ts asDiskFull). */
import { describe, expect, it } from 'vitest';
import { asDiskFull } from '../../src/app/execute-run.js';
import { BreError, diskFullError } from '@bre-batch/core/errors';

const errno = (code: string, path?: string) =>
  Object.assign(new Error(`${code}: failed, write`), { code, syscall: 'write', ...(path ? { path } : {}) });

describe('asDiskFull', () => {
  it.each([
    ["a write with no path (a journal's fd)", errno('ENOSPC'), '/data/out', 'the output folder /data/out'],
    [
      'a file in the output folder',
      errno('ENOSPC', '/data/out/results.csv.tmp'),
      '/data/out',
      'the output folder /data/out',
    ],
    [
      'a file under .state',
      errno('EDQUOT', '/data/out/.state/spool-0.csv'),
      '/data/out',
      'the output folder /data/out',
    ],
    [
      'a file elsewhere (the metrics file)',
      errno('ENOSPC', '/var/lib/node_exporter/bre.prom.tmp.1'),
      '/data/out',
      'the folder /var/lib/node_exporter',
    ],
    [
      'before the output folder is known',
      errno('ENOSPC', '/var/lib/node_exporter/bre.prom.tmp.1'),
      undefined,
      'the folder /var/lib/node_exporter',
    ],
  ])('%s', (_name, err, out, named) => {
    const e = asDiskFull(err, out) as BreError;
    expect(e.code).toBe('DISK_FULL');
    expect(e.message).toContain(`cannot write to ${named} (`);
    expect(e.cause).toBe(err);
  });

  it('leaves everything else as it is', () => {
    const eio = errno('EIO');
    expect(asDiskFull(eio, '/data/out')).toBe(eio);
    const usage = new BreError('USAGE', 'x');
    expect(asDiskFull(usage, '/data/out')).toBe(usage);
    const already = diskFullError('/data/out', errno('ENOSPC'));
    expect(asDiskFull(already, '/elsewhere')).toBe(already);
  });
});
