/**
 * The layer rule of .dependency-cruiser.cjs, run through dependency-cruiser's API: the tree as it is passes,
 * and a copy of it with the imports the architecture issue found (each planted back), and imports that would
 * tangle the workspace's packages (a package cycle among them), fails on every one.
 */
import { appendFileSync, cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** What `npm run layers` checks: the runner, its packages and the tooling beside them (bench/, scripts/). */
const CHECKED = ['src', 'packages', 'bench', 'scripts'];

async function violationsIn(baseDir: string): Promise<IViolation[]> {
  const options = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.cjs'));
  const previous = process.cwd();
  // The rules' paths are relative to the folder cruised from, and so is the tsconfig it names.
  process.chdir(baseDir);
  try {
    const result = await cruise(
      CHECKED.filter((d) => existsSync(join(baseDir, d))),
      { ...options, validate: true, baseDir },
    );
    return (result.output as ICruiseResult).summary.violations;
  } finally {
    process.chdir(previous);
  }
}

describe('the layer rule', () => {
  it('holds for the tree as it is', async () => {
    const found = await violationsIn(ROOT);
    expect(found.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
  });

  describe('on a copy with upward imports, a sibling import and cycles planted', () => {
    let tree: string;
    let found: IViolation[];
    const plant = (file: string, line: string) => appendFileSync(join(tree, 'src', file), `\n${line}\n`);
    const plantIn = (pkg: string, file: string, line: string) =>
      appendFileSync(join(tree, 'packages', pkg, 'src', file), `\n${line}\n`);

    beforeAll(async () => {
      tree = tempDir('bre-layers-');
      cpSync(join(ROOT, 'src'), join(tree, 'src'), { recursive: true });
      cpSync(join(ROOT, 'bench'), join(tree, 'bench'), { recursive: true });
      // The packages' sources and tests, not what their builds wrote.
      cpSync(join(ROOT, 'packages'), join(tree, 'packages'), {
        recursive: true,
        filter: (p) => !/[\\/](dist|build|node_modules)$/.test(p),
      });
      cpSync(join(ROOT, 'tsconfig.json'), join(tree, 'tsconfig.json'));
      // The imports the architecture issue listed, type-only ones included (they vanish from compiled JS).
      plant('services/workflow/request.ts', "import type { StageKind as Planted1 } from '../../stages/types.js';");
      plant('input/coerce.ts', "import type { StageConfig as Planted2 } from '../stages/types.js';");
      plant('http/chain.ts', "import type { StageContext as Planted3 } from '../stages/types.js';");
      plant('output/summary-text.ts', "import type { RunSettings as Planted4 } from '../pipeline/settings.js';");
      plant('output/merge.ts', "import { createLimiters as planted5 } from '../pipeline/limiters.js';");
      plant('limits/redis.ts', "import { getStageKind as planted6 } from '../stages/index.js';");
      plantIn('backtest', 'report.ts', "import type { CompareResult as Planted7 } from './compare.js';");
      // A folder-level cycle inside a layer (services/workflow already imports services/bureau).
      plant('services/bureau/request.ts', "import { NAMED_ENDPOINTS as planted8 } from '../workflow/endpoints.js';");
      // Siblings of one layer.
      plant('normalise/workflow.ts', "import { TOP_FIELDS as planted9 } from '../services/field-table.js';");
      // The program reaching into the tooling beside it.
      plant('cli/main.ts', "import { ratio as planted10 } from '../../bench/harness.js';");
      // A package cycle: core, below every package, importing the sandbox, which imports core.
      plantIn('core', 'errors.ts', "import type { Sandbox as Planted11 } from '@bre-batch/sandbox';");
      // A package reaching up into the runner, a package importing its sibling, and a package's sources their tests.
      plantIn(
        'formats',
        'input/read.ts',
        "import type { RunSettings as Planted12 } from '../../../../src/pipeline/settings.js';",
      );
      plantIn('backtest', 'side.ts', "import { startSandbox as planted13 } from '@bre-batch/sandbox';");
      plantIn('sandbox', 'server.ts', "import { withSandbox as planted14 } from '../test/helpers.js';");
      // Packages reached by a path into their folders instead of by their names.
      plantIn('backtest', 'join.ts', "import { PERIOD_UNITS as planted15 } from '../../formats/src/input/period.js';");
      plant('cli/compare.ts', "import { runCompare as planted16 } from '../../packages/backtest/src/compare.js';");
      found = await violationsIn(tree);
    }, 60_000);

    const has = (rule: string | RegExp, from: string, to: string) =>
      found.some(
        (v) =>
          (typeof rule === 'string' ? v.rule.name === rule : rule.test(v.rule.name)) && v.from === from && v.to === to,
      );

    it.each([
      ['services -> stages', 'src/services/workflow/request.ts', 'src/stages/types.ts'],
      ['input -> stages', 'src/input/coerce.ts', 'src/stages/types.ts'],
      ['http -> stages', 'src/http/chain.ts', 'src/stages/types.ts'],
      ['output -> pipeline (summary)', 'src/output/summary-text.ts', 'src/pipeline/settings.ts'],
      ['output -> pipeline (merge)', 'src/output/merge.ts', 'src/pipeline/limiters.ts'],
      ['limits -> stages', 'src/limits/redis.ts', 'src/stages/index.ts'],
    ])('an upward import fails: %s', (_what, from, to) => {
      expect(has(/^layer-\d+-imports-upward$/, from, to)).toBe(true);
    });

    it('a package cycle fails: @bre-batch/core -> @bre-batch/sandbox -> @bre-batch/core', () => {
      // The package order refuses the edge that closes it, naming it...
      expect(has('package-core-imports-upward', 'packages/core/src/errors.ts', 'packages/sandbox/src/index.ts')).toBe(
        true,
      );
      // ...and the cycle itself is seen, through both packages.
      const cycles = found
        .filter((v) => v.rule.name === 'no-cycle' && v.from === 'packages/core/src/errors.ts')
        .map((v) => (v.cycle ?? []).map((c) => c.name));
      expect(cycles.some((c) => c.some((m) => m.startsWith('packages/sandbox/src/')))).toBe(true);
    });

    it('a package importing the runner fails: formats -> src/pipeline', () => {
      expect(
        has('package-formats-imports-upward', 'packages/formats/src/input/read.ts', 'src/pipeline/settings.ts'),
      ).toBe(true);
    });

    it('an import between sibling packages fails: backtest -> sandbox', () => {
      expect(has('package-sibling-backtest', 'packages/backtest/src/side.ts', 'packages/sandbox/src/index.ts')).toBe(
        true,
      );
    });

    it("a package's sources importing its tests fail: sandbox -> its test helpers", () => {
      expect(has('src-not-from-tooling', 'packages/sandbox/src/server.ts', 'packages/sandbox/test/helpers.ts')).toBe(
        true,
      );
    });

    it('a package reached by a path into its folder fails, from a package and from the runner', () => {
      expect(has('package-by-name', 'packages/backtest/src/join.ts', 'packages/formats/src/input/period.ts')).toBe(
        true,
      );
      expect(has('runner-imports-package-by-name', 'src/cli/compare.ts', 'packages/backtest/src/compare.ts')).toBe(
        true,
      );
    });

    it('a module cycle fails: backtest/compare.ts <-> report.ts', () => {
      const pair = ['packages/backtest/src/compare.ts', 'packages/backtest/src/report.ts'];
      expect(found.some((v) => v.rule.name === 'no-cycle' && pair.includes(v.from) && pair.includes(v.to))).toBe(true);
    });

    it('a folder cycle fails: services/bureau <-> services/workflow', () => {
      const cycles = found
        .filter((v) => v.rule.name === 'no-folder-cycle')
        .map((v) => [v.from, ...(v.cycle ?? []).map((c) => c.name)].join(' -> '));
      expect(cycles.some((c) => c.includes('src/services/bureau') && c.includes('src/services/workflow'))).toBe(true);
    });

    it('an import between siblings of one layer fails: normalise -> services', () => {
      expect(has('sibling-normalise', 'src/normalise/workflow.ts', 'src/services/field-table.ts')).toBe(true);
    });

    it('the program importing the benchmark fails: cli -> bench', () => {
      expect(has('src-not-from-tooling', 'src/cli/main.ts', 'bench/harness.ts')).toBe(true);
    });

    it('reports nothing it was not given', () => {
      const planted = new Set([
        'src/cli/main.ts',
        'src/services/workflow/request.ts',
        'src/input/coerce.ts',
        'src/http/chain.ts',
        'src/output/summary-text.ts',
        'src/output/merge.ts',
        'src/limits/redis.ts',
        'packages/backtest/src/report.ts',
        'src/services/bureau/request.ts',
        'src/normalise/workflow.ts',
        'packages/core/src/errors.ts',
        'packages/formats/src/input/read.ts',
        'packages/backtest/src/side.ts',
        'packages/sandbox/src/server.ts',
        'packages/backtest/src/join.ts',
        'src/cli/compare.ts',
      ]);
      const direct = found.filter((v) => v.rule.name !== 'no-cycle' && v.rule.name !== 'no-folder-cycle');
      expect(direct.filter((v) => !planted.has(v.from))).toEqual([]);
    });
  });
});
