import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { prepareRow, runRow, type StageRuntime } from '../../src/pipeline/row.js';
import '../../src/stages/index.js';
import { registerStageKind } from '../../src/stages/registry.js';
import type { StageContext, StageKind } from '../../src/stages/types.js';
import type { PrepareResult } from '../../src/input/validation.js';
import type { InputRow } from '@bre-batch/core/types';

/** Test stage kinds: each prepares as its name says; execute echoes what was prepared. */
function testKind(kind: string, prepare: StageKind['prepare']): StageKind {
  return {
    kind,
    service: 'workflow',
    description: kind,
    optionsSchema: z.object({}) as unknown as z.ZodType<Record<string, unknown>>,
    columns: () => ({ required: [], optional: [], conditional: {} }),
    prepare,
    async execute(prepared) {
      return { result: { prepared: prepared as string }, calls: 1 };
    },
  };
}

const ok = (value: string): PrepareResult<unknown> => ({ ok: true, value });
registerStageKind(testKind('t_sync', () => ok('sync')));
registerStageKind(testKind('t_async', async () => ok('async')));
registerStageKind(testKind('t_warn', () => ({ ok: true, value: 'warned', warnings: ['look at this'] })));
registerStageKind(
  testKind('t_bad', () => ({
    ok: false,
    errors: [{ field: 'amount', expected: 'a number', message: 'amount: Expected a number, got "x"' }],
  })),
);
registerStageKind(
  testKind('t_throws', () => {
    throw new Error('bug in a stage');
  }),
);
registerStageKind(
  testKind('t_rejects', async () => {
    throw new Error('async bug in a stage');
  }),
);

const row: InputRow = { row: 7, line: 8, data: {} };

function stages(...kinds: string[]): StageRuntime[] {
  return kinds.map((kind, i) => ({
    config: { id: `s${i}`, kind, when: [], options: {} },
    call: async () => ({ status: 200, body: {}, attempts: 1 }),
    counters: { ran: 0, skipped: 0, failed: 0, calls: 0 },
  }));
}

function ctx(warnings: string[] = []): StageContext {
  return {
    filesRoot: { kind: 'none', why: 'a test' },
    clientId: 'c',
    now: () => new Date(),
    signal: new AbortController().signal,
    warn: (m) => warnings.push(m),
  };
}

describe('prepareRow: synchronous unless a stage answers with a promise', () => {
  it.each([
    ['every stage synchronous', ['t_sync', 't_warn'], false, { prepared: ['sync', 'warned'] }],
    ['a promise first', ['t_async', 't_sync'], true, { prepared: ['async', 'sync'] }],
    [
      'a promise after synchronous stages',
      ['t_sync', 't_async', 't_sync'],
      true,
      { prepared: ['sync', 'async', 'sync'] },
    ],
    [
      'a bad field',
      ['t_sync', 't_bad'],
      false,
      {
        stage: 's1',
        errors: [{ field: 'amount', expected: 'a number', message: 'amount: Expected a number, got "x"' }],
      },
    ],
    [
      'a stage that throws',
      ['t_throws', 't_sync'],
      false,
      { stage: 's0', errors: [{ field: '(row)', expected: 'a row the stage can read', message: 'bug in a stage' }] },
    ],
    [
      'a stage that rejects',
      ['t_sync', 't_rejects'],
      true,
      {
        stage: 's1',
        errors: [{ field: '(row)', expected: 'a row the stage can read', message: 'async bug in a stage' }],
      },
    ],
  ] as const)('%s', async (_name, kinds, isPromise, expected) => {
    const out = prepareRow(row, stages(...kinds), ctx());
    expect(out instanceof Promise).toBe(isPromise);
    expect(await out).toEqual(expected);
  });

  it('warnings name the stage and the row, whichever path', async () => {
    const warnings: string[] = [];
    await prepareRow(row, stages('t_async', 't_warn'), ctx(warnings));
    expect(warnings).toEqual(['s1: look at this']);
  });

  it('errors of every stage are gathered, the first failing stage named', async () => {
    const out = await prepareRow(row, stages('t_sync', 't_bad', 't_rejects', 't_bad'), ctx());
    expect(out).toMatchObject({ stage: 's1' });
    expect('errors' in out && out.errors.map((e) => e.field)).toEqual(['amount', '(row)']);
  });

  it('runRow runs the stages of a row prepared either way', async () => {
    for (const kinds of [
      ['t_sync', 't_sync'],
      ['t_async', 't_sync'],
    ]) {
      const out = await runRow(row, stages(...kinds), ctx(), false);
      expect(out).toMatchObject({
        kind: 'result',
        stages: { s0: { prepared: kinds[0] === 't_sync' ? 'sync' : 'async' }, s1: { prepared: 'sync' } },
      });
    }
  });
});
