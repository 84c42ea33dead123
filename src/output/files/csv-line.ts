/**
 * CSV records as csv-stringify writes them with its defaults (`,`, `"` doubled inside quotes, a field
 * quoted when it holds `,` `"` CR or LF, `\n` after every record), a few hundred times faster per field:
 * the spool formats every result of a run as it comes (src/output/spool/spool.ts). The output is checked
 * against csv-stringify itself on random fields (test/output/files/csv-line.test.ts).
 */
const NEEDS_QUOTES = /[",\r\n]/;
const QUOTE = /"/g;

export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replace(QUOTE, '""')}"` : value;
}

/** Records, each followed by `\n`. */
export function csvRecords(records: readonly (readonly string[])[]): string {
  let out = '';
  for (const r of records) {
    for (let i = 0; i < r.length; i += 1) out += i === 0 ? csvField(r[i]) : `,${csvField(r[i])}`;
    out += '\n';
  }
  return out;
}
