/**
 * Tests gated on what they need beyond Node (tools.ts): they run when it is there; without it they are
 * skipped with a line saying so, except under CI=true, where a missing need is a failure.
 */
import { describe, it } from 'vitest';
import { installCommand, missingBinaries, TEST_TOOLS } from './tools.js';

const inCi = process.env.CI === 'true';

/**
 * `it` when `available`; without it, under CI=true a test that fails saying what is missing, else `it.skip`
 * and one line on stderr saying which tests did not run and how to get what they need.
 */
export function gatedIt(available: boolean, missing: string, remedy: string): typeof it {
  if (available) return it;
  if (!inCi) {
    process.stderr.write(`\n  SKIPPED: ${missing}; ${remedy}\n\n`);
    return it.skip as typeof it;
  }
  return ((name: string) =>
    it(name, () => {
      throw new Error(`CI=true but ${missing}: ${remedy}`);
    })) as unknown as typeof it;
}

/**
 * `describe` for a file whose tests all need the executables of the tools named: skipped whole (its hooks,
 * which would start them, included) with a line saying so, except under CI=true.
 */
export function describeWithTools(...names: string[]): typeof describe {
  const tools = names.map((name) => {
    const tool = TEST_TOOLS.find((t) => t.name === name);
    if (!tool) throw new Error(`no test tool named ${name}`);
    return tool;
  });
  const missing = tools.flatMap(missingBinaries);
  if (missing.length === 0 || inCi) return describe;
  const remedy = installCommand(tools.flatMap((t) => t.packages));
  process.stderr.write(
    `\n  SKIPPED: ${missing.join(', ')} missing; these tests need them (${remedy}, or run npm test as root: it installs them)\n\n`,
  );
  return describe.skip as typeof describe;
}
