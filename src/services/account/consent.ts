/**
 * Consent handles for AA fetch_data (spec 2.1, 4.1): a UUID string; in a multi-consent flow the SDK returns
 * several and fetch_data is called once per handle. In one input cell several handles are separated by
 * `;`, `|` or `,` (CSV), or given as a JSON array (NDJSON, or a CSV cell holding `["…","…"]`).
 */

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

export type ParsedHandles =
  | { readonly ok: true; readonly handles: readonly string[] }
  | { readonly ok: false; readonly expected: string; readonly got: string };

export const HANDLES_EXPECTED = 'UUIDs separated by ";", "|" or ",", or a JSON array of UUID strings';

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (Array.isArray(value)) return 'an array with a non-string element';
  return value === null ? 'null' : `a ${typeof value}`;
}

/** Splits one cell into handles (empty cell: none). Does not check the UUID form (see `isUuid`). */
export function splitHandles(raw: unknown): ParsedHandles {
  if (raw === undefined || raw === null) return { ok: true, handles: [] };
  let items: unknown[];
  if (Array.isArray(raw)) {
    items = raw;
  } else if (typeof raw === 'string') {
    const text = raw.trim();
    if (text.startsWith('[')) {
      try {
        const parsed: unknown = JSON.parse(text);
        if (!Array.isArray(parsed)) return { ok: false, expected: HANDLES_EXPECTED, got: describe(raw) };
        items = parsed;
      } catch {
        return { ok: false, expected: HANDLES_EXPECTED, got: 'a cell starting with "[" that is not a JSON array' };
      }
    } else {
      items = text.split(/[;|,]/);
    }
  } else {
    return { ok: false, expected: HANDLES_EXPECTED, got: describe(raw) };
  }
  const handles: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') return { ok: false, expected: HANDLES_EXPECTED, got: describe(items) };
    const h = item.trim();
    if (h !== '') handles.push(h);
  }
  return { ok: true, handles };
}

/** Handles in first-seen order without repeats (the same consent fetched twice would only cost a call). */
export function uniqueHandles(handles: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const h of handles) {
    const k = h.toLowerCase();
    if (!seen.has(k)) {
      seen.add(k);
      out.push(h);
    }
  }
  return out;
}
