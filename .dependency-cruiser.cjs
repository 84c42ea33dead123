/**
 * The layers, lowest first, and the one rule: a module imports only from its own folder or from a lower layer.
 * Folders on one line are siblings: neither imports the other. Two levels of it:
 *
 * - the workspace's packages (packages/*, PACKAGES): a package's sources import only packages below it, by
 *   their names (`@bre-batch/core/errors`), never by a path into their folders; so no two packages reach each
 *   other (no package cycle), and none reaches the runner;
 * - the runner's folders (src/, LAYERS), above every package: any of them may import any package.
 *
 * ARCHITECTURE.md says why the order is this one. `npm test` runs this check (test/architecture/layers.process.test.ts
 * proves it catches an upward import, a sibling import, a module, folder and package cycle). bench/, scripts/ and
 * the tests stand outside the layers, above them all: they may import any module, which never imports them.
 *
 * Type-only imports count: sources are parsed with swc (TypeScript 7's compiler has no JavaScript API for
 * dependency-cruiser to use), which keeps `import type` lines that the compiled JavaScript would drop. A package's
 * name resolves to its sources through tsconfig.json's `paths`.
 */
const PACKAGES = [['core'], ['formats'], ['backtest', 'sandbox']];

const LAYERS = [
  ['retry'],
  ['db'],
  ['metrics', 'input', 'log'],
  ['limits', 'normalise', 'services', 'sample', 'job'],
  ['http'],
  ['stages'],
  ['config'],
  ['output'],
  ['pipeline'],
  ['report'],
  ['app'],
  ['cli'],
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The path pattern of a folder (`src/input/...`) or a root module (`src/main.ts`). */
const place = (name) => (name.endsWith('.ts') ? `^src/${escape(name)}$` : `^src/${escape(name)}/`);
const anyOf = (names) => names.map(place).join('|');
/** A package's sources: what ships. Its tests and scripts are tooling, like the root's. */
const sources = (name) => `^packages/${escape(name)}/src/`;
const anyPackage = (names) => names.map(sources).join('|');
/** The tooling: the tests, the benchmark and the scripts, the root's and the packages'. */
const TOOLING = '^(test|bench|scripts)/|^packages/[^/]+/(test|scripts)/';

/** Every rule fails the check. */
const forbid = (name, comment, from, to, extra = {}) => ({ name, comment, severity: 'error', from, to, ...extra });

const packageRules = PACKAGES.flatMap((layer, i) => {
  const higher = PACKAGES.slice(i + 1).flat();
  return layer.flatMap((name) => {
    const siblings = layer.filter((other) => other !== name);
    const rules = [
      forbid(`package-${name}-imports-upward`,
        `@bre-batch/${name} may import only the packages below it (${PACKAGES.slice(0, i).flat().join(', ') || 'none'}), never the runner (src/): no package cycle (ARCHITECTURE.md)`,
        { path: sources(name) }, { path: ['^src/', ...higher.map(sources)].join('|') }),
    ];
    if (siblings.length > 0)
      rules.push(forbid(`package-sibling-${name}`, `@bre-batch/${name} and ${siblings.join(', ')} are one layer: neither imports the other`,
        { path: sources(name) }, { path: anyPackage(siblings) }));
    return rules;
  });
});

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
    ...packageRules,
    ...layerRules,
    forbid('unplaced-package', 'every package belongs to a layer: add a new package to PACKAGES',
      { path: '^packages/[^/]+/src/', pathNot: anyPackage(PACKAGES.flat()) }, {}),
    forbid('unplaced-module', 'every module of src/ belongs to a layer: add a new folder to LAYERS',
      { path: '^src/', pathNot: anyOf(LAYERS.flat()) }, {}),
    // A package is imported by its name (@bre-batch/...), never by a path into its folder: Node resolves the name
    // to what the package builds (its dist/), and the package's own rules see the import.
    forbid('package-by-name', 'another package is imported by its name (@bre-batch/...), never by a path into its folder',
      { path: '^packages/([^/]+)/' }, { path: '^packages/', pathNot: '^packages/$1/', dependencyTypes: ['local'], dependencyTypesNot: ['aliased'] }),
    forbid('runner-imports-package-by-name', 'the runner imports a package by its name (@bre-batch/...), never by a path into its folder',
      { path: '^(src|bench|scripts|test)/' }, { path: '^packages/', dependencyTypes: ['local'], dependencyTypesNot: ['aliased'] }),
    forbid('no-cycle', 'no module reaches itself through its imports', { path: '^(src|packages)/' }, { circular: true }),
    forbid('no-folder-cycle', 'no folder reaches itself through its imports (e.g. services/bre -> services/bureau -> services/bre)',
      { path: '^(src|packages)/' }, { circular: true }, { scope: 'folder' }),
    forbid('src-not-from-tooling', 'the program and its packages never import their tests, the benchmark or the scripts (none of them ships)',
      { path: '^src/|^packages/[^/]+/src/' }, { path: TOOLING }),
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    // What the builds write (dist/, a package's dist/ and the sandbox's declarations in build/) is not source.
    exclude: { path: 'node_modules|(^|/)(dist|build)/' },
  },
};
