/**
 * Caller allow-list (decision spec section 5.3: requests must come from approved IP addresses; others get
 * 403). Entries are CIDR blocks or single addresses, IPv4 or IPv6; IPv4-mapped IPv6 callers
 * (::ffff:a.b.c.d) are matched as IPv4.
 */
export interface Cidr {
  readonly v6: boolean;
  /** 32 (IPv4) or 128 (IPv6) bits as a bigint. */
  readonly bits: bigint;
  readonly prefix: number;
  readonly text: string;
}

function parseV4(s: string): bigint | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  let v = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    v = (v << 8n) | BigInt(Number(p));
  }
  return v;
}

function parseV6(s: string): bigint | null {
  let text = s;
  let tail: bigint | null = null;
  let tailGroups = 0;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    tail = parseV4(text.slice(lastColon + 1));
    if (tail === null) return null;
    text = text.slice(0, lastColon + 1) + '0:0';
    tailGroups = 2;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] === '' ? [] : halves[0].split(':');
  const rest = halves.length === 2 ? (halves[1] === '' ? [] : halves[1].split(':')) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  let v = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    v = (v << 16n) | BigInt(parseInt(g, 16));
  }
  if (tail !== null) v = ((v >> BigInt(16 * tailGroups)) << 32n) | tail;
  return v;
}

const MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** Parses "a.b.c.d[/n]" or "v6[/n]"; null when malformed. */
export function parseCidr(text: string): Cidr | null {
  const [addr, pre, extra] = text.trim().split('/');
  if (extra !== undefined || !addr) return null;
  const mapped = MAPPED.exec(addr);
  const v4 = parseV4(mapped ? mapped[1] : addr);
  if (v4 !== null) {
    const prefix = pre === undefined ? 32 : /^\d{1,2}$/.test(pre) ? Number(pre) - (mapped ? 96 : 0) : NaN;
    if (!(prefix >= 0 && prefix <= 32)) return null;
    return { v6: false, bits: v4, prefix, text };
  }
  const v6 = parseV6(addr);
  if (v6 === null) return null;
  const prefix = pre === undefined ? 128 : /^\d{1,3}$/.test(pre) ? Number(pre) : NaN;
  if (!(prefix >= 0 && prefix <= 128)) return null;
  return { v6: true, bits: v6, prefix, text };
}

/** Address of a caller as a (v6, bits) pair; IPv4-mapped IPv6 becomes IPv4. */
function parseAddress(ip: string): { v6: boolean; bits: bigint } | null {
  const mapped = MAPPED.exec(ip);
  const v4 = parseV4(mapped ? mapped[1] : ip);
  if (v4 !== null) return { v6: false, bits: v4 };
  const v6 = parseV6(ip.replace(/%.*$/, ''));
  return v6 === null ? null : { v6: true, bits: v6 };
}

function matches(cidr: Cidr, addr: { v6: boolean; bits: bigint }): boolean {
  if (cidr.v6 !== addr.v6) return false;
  const width = cidr.v6 ? 128n : 32n;
  const shift = width - BigInt(cidr.prefix);
  return cidr.bits >> shift === addr.bits >> shift;
}

export const LOOPBACK_ALLOW: readonly string[] = ['127.0.0.0/8', '::1'];

/** A cached predicate over caller addresses. */
export function allowChecker(list: readonly Cidr[]): (ip: string | undefined) => boolean {
  const cache = new Map<string, boolean>();
  return (ip) => {
    if (!ip) return false;
    let ok = cache.get(ip);
    if (ok === undefined) {
      const addr = parseAddress(ip);
      ok = addr !== null && list.some((c) => matches(c, addr));
      if (cache.size > 10_000) cache.clear();
      cache.set(ip, ok);
    }
    return ok;
  };
}
