/**
 * The layers of src/, lowest first, and the one rule: a module imports only from its own folder or from a
 * lower layer. Folders on one line are siblings: neither imports the other. ARCHITECTURE.md says why the
 * order is this one. `npm test` runs this check (test/architecture/layers.test.ts proves it catches an
 * upward import, a sibling import and a cycle).
 *
 * Type-only imports count: sources are parsed with swc (TypeScript 7's compiler has no JavaScript API for
 * dependency-cruiser to use), which keeps `import type` lines that the compiled JavaScript would drop.
 */
const LAYERS = [
  ['types.ts', 'errors.ts'],
  ['metrics', 'input'],
  ['limits', 'normalise', 'services'],
  ['http'],
  ['stages'],
  ['config'],
  ['output'],
  ['pipeline'],
  ['backtest', 'sandbox'],
  ['cli', 'bench'],
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The path pattern of a folder (`src/input/...`) or a root module (`src/types.ts`). */
const place = (name) => (name.endsWith('.ts') ? `^src/${escape(name)}$` : `^src/${escape(name)}/`);
const anyOf = (names) => names.map(place).join('|');

const layerRules = LAYERS.flatMap((layer, i) => {
  const higher = LAYERS.slice(i + 1).flat();
  const rules = [];
  if (higher.length > 0) {
    rules.push({
      name: `layer-${i}-imports-upward`,
      comment: `${layer.join(', ')} may import only from the layers below it (.dependency-cruiser.cjs, ARCHITECTURE.md)`,
      severity: 'error',
      from: { path: anyOf(layer) },
      to: { path: anyOf(higher) },
    });
  }
  for (const name of layer) {
    const siblings = layer.filter((other) => other !== name);
    if (siblings.length === 0) continue;
    rules.push({
      name: `sibling-${name.replace(/\.ts$/, '')}`,
      comment: `${name} and ${siblings.join(', ')} are one layer: neither imports the other`,
      severity: 'error',
      from: { path: place(name) },
      to: { path: anyOf(siblings) },
    });
  }
  return rules;
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'unplaced-module',
      comment: 'every module of src/ belongs to a layer: add a new folder to LAYERS',
      severity: 'error',
      from: { path: '^src/', pathNot: anyOf(LAYERS.flat()) },
      to: {},
    },
    {
      name: 'no-cycle',
      comment: 'no module reaches itself through its imports',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      comment: 'no folder reaches itself through its imports (e.g. services/bre -> services/bureau -> services/bre)',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'src-not-from-test',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
  },
};
