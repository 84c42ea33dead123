/** Shared helpers for the stage-kind tests: a row, a stage config, a context, a fake ServiceCall. */
import { join } from 'node:path';
import type { CallResult } from '../../src/http/chain.js';
import type { ServiceCall, StageConfig, StageContext, StageKind } from '../../src/stages/types.js';
import type { InputRow, JsonObject } from '@bre-batch/core/types';
import { ROOT } from '../helpers/cli.js';
import { folderRoot } from '../../src/input/files-root.js';

/** Report paths in rows resolve against samples/, as for the shipped sample inputs. */
export const SAMPLES = join(ROOT, 'samples');

export function row(data: Record<string, unknown>, n = 1): InputRow {
  return { row: n, line: n + 1, data };
}

export function stage<O>(kind: StageKind<O, any>, options: Record<string, unknown> = {}, id = 'acc'): StageConfig<O> {
  return { id, kind: kind.kind, when: [], options: kind.optionsSchema.parse(options) };
}

export interface TestContext extends StageContext {
  readonly warnings: string[];
  readonly abort: AbortController;
}

/** A context whose clock is real, fixed at `now`, or `now()` (a clock the test moves). */
export function context(now?: Date | (() => Date)): TestContext {
  const warnings: string[] = [];
  const abort = new AbortController();
  const clock = typeof now === 'function' ? now : () => now ?? new Date();
  return {
    filesRoot: folderRoot(SAMPLES, false),
    clientId: 'client-01',
    now: clock,
    signal: abort.signal,
    abort,
    warnings,
    warn: (message) => {
      warnings.push(message);
    },
  };
}

export interface Recorded {
  readonly path: string;
  readonly body: JsonObject;
}

/** A ServiceCall answering from `answer(path, body, n)` (n = calls so far to that path, from 1). */
export function fakeCall(
  answer: (path: string, body: JsonObject, n: number) => unknown | Promise<unknown>,
): ServiceCall & { calls: Recorded[] } {
  const calls: Recorded[] = [];
  const counts = new Map<string, number>();
  const fn = (async (path: string, body: JsonObject): Promise<CallResult> => {
    calls.push({ path, body });
    const n = (counts.get(path) ?? 0) + 1;
    counts.set(path, n);
    return { status: 200, body: await answer(path, body, n), attempts: 1 };
  }) as ServiceCall & { calls: Recorded[] };
  fn.calls = calls;
  return fn;
}
