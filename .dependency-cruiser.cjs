/**
 * The layers of src/, lowest first, and the one rule: a module imports only from its own folder or from a
 * lower layer. Folders on one line are siblings: neither imports the other. ARCHITECTURE.md says why the
 * order is this one. `npm test` runs this check (test/architecture/layers.test.ts proves it catches an
 * upward import, a sibling import and a cycle). bench/ and scripts/ stand outside the layers, above them all:
 * they may import any module of src/, which never imports them (nor test/).
 *
 * Type-only imports count: sources are parsed with swc (TypeScript 7's compiler has no JavaScript API for
 * dependency-cruiser to use), which keeps `import type` lines that the compiled JavaScript would drop.
 */
const LAYERS = [
  ['types.ts', 'errors.ts', 'retry'],
  ['db'],
  ['metrics', 'input', 'log', 'page'],
  ['limits', 'normalise', 'services', 'sample', 'job'],
  ['http'],
  ['stages'],
  ['config'],
  ['output'],
  ['pipeline'],
  ['backtest', 'sandbox'],
  ['report'],
  ['app'],
  ['cli'],
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The path pattern of a folder (`src/input/...`) or a root module (`src/types.ts`). */
const place = (name) => (name.endsWith('.ts') ? `^src/${escape(name)}$` : `^src/${escape(name)}/`);
const anyOf = (names) => names.map(place).join('|');

/** Every rule fails the check. */
const forbid = (name, comment, from, to, extra = {}) => ({ name, comment, severity: 'error', from, to, ...extra });

const layerRules = LAYERS.flatMap((layer, i) => {
  const higher = LAYERS.slice(i + 1).flat();
  const rules = [];
  if (higher.length > 0) {
    rules.push(forbid(`layer-${i}-imports-upward`, `${layer.join(', ')} may import only from the layers below it (ARCHITECTURE.md)`,
      { path: anyOf(layer) }, { path: anyOf(higher) }));
  }
  for (const name of layer) {
    const siblings = layer.filter((other) => other !== name);
    if (siblings.length === 0) continue;
    rules.push(forbid(`sibling-${name.replace(/\.ts$/, '')}`, `${name} and ${siblings.join(', ')} are one layer: neither imports the other`,
      { path: place(name) }, { path: anyOf(siblings) }));
  }
  return rules;
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    forbid('unplaced-module', 'every module of src/ belongs to a layer: add a new folder to LAYERS',
      { path: '^src/', pathNot: anyOf(LAYERS.flat()) }, {}),
    forbid('no-cycle', 'no module reaches itself through its imports', { path: '^src/' }, { circular: true }),
    forbid('no-folder-cycle', 'no folder reaches itself through its imports (e.g. services/bre -> services/bureau -> services/bre)',
      { path: '^src/' }, { circular: true }, { scope: 'folder' }),
    forbid('src-not-from-tooling', 'the program never imports its tests, its benchmark or its scripts (none of them ships)',
      { path: '^src/' }, { path: '^(test|bench|scripts)/' }),
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
  },
};
