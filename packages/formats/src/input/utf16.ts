/**
 * UTF-16 (LE or BE) bytes -> UTF-8 bytes, chunk by chunk, so that the UTF-8 line splitter reads them (a
 * UTF-16 newline is two bytes, one of them 0x00). Decoding is Node's own (`Buffer#toString('utf16le')`).
 * What cannot be UTF-16 — an unpaired surrogate, a dangling odd byte at the end — becomes the byte 0xFF,
 * which is never valid UTF-8: the line that holds it is then flagged undecodable, like bad bytes in any
 * other encoding, instead of silently turning into U+FFFD.
 */

const INVALID = Buffer.from([0xff]);
const SURROGATE = /[\uD800-\uDFFF]/;

export class Utf16ToUtf8 {
  #carry: Buffer = Buffer.alloc(0);

  constructor(private readonly bigEndian: boolean) {}

  /** The UTF-8 of every whole character so far; an odd byte or a leading surrogate waits for the next chunk. */
  push(chunk: Buffer): Buffer {
    const buf = this.#carry.length === 0 ? chunk : Buffer.concat([this.#carry, chunk]);
    let usable = buf.length - (buf.length % 2);
    if (usable >= 2) {
      const last = this.bigEndian ? buf.readUInt16BE(usable - 2) : buf.readUInt16LE(usable - 2);
      if (last >= 0xd800 && last <= 0xdbff) usable -= 2;
    }
    this.#carry = Buffer.from(buf.subarray(usable));
    return this.#convert(buf.subarray(0, usable));
  }

  /** What is left at the end of the input (a leading surrogate or an odd byte: invalid). */
  end(): Buffer {
    const rest = this.#carry;
    this.#carry = Buffer.alloc(0);
    const even = rest.length - (rest.length % 2);
    const text = this.#convert(rest.subarray(0, even));
    return even === rest.length ? text : Buffer.concat([text, INVALID]);
  }

  #convert(bytes: Buffer): Buffer {
    let units = bytes;
    if (this.bigEndian) {
      units = Buffer.from(bytes);
      units.swap16();
    }
    const s = units.toString('utf16le');
    if (!SURROGATE.test(s)) return Buffer.from(s, 'utf8');
    const parts: Buffer[] = [];
    let from = 0;
    for (let i = 0; i < s.length; i += 1) {
      const c = s.charCodeAt(i);
      if (c < 0xd800 || c > 0xdfff) continue;
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i += 1;
        continue;
      }
      parts.push(Buffer.from(s.slice(from, i), 'utf8'), INVALID);
      from = i + 1;
    }
    parts.push(Buffer.from(s.slice(from), 'utf8'));
    return Buffer.concat(parts);
  }
}
