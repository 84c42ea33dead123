/**
 * A full disk for a test that cannot mount a small one (not root): loaded into the CLI with
 * NODE_OPTIONS=--import=<this file> (test/helpers/small-disk.ts), it gives the files under BRE_TEST_DISK_DIR a
 * budget of BRE_TEST_DISK_BYTES bytes written by the process; past it a write is cut short, and the next one
 * fails with ENOSPC, as the kernel does on a full disk. The product reads nothing of it: node:fs is wrapped
 * before the product is loaded, and the named exports of the built-in module are synced to the wrappers.
 * What it covers: writeSync, write, writev, writeFileSync and appendFileSync on files opened by path under
 * the folder (what the output folder's writers use). Room freed by deleting files is not given back.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = process.env.BRE_TEST_DISK_DIR;
const budget = Number(process.env.BRE_TEST_DISK_BYTES);

if (dir && Number.isFinite(budget)) {
  let left = budget;
  const root = resolve(dir) + sep;
  const inside = (p) => {
    const path = p instanceof URL ? fileURLToPath(p) : typeof p === 'string' ? p : undefined;
    return path !== undefined && resolve(path).startsWith(root);
  };
  const enospc = (syscall) => Object.assign(new Error(`ENOSPC: no space left on device, ${syscall}`), { code: 'ENOSPC', errno: -28, syscall });
  /** Bytes of `n` the disk still has room for (0: full). */
  const room = (n) => Math.min(n, Math.max(0, left));
  const bytes = (data, encoding) => (typeof data === 'string' ? Buffer.from(data, encoding ?? 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  const fds = new Set();
  const real = { ...fs };

  fs.openSync = (path, ...rest) => {
    const fd = real.openSync(path, ...rest);
    if (inside(path)) fds.add(fd);
    return fd;
  };
  fs.open = (path, ...rest) => {
    const cb = rest.pop();
    return real.open(path, ...rest, (err, fd) => {
      if (!err && inside(path)) fds.add(fd);
      cb(err, fd);
    });
  };
  fs.closeSync = (fd) => {
    fds.delete(fd);
    return real.closeSync(fd);
  };
  fs.close = (fd, ...rest) => {
    fds.delete(fd);
    return real.close(fd, ...rest);
  };
  fs.writeSync = (fd, data, ...rest) => {
    if (!fds.has(fd)) return real.writeSync(fd, data, ...rest);
    let buf;
    let position;
    if (typeof data === 'string') {
      buf = bytes(data, typeof rest[1] === 'string' ? rest[1] : undefined);
      position = typeof rest[0] === 'number' ? rest[0] : null;
    } else {
      const offset = rest[0] ?? 0;
      buf = bytes(data).subarray(offset, offset + (rest[1] ?? data.byteLength - offset));
      position = rest[2] ?? null;
    }
    if (buf.length > 0 && room(buf.length) === 0) throw enospc('write');
    const n = real.writeSync(fd, buf, 0, room(buf.length), position);
    left -= n;
    return n;
  };
  fs.write = (fd, data, ...rest) => {
    const cb = rest.pop();
    if (!fds.has(fd)) return real.write(fd, data, ...rest, cb);
    const offset = typeof data === 'string' ? 0 : (rest[0] ?? 0);
    const buf = typeof data === 'string' ? bytes(data, rest[1]) : bytes(data).subarray(offset, offset + (rest[1] ?? data.byteLength - offset));
    const position = typeof data === 'string' ? (rest[0] ?? null) : (rest[2] ?? null);
    if (buf.length > 0 && room(buf.length) === 0) return process.nextTick(cb, enospc('write'));
    const n = room(buf.length);
    left -= n;
    return real.write(fd, buf, 0, n, position, (err, written) => cb(err, written, data));
  };
  fs.writev = (fd, buffers, ...rest) => {
    const cb = rest.pop();
    if (!fds.has(fd)) return real.writev(fd, buffers, ...rest, cb);
    const buf = Buffer.concat(buffers.map((b) => bytes(b)));
    if (buf.length > 0 && room(buf.length) === 0) return process.nextTick(cb, enospc('write'));
    const n = room(buf.length);
    left -= n;
    return real.write(fd, buf, 0, n, rest[0] ?? null, (err, written) => cb(err, written, buffers));
  };
  const wholeFile = (name) => (path, data, options) => {
    if (!inside(path)) return real[name](path, data, options);
    const buf = bytes(data, typeof options === 'string' ? options : options?.encoding);
    const n = room(buf.length);
    left -= n;
    real[name](path, buf.subarray(0, n), options);
    if (n < buf.length) throw Object.assign(enospc('write'), { path });
  };
  fs.writeFileSync = wholeFile('writeFileSync');
  fs.appendFileSync = wholeFile('appendFileSync');
  syncBuiltinESMExports();
}
