/** The small JSON files of a folder (manifest.json, summary.json): read through a schema, written whole. */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { z } from 'zod';

export type JsonFileRead<T> =
  | { readonly state: 'absent' }
  | { readonly state: 'invalid'; readonly problem: string }
  | { readonly state: 'ok'; readonly value: T };

/** Reads `path` through `schema`; never throws: the caller decides what an absent or damaged file means. */
export function readJsonFile<T>(path: string, schema: z.ZodType<T>): JsonFileRead<T> {
  if (!existsSync(path)) return { state: 'absent' };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return { state: 'invalid', problem: 'not readable JSON' };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return { state: 'invalid', problem: `${first.path.join('.') || '(top)'}: ${first.message}` };
  }
  return { state: 'ok', value: parsed.data };
}

/** Written to a temporary name and renamed: a reader never sees half a file. */
export function writeJsonFile(path: string, value: unknown): void {
  try {
    writeFileSync(`${path}.tmp`, `${JSON.stringify(value, null, 2)}\n`);
    renameSync(`${path}.tmp`, path);
  } catch (err) {
    rmSync(`${path}.tmp`, { force: true });
    throw err;
  }
}
