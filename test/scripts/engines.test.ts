/**
 * `npm install` on the oldest Node the project supports prints no engine warning: every package of the lockfile
 * accepts the lowest version of the project's own `engines` range.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const read = (name: string) => JSON.parse(readFileSync(join(ROOT, name), 'utf8'));

describe("the dependencies' engines", () => {
  it('every locked package accepts the oldest Node of package.json engines', () => {
    const range: string = read('package.json').engines.node;
    const oldest = semver.minVersion(range)?.version;
    expect(oldest).toBe('20.19.0');
    const lock = read('package-lock.json') as { packages: Record<string, { engines?: { node?: string } }> };
    const refusing = Object.entries(lock.packages)
      .filter(([, p]) => typeof p.engines?.node === 'string' && !semver.satisfies(oldest ?? '', p.engines.node))
      .map(([name, p]) => `${name} wants node ${p.engines?.node}`);
    expect(refusing).toEqual([]);
  });
});
