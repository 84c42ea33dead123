/** Small buffered synchronous writers: the compare is a batch job, blocking writes keep the code simple and fast. */
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

/** Appends text to a file in chunks of about `chunkBytes`. */
export class TextSink {
  private readonly fd: number;
  private parts: string[] = [];
  private size = 0;
  private closed = false;
  bytes = 0;

  constructor(
    readonly path: string,
    private readonly chunkBytes = 256 * 1024,
  ) {
    this.fd = openSync(path, 'w');
  }

  write(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= this.chunkBytes) this.flush();
  }

  flush(): void {
    if (this.parts.length === 0) return;
    const buf = Buffer.from(this.parts.join(''), 'utf8');
    writeSync(this.fd, buf);
    this.bytes += buf.length;
    this.parts = [];
    this.size = 0;
  }

  /** Idempotent: a failed join closes the file before the `finally` that always does. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.flush();
    closeSync(this.fd);
  }
}

/** Float64 values to a binary file (the amount changes, read back once for the histogram). */
export class NumberSink {
  private readonly fd: number;
  private readonly buf = new Float64Array(8192);
  private used = 0;
  count = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w');
  }

  push(x: number): void {
    this.buf[this.used] = x;
    this.used += 1;
    this.count += 1;
    if (this.used === this.buf.length) this.flush();
  }

  private flush(): void {
    if (this.used === 0) return;
    writeSync(this.fd, new Uint8Array(this.buf.buffer, 0, this.used * 8));
    this.used = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

/** Reads back a NumberSink file chunk by chunk. */
export function* readNumbers(path: string): Generator<number> {
  const fd = openSync(path, 'r');
  try {
    const buf = new Float64Array(8192);
    const bytes = new Uint8Array(buf.buffer);
    for (;;) {
      const got = readSync(fd, bytes, 0, bytes.length, null);
      if (got <= 0) break;
      const n = Math.floor(got / 8);
      for (let i = 0; i < n; i += 1) yield buf[i];
      if (got % 8 !== 0) break;
    }
  } finally {
    closeSync(fd);
  }
}
