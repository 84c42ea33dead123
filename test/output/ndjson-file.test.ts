/**
 * The journal's files on a disk that fills up (issue 24): a write that fails part-way is cut back to the last
 * whole line, the failure is kept (every later append throws it) and told at once, and close still closes.
 * The disk is a byte budget on node:fs's writeSync: the kernel's own short write, then ENOSPC, as a full disk
 * answers (the e2e test does the same on a real tmpfs, test/e2e/disk-full.test.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../helpers/temp.js';

const disk = vi.hoisted(() => ({ left: Infinity }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const writeSync = (fd: number, data: string | Uint8Array, offset?: number): number => {
    const buf = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data).subarray(offset ?? 0);
    if (disk.left <= 0)
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
        errno: -28,
        syscall: 'write',
      });
    const n = fs.writeSync(fd, buf, 0, Math.min(buf.length, disk.left));
    disk.left -= n;
    return n;
  };
  return { ...fs, default: { ...fs, writeSync }, writeSync };
});

const { AppendFile } = await import('@bre-batch/formats/ndjson-file');

const line = (i: number) => JSON.stringify({ row: i, text: 'x'.repeat(40) });
const bytesOf = (...rows: number[]) => rows.reduce((n, i) => n + Buffer.byteLength(line(i)) + 1, 0);

afterEach(() => {
  disk.left = Infinity;
});

describe('AppendFile on a full disk', () => {
  it('a write that fails part-way is cut back to the last whole line; the lines that did not make it are not counted', () => {
    const path = join(tempDir(), 'results.ndjson');
    const f = new AppendFile(path);
    const failures: Error[] = [];
    f.onFailure = (err) => failures.push(err);
    for (const i of [1, 2, 3]) f.append(line(i));
    f.flush();
    // room for line 4 and half of line 5
    disk.left = bytesOf(4) + 20;
    for (const i of [4, 5, 6]) f.append(line(i));
    expect(() => f.flush()).toThrow(/ENOSPC/);
    const text = readFileSync(path, 'utf8');
    expect(text).toBe([1, 2, 3, 4].map((i) => `${line(i)}\n`).join(''));
    expect(f.lines).toBe(4);
    expect(f.bytes).toBe(Buffer.byteLength(text));
    expect(failures.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['ENOSPC']);
    // The failure is kept, room or not: the run stops with whole lines only.
    disk.left = Infinity;
    expect(() => f.append(line(7))).toThrow(/ENOSPC/);
    expect(() => f.close()).toThrow(/ENOSPC/);
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it('a failure in the flush at the end of an event-loop turn is told at once, and thrown by close after the file is closed', async () => {
    const path = join(tempDir(), 'errors.ndjson');
    const f = new AppendFile(path);
    const failures: Error[] = [];
    f.onFailure = (err) => failures.push(err);
    disk.left = 10;
    f.append(line(1));
    await new Promise((r) => setImmediate(r));
    expect(failures).toHaveLength(1);
    expect(readFileSync(path, 'utf8')).toBe('');
    expect(f.lines).toBe(0);
    expect(() => f.close()).toThrow(/ENOSPC/);
    // closed: a file opened again on it finds nothing torn to cut
    disk.left = Infinity;
    const again = new AppendFile(path);
    again.append(line(2));
    again.close();
    expect(readFileSync(path, 'utf8')).toBe(`${line(2)}\n`);
  });

  it("when a file that must be written first fails (a row's transactions), the lines after it are not written", () => {
    const dir = tempDir();
    const tx = new AppendFile(join(dir, 'transactions.ndjson'));
    const results = new AppendFile(join(dir, 'results.ndjson'));
    results.before.push(tx);
    tx.append(line(1));
    results.append(line(1));
    results.flush();
    disk.left = 0;
    tx.append(line(2));
    results.append(line(2));
    expect(() => results.flush()).toThrow(/ENOSPC/);
    disk.left = Infinity;
    expect(readFileSync(join(dir, 'results.ndjson'), 'utf8')).toBe(`${line(1)}\n`);
    expect(() => tx.close()).toThrow(/ENOSPC/);
    expect(() => results.close()).toThrow(/ENOSPC/);
  });

  it('a torn last line (a crash inside a write) is cut when the file is opened again', () => {
    const path = join(tempDir(), 'results.ndjson');
    writeFileSync(path, `${line(1)}\n${line(2)}\n${line(3).slice(0, 17)}`);
    const f = new AppendFile(path);
    expect(f.bytes).toBe(bytesOf(1, 2));
    f.append(line(3));
    f.close();
    expect(readFileSync(path, 'utf8')).toBe([1, 2, 3].map((i) => `${line(i)}\n`).join(''));
  });
});
