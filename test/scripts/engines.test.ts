/**
 * `npm install` on the oldest Node the project supports prints no engine warning: every package of the lockfile
 * accepts the lowest version of the project's own `engines` range. Nor npm 11's install-script policy's: every
 * locked package with an install script is approved or denied in package.json's `allowScripts`.
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

  it("every locked package with an install script is in package.json's allowScripts (npm 11 warns of any other)", () => {
    const allow = (read('package.json').allowScripts ?? {}) as Record<string, boolean>;
    const lock = read('package-lock.json') as {
      packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
    };
    // An entry names the package (any version) or one version of it: `esbuild`, `esbuild@0.28.2`.
    const uncovered = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.hasInstallScript)
      .map(([path, p]) => ({
        name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length),
        version: p.version,
      }))
      .filter(
        ({ name, version }) => typeof allow[name] !== 'boolean' && typeof allow[`${name}@${version}`] !== 'boolean',
      )
      .map(({ name, version }) => `${name}@${version}`);
    expect(uncovered).toEqual([]);
  });
});
