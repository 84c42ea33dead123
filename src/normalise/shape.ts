/** Shapes of unexpected answers, for BAD_RESPONSE messages: kinds and key names only, never values. */

export function describeShape(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length} items`;
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return 'an empty object';
    const shown = keys.slice(0, 8).map((k) => (k.length > 30 ? `${k.slice(0, 27)}...` : k));
    return `an object with keys [${shown.join(', ')}${keys.length > 8 ? `, ... ${keys.length - 8} more` : ''}]`;
  }
  return `a ${typeof value}`;
}
