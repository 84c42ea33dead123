/** Small helpers that write Markdown the way the guide's pages are written. */

/**
 * Text inside a table cell: a pipe would end the cell, a newline the row, and an angle bracket outside code
 * (`<dir>`) would be taken for an HTML tag (by a code host, and by the site's Vue templates).
 */
export function cell(text: string): string {
  const escaped = text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;')))
    .join('');
  return escaped.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

/** A code span holding `text`, whatever backticks it has. */
export function code(text: string): string {
  const ticks = '`'.repeat(Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length)) + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

/** A table: a header row, the separator, a row per entry. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}
