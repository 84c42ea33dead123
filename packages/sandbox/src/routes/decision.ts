/**
 * The decision service (decision spec 4.1-4.6) and the bureau feature service (4.7).
 *   - /execute/{client_id}/{workflow_endpoint}: body {user_id, reference_id, input_data}; the path's
 *     client_id must equal the x-client-id header (otherwise 401, the same body as bad credentials);
 *     an unknown endpoint is 404 {"detail": "workflow endpoint '<name>' not found"}.
 *   - /api/bureau: body {user_id, reference_id, fetched_timestamp, raw_data, format_type}; an unsupported
 *     format_type is a 422 literal_error (it is an enumerated request field); a report that cannot be
 *     decoded is 500 {"detail": "error in decoding raw_data: <reason>"}.
 */
import { Fail, json, notFound, unexpectedInput, validationFailed } from '../answers.js';
import {
  FEATURE_BUREAU_FORMATS,
  ReportError,
  bureauFeatures,
  profileFromRaw,
  type BureauFormat,
} from '../logic/bureau.js';
import { envelope } from '../logic/workflows/common.js';
import { resolveWorkflow } from '../logic/workflows/index.js';
import { Validator } from '../validate.js';
import { bsaStatementEnd } from './account.js';
import type { Handler } from './context.js';

const LOC = ['body'] as const;

export const executeWorkflow: Handler = (ctx) => {
  const endpoint = ctx.params.endpoint;
  const resolved = resolveWorkflow(endpoint);
  if (!resolved) return notFound('workflow', `workflow endpoint '${endpoint}' not found`);
  const wf = { ...resolved, variant: ctx.variantOf(endpoint, resolved.variant) };
  const v = new Validator();
  const userId = v.str(ctx.body, 'user_id', LOC, true, { maxLength: 64 });
  const referenceId = v.str(ctx.body, 'reference_id', LOC);
  const input = v.obj(ctx.body, 'input_data', LOC);
  if (!v.ok) {
    // Report the workflow's own field problems together with the envelope's, as one 422.
    if (input) {
      try {
        wf.run(input, {
          variant: wf.variant,
          userId: userId ?? '',
          now: ctx.now,
          sessions: { bsaStatementEnd: () => ctx.now },
        });
      } catch (err) {
        if (err instanceof Fail && err.answer.status === 422)
          v.issues.push(...(JSON.parse(err.answer.body) as { detail: never[] }).detail);
      }
    }
    throw new Fail(validationFailed('workflow', v.issues));
  }
  const out = wf.run(input!, {
    variant: wf.variant,
    userId: userId!,
    now: ctx.now,
    sessions: { bsaStatementEnd: (u, s) => bsaStatementEnd(ctx.state, u, s, ctx.now) },
  });
  return json(200, envelope(ctx.requestId, userId!, referenceId!, wf.variant, out));
};

const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

export const bureauFeaturesRoute: Handler = (ctx) => {
  const v = new Validator();
  v.str(ctx.body, 'user_id', LOC, true, { maxLength: 64 });
  const referenceId = v.str(ctx.body, 'reference_id', LOC);
  v.str(ctx.body, 'fetched_timestamp', LOC, true, {
    pattern: TIMESTAMP,
    patternText: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$',
  });
  const raw = v.str(ctx.body, 'raw_data', LOC);
  const format = v.literal(ctx.body, 'format_type', LOC, FEATURE_BUREAU_FORMATS);
  if (!v.ok) throw new Fail(validationFailed('bureau', v.issues));
  let features: ReturnType<typeof bureauFeatures>;
  try {
    features = bureauFeatures(profileFromRaw(raw!, format as BureauFormat));
  } catch (err) {
    if (err instanceof ReportError) return unexpectedInput(`error in decoding raw_data: ${err.message}`);
    throw err;
  }
  return json(200, { reference_id: referenceId, ...features });
};
