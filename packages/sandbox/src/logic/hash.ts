/**
 * Deterministic hashing and a seeded PRNG. The sandbox's decisions and generated data depend only on their
 * inputs (a hash of ids), so the same row always gets the same answer; only fault injection uses a seeded
 * stream whose draws depend on request order.
 */

/** cyrb53: a fast 53-bit string hash (good spread, not cryptographic). */
export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** A number in [0, 1) derived from the text (and a salt naming what it is used for). */
export function unit(text: string, salt: string): number {
  return hash53(`${salt}\u0000${text}`) / 9007199254740992;
}

/** An integer in [lo, hi] derived from the text and salt. */
export function intBetween(text: string, salt: string, lo: number, hi: number): number {
  return lo + Math.floor(unit(text, salt) * (hi - lo + 1));
}

/** Hex digest of `n` hex characters (for deterministic ids). */
export function hexId(text: string, n: number): string {
  let out = '';
  let i = 0;
  while (out.length < n) out += hash53(text, i++).toString(16).padStart(14, '0');
  return out.slice(0, n);
}

/** A deterministic UUID-shaped string (version nibble 4) for ids such as consent ids. */
export function uuidFrom(text: string): string {
  const h = hexId(text, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[parseInt(h[16], 16) & 3]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Decimal digits of length n. */
export function digitsFrom(text: string, n: number): string {
  let out = '';
  let i = 0;
  while (out.length < n) out += String(hash53(text, i++)).padStart(16, '0');
  return out.slice(-n);
}

export type Rng = () => number;

/** mulberry32: a tiny seeded PRNG returning [0, 1). */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A PRNG seeded from any number or string. */
export function rngFrom(seed: number | string): Rng {
  return mulberry32(typeof seed === 'number' && Number.isInteger(seed) ? seed : hash53(String(seed)) % 4294967296);
}
