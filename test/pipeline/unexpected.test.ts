/**
 * UNEXPECTED: an exception nobody expected while a stage runs (a bug in a normaliser, say) is the row's
 * error with code UNEXPECTED and a short message; the stack goes to the log, scrubbed of secrets and masked.
 */
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { ErrorLine } from '@bre-batch/formats';
import { Redactor } from '../../src/output/redact.js';
import type { RunOutput } from '../../src/output/run-output.js';
import { Circuit, DEFAULT_CIRCUIT } from '../../src/pipeline/circuit.js';
import { OutcomeRecorder } from '../../src/pipeline/recorder.js';
import { runRow, type StageRuntime } from '../../src/pipeline/row.js';
import type { RunSettings } from '../../src/pipeline/settings.js';
import { newCounters } from '../../src/pipeline/build-summary.js';
import { registerStageKind } from '../../src/stages/registry.js';
import type { StageContext } from '../../src/stages/types.js';
import type { InputRow } from '@bre-batch/core/types';

const TOKEN = 'secret-token-123456';

registerStageKind({
  kind: 't_normaliser_bug',
  service: 'workflow',
  description: 'a stage whose normaliser has a bug',
  optionsSchema: z.object({}) as unknown as z.ZodType<Record<string, unknown>>,
  columns: () => ({ required: [], optional: [], conditional: {} }),
  prepare: () => ({ ok: true, value: null }),
  async execute() {
    const answer = undefined as unknown as { decision: string };
    // The bug: the message of the TypeError names a customer's phone number and the token (both must not leak).
    if (!answer) throw new TypeError(`cannot read decision of 9876543210 sent with ${TOKEN}`);
    return { result: { decision: answer.decision } };
  },
});

describe('an unexpected exception in a stage', () => {
  it('is the row error UNEXPECTED with a short message; the stack is logged, masked and scrubbed', async () => {
    const row: InputRow = { row: 4, line: 5, data: { reference_id: 'R4' } };
    const stages: StageRuntime[] = [
      {
        config: { id: 'decision', kind: 't_normaliser_bug', when: [], options: {} },
        call: async () => ({ status: 200, body: {}, attempts: 1 }),
        counters: { ran: 0, skipped: 0, failed: 0, calls: 0 },
      },
    ];
    const ctx: StageContext = {
      filesRoot: { kind: 'none', why: 'a test' },
      clientId: 'c',
      now: () => new Date(),
      signal: new AbortController().signal,
      warn: () => undefined,
    };
    const outcome = await runRow(row, stages, ctx, false);
    expect(outcome).toMatchObject({ kind: 'failed', stage: 'decision', error: { code: 'UNEXPECTED' } });

    const written: ErrorLine[] = [];
    const output = { writeError: (e: ErrorLine) => written.push(e) } as unknown as RunOutput;
    const logged: string[] = [];
    const redactor = new Redactor();
    redactor.add(TOKEN);
    const settings = { dryRun: false, keepPersonalData: false } as RunSettings;
    const recorder = new OutcomeRecorder({
      s: settings,
      output,
      redactor,
      circuit: new Circuit(DEFAULT_CIRCUIT),
      counters: newCounters(),
      requestStop: () => undefined,
      log: (l) => logged.push(l),
    });
    recorder.record(row, 'R4', outcome);

    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({ row: 4, stage: 'decision', code: 'UNEXPECTED', status: null });
    expect(written[0].message).toMatch(
      /^unexpected error \(a bug in bre-batch; its stack is in the log\): cannot read decision of/,
    );
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/^row 4 \(line 5\), stage decision: unexpected error, a bug in bre-batch/);
    expect(logged[0]).toMatch(/TypeError: cannot read decision/);
    expect(logged[0]).toMatch(/at .*unexpected\.test\.ts/);
    for (const text of [written[0].message, logged[0]]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain('9876543210');
    }
  });
});
