import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceCall, StageContext } from '../../src/stages/types.js';
import type { CallResult } from '../../src/http/chain.js';
import type { InputRow, JsonObject } from '../../src/types.js';

export const SAMPLES = join(dirname(fileURLToPath(import.meta.url)), '../../samples');

export function ctx(warnings: string[] = []): StageContext {
  return {
    inputDir: SAMPLES, clientId: 'client-01', now: () => new Date('2026-11-21T04:05:06Z'),
    signal: new AbortController().signal, warn: (m) => warnings.push(m),
  };
}

export function row(data: Record<string, unknown>, n = 1): InputRow {
  return { row: n, line: n + 1, data };
}

/** A ServiceCall that records calls and answers `body`. */
export function fakeCall(body: unknown): { call: ServiceCall; calls: Array<{ path: string; body: JsonObject }> } {
  const calls: Array<{ path: string; body: JsonObject }> = [];
  const call: ServiceCall = async (path, b): Promise<CallResult> => {
    calls.push({ path, body: b });
    return { status: 200, body, attempts: 1 };
  };
  return { call, calls };
}
