/**
 * The bundle the bin runs (scripts/bundle.ts, built by vitest's global setup like any build): its layout is what
 * the code relies on, and it takes from node_modules only the packages it leaves out on purpose.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundle, ENTRIES, EXTERNAL, META } from '../../scripts/bundle.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const BUNDLE = join(ROOT, 'dist', 'bundle');
const files = readdirSync(BUNDLE);
const scripts = files.filter((f) => f.endsWith('.js'));

interface Meta {
  readonly outputs: Record<
    string,
    {
      readonly imports: readonly { path: string; kind?: string; external?: boolean }[];
      readonly inputs: Record<string, unknown>;
    }
  >;
}
const meta = JSON.parse(readFileSync(join(BUNDLE, META), 'utf8')) as Meta;

/**
 * The inputs of the bundle's files loaded with the one holding `input`, before its code runs: that file's static
 * imports, theirs, and so on (not their dynamic ones).
 */
function loadedWith(input: string): string[] {
  const outputs = meta.outputs;
  const start = Object.keys(outputs).filter((o) => input in outputs[o]!.inputs);
  expect(start).toHaveLength(1);
  const loaded = new Set<string>();
  const next = [...start];
  while (next.length > 0) {
    const o = next.pop()!;
    if (loaded.has(o)) continue;
    loaded.add(o);
    for (const i of outputs[o]!.imports) if (i.kind === 'import-statement' && i.path in outputs) next.push(i.path);
  }
  return [...loaded].flatMap((o) => Object.keys(outputs[o]!.inputs));
}

describe('the bundle', () => {
  it('has its entries and every chunk directly in dist/bundle/, two levels under the package as dist/<layer>/ is', () => {
    for (const name of Object.keys(ENTRIES)) expect(files).toContain(`${name}.js`);
    expect(files.filter((f) => statSync(join(BUNDLE, f)).isDirectory())).toEqual([]);
    expect(scripts.length).toBeGreaterThan(Object.keys(ENTRIES).length);
  });

  it('imports from node_modules only the packages it leaves out (the database drivers), besides Node built-ins', () => {
    const allowed = new Set([...EXTERNAL, ...builtinModules]);
    const imported = new Set(
      Object.values(meta.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path)),
    );
    // `node:` names every built-in, those of newer lines too (undici's cache asks for node:sqlite, Node 22.5+).
    const stray = [...imported].filter(
      (p) => !p.startsWith('node:') && !allowed.has(p) && !allowed.has(p.split('/')[0]),
    );
    expect(stray).toEqual([]);
    // The drivers are imported where a run first connects, so the check above has something to pass over.
    expect([...imported].filter((p) => EXTERNAL.includes(p.split('/')[0]))).not.toEqual([]);
  });

  it("maps back to the sources (a bug's stack with BRE_DEBUG): each file has its source map, naming src/", () => {
    const main = JSON.parse(readFileSync(join(BUNDLE, 'main.js.map'), 'utf8')) as { sources: string[] };
    expect(main.sources).toContain('../../src/cli/main.ts');
    for (const f of scripts) expect(files).toContain(`${f}.map`);
  });

  it("takes from undici the transport's dispatchers and their request methods, not its index (fetch, WebSocket, the mocks)", () => {
    const undici = new Set(
      Object.values(meta.outputs).flatMap((o) =>
        Object.keys(o.inputs)
          .map((i) => /node_modules\/undici\/(.+)$/.exec(i)?.[1])
          .filter((i) => i !== undefined),
      ),
    );
    for (const part of [
      'lib/dispatcher/pool.js',
      'lib/dispatcher/proxy-agent.js',
      'lib/core/errors.js',
      'lib/api/index.js',
    ])
      expect(undici).toContain(part);
    for (const whole of [
      'index.js',
      'lib/web/fetch/index.js',
      'lib/web/websocket/websocket.js',
      'lib/mock/mock-agent.js',
    ])
      expect(undici).not.toContain(whole);
  });

  it("takes zod's English messages alone, not its other locales (re-exported by both its classic and core indexes)", () => {
    const locales = new Set(
      Object.values(meta.outputs).flatMap((o) =>
        Object.keys(o.inputs)
          .map((i) => /node_modules\/zod\/v4\/locales\/(.+)$/.exec(i)?.[1])
          .filter((i) => i !== undefined),
      ),
    );
    expect([...locales]).toEqual(['en.js']);
  });

  it("run's options (parsed by every run, a usage error or `run --help` too) load neither zod nor the Parquet writer", () => {
    const inputs = loadedWith('dist/cli/run-options/index.js');
    expect(inputs).toContain('dist/cli/run-options/output.js');
    expect(inputs.filter((i) => /node_modules\/(zod|hyparquet|hyparquet-writer)\//.test(i))).toEqual([]);
  });

  it("the Parquet writer takes from hyparquet the two functions it uses, not its reader (the spool's thread loads it)", () => {
    const inputs = loadedWith('dist/output/spool/spool-worker.js');
    expect(inputs).toContain('node_modules/hyparquet-writer/src/index.js');
    expect(inputs).toContain('node_modules/hyparquet/src/metadata.js');
    for (const reader of ['node.js', 'index.js', 'read.js', 'column.js', 'datapage.js'])
      expect(inputs).not.toContain(`node_modules/hyparquet/src/${reader}`);
  });

  it('a build takes away what an earlier build wrote and this one did not (chunks are named by their hash)', async () => {
    const root = tempDir('bre-bundle-');
    cpSync(join(ROOT, 'dist'), join(root, 'dist'), { recursive: true, filter: (p) => !p.startsWith(BUNDLE) });
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
    mkdirSync(join(root, 'dist', 'bundle'));
    writeFileSync(join(root, 'dist', 'bundle', 'chunk-OLD.js'), 'export {};');
    const removed = await bundle(root);
    expect(removed).toEqual([join('dist', 'bundle', 'chunk-OLD.js')]);
    expect(existsSync(join(root, 'dist', 'bundle', 'main.js'))).toBe(true);
    // Names differ with where node_modules resolves to; the number of files does not.
    expect(readdirSync(join(root, 'dist', 'bundle'))).toHaveLength(files.length);
  });
});
