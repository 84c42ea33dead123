/**
 * samples/champion_challenger.csv is what scripts/champion-challenger-sample.mjs writes (the generator imports
 * the sandbox from dist/, so this needs the build, as `npm test` makes it): the sample cannot drift from the
 * sandbox logic its outcomes were drawn from.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const built = existsSync(join(ROOT, 'dist', 'sandbox', 'logic', 'bureau.js'));

describe('champion_challenger sample', () => {
  it.skipIf(!built)('is the generator\'s output: 1,500 rows over at least 12 months, outcomes partly unknown', async () => {
    const gen = (await import(pathToFileURL(join(ROOT, 'scripts', 'champion-challenger-sample.mjs')).href)) as { sampleCsv: () => string };
    const text = readFileSync(join(ROOT, 'samples', 'champion_challenger.csv'), 'utf8');
    expect(gen.sampleCsv()).toBe(text);
    const [header, ...rows] = text.trimEnd().split('\n').map((l) => l.split(','));
    const date = header.indexOf('application_date');
    const outcome = header.indexOf('defaulted');
    expect(rows).toHaveLength(1500);
    expect(new Set(rows.map((r) => r[date].slice(0, 7)).filter(Boolean)).size).toBeGreaterThanOrEqual(12);
    const values = new Set(rows.map((r) => r[outcome]));
    expect([...values].sort()).toEqual(['', '0', '1']);
  });
});
