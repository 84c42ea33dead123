import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import type { CallOptions, CallResult } from '../../src/http/chain.js';
import { sendable as sendableLayer } from '../../src/http/layers/sendable.js';
import { attempt, scripted } from '../http/layers/attempt.js';
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
registerStageKind({
  ...testKind('t_calls', () => ok('calls')),
  async execute(_prepared, call) {
    await call('/p', {}, { timeoutMs: 5 });
    return { result: { called: true }, calls: 1 };
  },
});
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

describe("runRow: a row's calls asked before each attempt whether they are still wanted", () => {
  it("gives the question to each stage's calls, with the stage's own options; none when not given", async () => {
    const seen: (CallOptions | undefined)[] = [];
    const rt = stages('t_calls', 't_calls').map((st) => ({
      ...st,
      call: async (_p: string, _b: unknown, o?: CallOptions) => {
        seen.push(o);
        return { status: 200, body: {}, attempts: 1 };
      },
    }));
    const sendable = () => true;
    expect(await runRow(row, rt, ctx(), false, sendable)).toMatchObject({ kind: 'result' });
    expect(seen).toEqual([
      { timeoutMs: 5, sendable },
      { timeoutMs: 5, sendable },
    ]);
    await runRow(row, rt, ctx(), false);
    expect(seen.slice(2)).toEqual([{ timeoutMs: 5 }, { timeoutMs: 5 }]);
  });

  it('an attempt the question refuses is not sent: the row is `not sent` (not written), its later stages not run', async () => {
    const rt = stages('t_calls', 't_calls');
    const below = scripted<CallResult>([() => ({ status: 200, body: {}, attempts: 1 })]);
    rt[0] = {
      ...rt[0],
      call: (_p, _b, o) => sendableLayer()(below)(attempt({ sendable: o?.sendable })) as Promise<CallResult>,
    };
    expect(await runRow(row, rt, ctx(), false, () => false)).toEqual({ kind: 'not sent' });
    expect(below.seen).toEqual([]);
    expect(rt[0].counters.failed + rt[1].counters.ran).toBe(0);
    // A call abandoned by the stopping run is still `interrupted`.
    rt[0] = {
      ...rt[0],
      call: async () => {
        throw new BreError('INTERRUPTED', 'abandoned');
      },
    };
    expect(await runRow(row, rt, ctx(), false, () => true)).toEqual({ kind: 'interrupted' });
  });
});
