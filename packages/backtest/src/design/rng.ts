/**
 * A seeded pseudo-random generator for the bootstrap: xoshiro128** (Blackman & Vigna), its 128-bit state taken
 * from SHA-256 of a text seed, so the same seed gives the same replicates on every machine and Node version
 * (Math.random cannot be seeded). Plenty for resampling: period 2^128 − 1, passes BigCrush bar the lowest bits.
 */
import { createHash } from 'node:crypto';

export class Random {
  private readonly s: Uint32Array;

  constructor(seed: string) {
    const d = createHash('sha256').update(seed, 'utf8').digest();
    this.s = new Uint32Array([d.readUInt32LE(0), d.readUInt32LE(4), d.readUInt32LE(8), d.readUInt32LE(12)]);
    // An all-zero state would stay zero: SHA-256 will not give one, but guard anyway.
    if (this.s.every((x) => x === 0)) this.s[0] = 1;
  }

  /** The next 32 random bits as an unsigned integer. */
  next(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** A whole number in [0, n): floor(u·n) of a 53-bit uniform u (two draws); its bias, below n·2^-53, is nothing a stratum can show. */
  below(n: number): number {
    const u = (this.next() * 2 ** 21 + (this.next() >>> 11)) / 2 ** 53;
    return Math.floor(u * n);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
