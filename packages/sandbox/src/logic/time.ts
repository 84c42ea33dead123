/**
 * Time helpers in India Standard Time (UTC+05:30, no daylight saving): the account service stamps
 * transactions with a +05:30 offset (account spec 2.2) and the workflows date repayments locally.
 */
export const IST_OFFSET_MS = 330 * 60_000;
export const DAY_MS = 86_400_000;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Calendar fields of an instant, in IST. */
function istParts(ms: number): { y: number; mo: number; d: number; h: number; mi: number; s: number } {
  const t = new Date(ms + IST_OFFSET_MS);
  return {
    y: t.getUTCFullYear(),
    mo: t.getUTCMonth(),
    d: t.getUTCDate(),
    h: t.getUTCHours(),
    mi: t.getUTCMinutes(),
    s: t.getUTCSeconds(),
  };
}

/** The instant of an IST wall-clock time (month 0-based). */
export function istInstant(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number {
  return Date.UTC(y, mo, d, h, mi, s) - IST_OFFSET_MS;
}

/** YYYY-MM-DD in IST. */
export function istDate(ms: number): string {
  const p = istParts(ms);
  return `${p.y}-${pad(p.mo + 1)}-${pad(p.d)}`;
}

/** YYYY-MM-DD HH:MM:SS in IST. */
export function istDateTime(ms: number): string {
  const p = istParts(ms);
  return `${p.y}-${pad(p.mo + 1)}-${pad(p.d)} ${pad(p.h)}:${pad(p.mi)}:${pad(p.s)}`;
}

/** ISO-8601 with the +05:30 offset, e.g. 2024-03-01T10:15:23+05:30. */
export function istIso(ms: number): string {
  const p = istParts(ms);
  return `${p.y}-${pad(p.mo + 1)}-${pad(p.d)}T${pad(p.h)}:${pad(p.mi)}:${pad(p.s)}+05:30`;
}

/** ISO-8601 local time without offset (account spec 2.6 uploaded_at). */
export function istIsoNoOffset(ms: number): string {
  return istIso(ms).slice(0, 19);
}

/** Month index y*12+mo of an instant, in IST. */
export function istMonthIndex(ms: number): number {
  const p = istParts(ms);
  return p.y * 12 + p.mo;
}

export function monthStart(monthIndex: number): number {
  return istInstant(Math.floor(monthIndex / 12), monthIndex % 12, 1);
}

export function daysInMonth(monthIndex: number): number {
  return new Date(Date.UTC(Math.floor(monthIndex / 12), (monthIndex % 12) + 1, 0)).getUTCDate();
}

const AA_RANGE = /^(\d{2})\/(\d{2})\/(\d{4}) (\d{2}):(\d{2}):(\d{2}) (AM|PM)$/;

/**
 * Parses the AA date-time format MM/DD/YYYY HH:MM:SS AM/PM (account spec 4.1), read as IST.
 * Returns null when the text does not have that shape or names an impossible date.
 */
export function parseAaDateTime(text: string): number | null {
  const m = AA_RANGE.exec(text);
  if (!m) return null;
  const [mo, d, y, h12, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
  if (mo < 1 || mo > 12 || d < 1 || h12 < 1 || h12 > 12 || mi > 59 || s > 59) return null;
  if (d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return null;
  const h = (h12 % 12) + (m[7] === 'PM' ? 12 : 0);
  return istInstant(y, mo - 1, d, h, mi, s);
}

/** Formats an instant as MM/DD/YYYY HH:MM:SS AM/PM in IST. */
export function formatAaDateTime(ms: number): string {
  const p = istParts(ms);
  const h12 = p.h % 12 === 0 ? 12 : p.h % 12;
  return `${pad(p.mo + 1)}/${pad(p.d)}/${p.y} ${pad(h12)}:${pad(p.mi)}:${pad(p.s)} ${p.h < 12 ? 'AM' : 'PM'}`;
}
