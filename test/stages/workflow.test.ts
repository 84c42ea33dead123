import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { getStageKind } from '../../src/stages/index.js';
import type { StageConfig } from '../../src/stages/types.js';
import { workflowKind, type WorkflowOptions } from '../../src/stages/workflow.js';
import { BANK_REJECT, EMI_ONLY, LOCATION, REPEAT } from '../normalise/workflow-fixtures.js';
import { context, fakeCall, row } from './helpers.js';

function stage(endpoint: string | undefined, options: Record<string, unknown> = {}): StageConfig<WorkflowOptions> {
  return { id: 'wf', kind: 'workflow', endpoint, when: [], options: workflowKind.optionsSchema.parse(options) };
}
const TOP = { reference_id: 'R1', user_id: 'U1' };
const ctx = () => context(new Date('2026-11-21T04:05:06Z'));

describe('workflow stage kind', () => {
  it('is registered with its service', () => {
    expect(getStageKind('workflow')).toBe(workflowKind);
    expect(workflowKind.service).toBe('workflow');
  });

  it('options: defaults, and unknown options refused', () => {
    expect(workflowKind.optionsSchema.parse({})).toEqual({ pass_columns: [], exclude_columns: [], column_types: {} });
    expect(workflowKind.optionsSchema.safeParse({ pas_columns: [] }).success).toBe(false);
    expect(workflowKind.optionsSchema.safeParse({ column_types: { a: 'date' } }).success).toBe(false);
    expect(workflowKind.optionsSchema.safeParse({ input_like: 'location_bre' }).success).toBe(true);
    expect(workflowKind.optionsSchema.safeParse({ input_like: 'my_flow' }).success).toBe(false);
  });

  it('checkConfig wants an endpoint that is one path segment', () => {
    expect(workflowKind.checkConfig!(stage(undefined))).toEqual([
      'endpoint: Expected the workflow endpoint to call (e.g. location_bre), got none',
    ]);
    expect(workflowKind.checkConfig!(stage('a/b'))).toEqual([
      "endpoint: Expected letters, digits, _ or - (one path segment), got 'a/b'",
    ]);
    expect(workflowKind.checkConfig!(stage('bank_bre', { input_like: 'location_bre' }))).toHaveLength(1);
    expect(workflowKind.checkConfig!(stage('my-flow_2'))).toEqual([]);
  });

  it('columns per endpoint', () => {
    expect(workflowKind.columns(stage('location_bre')).required).toEqual([
      'user_id',
      'reference_id',
      'lead_id',
      'latitude',
      'longitude',
    ]);
    const bm = workflowKind.columns(stage('bureau_mobile_bre'));
    expect(bm.required).toEqual(['user_id', 'reference_id', 'lead_id', 'app_user_id', 'declared_income']);
    expect(Object.keys(bm.conditional)).toContain('pan_number');
    expect(Object.keys(bm.conditional)).toContain('bureau_report_path');
    expect(Object.keys(workflowKind.columns(stage('bank_bre')).conditional)).toEqual(
      expect.arrayContaining(['request_id', 'report_id', 'auth_token', 'bank_data_path']),
    );
    expect(workflowKind.columns(stage('repeat_bre')).required).toHaveLength(21);
    expect(workflowKind.columns(stage('my_flow')).required).toEqual(['user_id', 'reference_id']);
    expect(workflowKind.columns(stage('my_flow', { input_like: 'location_bre', pass_columns: ['x'] }))).toEqual({
      required: ['user_id', 'reference_id', 'lead_id', 'latitude', 'longitude'],
      optional: ['x'],
      conditional: {},
    });
  });

  it("result fields are the normaliser's fixed columns, typed", () => {
    expect(workflowKind.resultFields!(stage('location_bre'))).toContainEqual({
      name: 'best_offer.loan_amount',
      kind: 'double',
    });
  });

  it('prepare builds the path from the client id and endpoint, and the body', async () => {
    const r = await workflowKind.prepare(
      row({ ...TOP, lead_id: 'L1', latitude: '19.1', longitude: '72.9' }),
      stage('location_bre'),
      ctx(),
    );
    expect(r).toEqual({
      ok: true,
      value: {
        path: '/execute/client-01/location_bre',
        body: { user_id: 'U1', reference_id: 'R1', input_data: { lead_id: 'L1', latitude: 19.1, longitude: 72.9 } },
      },
    });
  });

  it('prepare returns every field error and never throws', async () => {
    const r = await workflowKind.prepare(row({ latitude: 'north' }), stage('location_bre'), ctx());
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.errors.map((e) => e.field)).toEqual(['user_id', 'reference_id', 'lead_id', 'latitude', 'longitude']);
  });

  it('input_like: a challenger workflow validated like a named one; extra columns not sent', async () => {
    const data = { ...TOP, lead_id: 'L1', latitude: 1, longitude: 2, defaulted: '1' };
    const like = await workflowKind.prepare(
      row(data),
      stage('location_bre_challenger', { input_like: 'location_bre' }),
      ctx(),
    );
    expect(like).toEqual({
      ok: true,
      value: {
        path: '/execute/client-01/location_bre_challenger',
        body: { user_id: 'U1', reference_id: 'R1', input_data: { lead_id: 'L1', latitude: 1, longitude: 2 } },
      },
    });
    const free = await workflowKind.prepare(row(data), stage('location_bre_challenger'), ctx());
    expect(free.ok && free.value.body.input_data).toEqual({ lead_id: 'L1', latitude: 1, longitude: 2, defaulted: '1' });
  });

  it('report format warnings go to ctx.warn', async () => {
    const c = ctx();
    const b64 = Buffer.from('{"cir_report_file":{}}').toString('base64');
    const r = await workflowKind.prepare(
      row({
        ...TOP,
        lead_id: 'L',
        app_user_id: 'A',
        declared_income: 1,
        bureau_type: 'bureau_a_json',
        bureau_raw_json: b64,
      }),
      stage('bureau_mobile_bre'),
      c,
    );
    expect(r.ok).toBe(true);
    expect(c.warnings).toEqual([
      'bureau_type: the row names bureau_a_json but the report looks like bureau_b_json; sent as bureau_a_json',
    ]);
  });

  it.each([
    ['location', LOCATION, { decision: 'Approve', workflow: 'location', 'geocoding.city': 'Mumbai' }],
    [
      'bank reject',
      BANK_REJECT,
      { decision: 'Reject', loan_amount: null, rules_failed: ['bank bre checked', 'no bounces'] },
    ],
    ['repeat', REPEAT, { repayment_date: '2026-12-20' }],
    ['EMI', EMI_ONLY, { emi_decision: 'Approve', offers_count: 3 }],
  ])('execute posts the prepared body and normalises the %s answer', async (_n, answer, expected) => {
    const call = fakeCall(() => answer);
    const prepared = { path: '/execute/client-01/x', body: { user_id: 'U1', reference_id: 'R1', input_data: {} } };
    const out = await workflowKind.execute(prepared, call, stage('x'), ctx());
    expect(call.calls).toEqual([prepared]);
    expect(out.calls).toBe(1);
    expect(out.result).toMatchObject(expected);
  });

  it('execute: an answer of the wrong shape is BAD_RESPONSE; a call error passes through', async () => {
    const prepared = { path: '/p', body: {} };
    await expect(
      workflowKind.execute(
        prepared,
        fakeCall(() => ({ detail: 'x' })),
        stage('x'),
        ctx(),
      ),
    ).rejects.toMatchObject({ code: 'BAD_RESPONSE' });
    const failing = async (): Promise<never> => {
      throw new BreError('WORKFLOW_REJECTED_INPUT', 'bad value', { status: 500 });
    };
    await expect(workflowKind.execute(prepared, failing, stage('x'), ctx())).rejects.toMatchObject({
      code: 'WORKFLOW_REJECTED_INPUT',
      status: 500,
    });
  });
});
