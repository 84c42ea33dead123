import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bureauFeaturesKind, type BureauFeaturesOptions } from '../../src/stages/bureau-features.js';
import { getStageKind } from '../../src/stages/index.js';
import type { StageConfig } from '../../src/stages/types.js';
import { context, fakeCall, row, SAMPLES } from './helpers.js';

function stage(options: Record<string, unknown> = {}): StageConfig<BureauFeaturesOptions> {
  return { id: 'bureau', kind: 'bureau_features', when: [], options: bureauFeaturesKind.optionsSchema.parse(options) };
}
const TOP = { reference_id: 'R1', user_id: 'U1' };
const ctx = () => context(new Date('2026-11-21T04:05:06Z'));

describe('bureau_features stage kind', () => {
  it('is registered with its service', () => {
    expect(getStageKind('bureau_features')).toBe(bureauFeaturesKind);
    expect(bureauFeaturesKind.service).toBe('bureau');
  });

  it('options: format must be one of the 7 format_type values', () => {
    expect(bureauFeaturesKind.optionsSchema.parse({})).toEqual({});
    expect(bureauFeaturesKind.optionsSchema.parse({ format: 'bureau_b_xml' })).toEqual({ format: 'bureau_b_xml' });
    const v2 = bureauFeaturesKind.optionsSchema.safeParse({ format: 'bureau_c_softpull_json_v2' });
    expect(v2.success).toBe(false);
    expect(v2.error?.issues[0].message).toMatch(/not accepted by the bureau feature endpoint/);
    expect(bureauFeaturesKind.optionsSchema.safeParse({ format: 'xyz' }).error?.issues[0].message).toMatch(
      /^Expected one of bureau_a_json, .*got 'xyz'$/,
    );
    expect(bureauFeaturesKind.optionsSchema.safeParse({ formt: 'bureau_b_xml' }).success).toBe(false);
  });

  it('columns', () => {
    expect(bureauFeaturesKind.columns(stage())).toEqual({
      required: ['user_id', 'reference_id'],
      optional: ['fetched_timestamp', 'format_type'],
      conditional: expect.objectContaining({ raw_data: expect.any(String), bureau_report_path: expect.any(String) }),
      files: ['bureau_report_path'],
    });
    expect(bureauFeaturesKind.columns(stage({ format: 'bureau_a_json' })).optional).toEqual(['fetched_timestamp']);
  });

  it('prepare -> the /api/bureau body; execute -> the flat features', async () => {
    const prep = await bureauFeaturesKind.prepare(
      row({ ...TOP, bureau_report_path: 'reports/bureau_c_softpull.json' }),
      stage(),
      ctx(),
    );
    expect(prep).toEqual({
      ok: true,
      value: {
        body: {
          user_id: 'U1',
          reference_id: 'R1',
          fetched_timestamp: '2026-11-21 04:05:06',
          raw_data: readFileSync(join(SAMPLES, 'reports/bureau_c_softpull.json')).toString('base64'),
          format_type: 'bureau_c_softpull_json',
        },
      },
    });
    const answer = {
      reference_id: 'R1',
      score: 745,
      cbs_risk_grade_v1: 2,
      is_risky_customer: false,
      extra_feature: 'x',
    };
    const call = fakeCall(() => answer);
    const out = await bureauFeaturesKind.execute(prep.ok ? prep.value : { body: {} }, call, stage(), ctx());
    expect(call.calls.map((c) => c.path)).toEqual(['/api/bureau']);
    expect(out).toEqual({ result: answer, calls: 1 });
    expect(Object.keys(out.result)).toEqual([
      'reference_id',
      'cbs_risk_grade_v1',
      'is_risky_customer',
      'score',
      'extra_feature',
    ]);
  });

  it('the SOAP report is refused before any call', async () => {
    const prep = await bureauFeaturesKind.prepare(
      row({ ...TOP, bureau_report_path: 'reports/bureau_c_soap.xml' }),
      stage(),
      ctx(),
    );
    expect(prep.ok).toBe(false);
    if (!prep.ok) expect(prep.errors[0].code).toBe('REPORT_FORMAT_UNSUPPORTED');
  });

  it('execute: a non-object answer is BAD_RESPONSE', async () => {
    await expect(
      bureauFeaturesKind.execute(
        { body: {} },
        fakeCall(() => 'oops'),
        stage(),
        ctx(),
      ),
    ).rejects.toMatchObject({ code: 'BAD_RESPONSE' });
  });
});
