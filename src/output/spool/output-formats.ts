/**
 * The formats of the rebuilt files (`--output-formats`), apart from the rebuild itself: `run`'s options parse them
 * at every start, usage errors included, and the rebuild's module brings the Parquet writer and reader with it.
 */
import { BreError } from '@bre-batch/core/errors';

export type OutputFormat = 'csv' | 'parquet';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['csv', 'parquet'];

/** `--output-formats csv,parquet`: the formats of the rebuilt files. */
export function parseOutputFormats(text: string | readonly string[] | undefined): Set<OutputFormat> {
  if (text === undefined) return new Set(OUTPUT_FORMATS);
  const parts = (Array.isArray(text) ? text : [text])
    .flatMap((t: string) => t.split(','))
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  const out = new Set<OutputFormat>();
  for (const p of parts) {
    if (!(OUTPUT_FORMATS as readonly string[]).includes(p))
      throw new BreError(
        'USAGE',
        `Expected --output-formats to list ${OUTPUT_FORMATS.join(' and/or ')} (comma-separated), got '${p}'`,
      );
    out.add(p as OutputFormat);
  }
  if (out.size === 0)
    throw new BreError(
      'USAGE',
      `Expected --output-formats to list at least one of ${OUTPUT_FORMATS.join(', ')}, got nothing`,
    );
  return out;
}
