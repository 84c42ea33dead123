/**
 * Stage kind `bureau_features`: POST /api/bureau (spec 4.7, 2.8), normalised by
 * ../normalise/bureau-features.ts. The request is built by ../services/bureau/request.ts.
 *
 * Options (all optional):
 *   format   force one format_type for every row (one of the 7 of 2.7), overriding the row and detection.
 *            Default: the row's format_type / bureau_type, else detected from the report.
 * A 500 from the bureau service with a `detail` text (its "error in decoding raw_data") is BUREAU_DECODE_FAILED
 * by the answer's classification (../http/classify.ts), not here.
 */
import { z } from 'zod';
import { bureauFeatureColumns, normaliseBureauFeatures } from '../normalise/bureau-features.js';
import { FEATURE_FORMAT_TYPES } from '../services/bureau/formats.js';
import { REPORT_PATH_FIELD } from '../services/bureau/report.js';
import { BUREAU_PATH, buildBureauFeaturesRequest, REFUSED_FEATURE_FORMATS } from '../services/bureau/request.js';
import type { JsonObject } from '@bre-batch/core/types';
import { registerStageKind } from './registry.js';
import type { PrepareResult } from '../input/validation.js';
import type { StageKind } from './types.js';

const optionsSchema = z.strictObject({
  format: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      if (v === undefined || (FEATURE_FORMAT_TYPES as readonly string[]).includes(v)) return;
      ctx.addIssue({
        code: 'custom',
        input: v,
        message: REFUSED_FEATURE_FORMATS[v] ?? `Expected one of ${FEATURE_FORMAT_TYPES.join(', ')}, got '${v}'`,
      });
    }),
});
export type BureauFeaturesOptions = Readonly<z.infer<typeof optionsSchema>>;

export interface BureauFeaturesPrepared {
  readonly body: JsonObject;
}

export const bureauFeaturesKind: StageKind<BureauFeaturesOptions, BureauFeaturesPrepared> = {
  kind: 'bureau_features',
  service: 'bureau',
  description: 'Bureau features from a fetched bureau report: POST /api/bureau (risk grade, affordability, income...)',
  optionsSchema: optionsSchema as unknown as z.ZodType<BureauFeaturesOptions>,

  columns: (stage) => ({
    required: ['user_id', 'reference_id'],
    optional: ['fetched_timestamp', ...(stage.options.format ? [] : ['format_type'])],
    conditional: {
      raw_data: 'base64 of the bureau report (also read from bureau_raw_json), unless bureau_report_path is given',
      [REPORT_PATH_FIELD]: 'the bureau report file, instead of raw_data / bureau_raw_json',
    },
    files: [REPORT_PATH_FIELD],
  }),

  resultFields: () => bureauFeatureColumns(),

  async prepare(row, stage, ctx): Promise<PrepareResult<BureauFeaturesPrepared>> {
    const built = await buildBureauFeaturesRequest(row.data, {
      filesRoot: ctx.filesRoot,
      format: stage.options.format,
      now: ctx.now,
    });
    if (!built.ok) return built;
    for (const w of built.warnings ?? []) ctx.warn(w, row);
    return { ok: true, value: built.value };
  },

  async execute(prepared, call) {
    const answer = await call(BUREAU_PATH, prepared.body);
    return { result: normaliseBureauFeatures(answer.body), calls: 1 };
  },
};

registerStageKind(bureauFeaturesKind);
