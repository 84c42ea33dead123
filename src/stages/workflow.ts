/**
 * Stage kind `workflow`: POST /execute/{client_id}/{endpoint} (spec 4.1–4.6), normalised by
 * ../normalise/workflow.ts. `endpoint` is any workflow endpoint: the five named ones are validated from
 * their field tables (../services/workflow/endpoints.ts); any other is a client's own workflow, which gets every
 * column in input_data (or the input of a named workflow, with `input_like`).
 *
 * Options (all optional):
 *   input_like       a named workflow whose input rules a client workflow follows, e.g. a challenger
 *                    `bureau_mobile_bre_v2` built like bureau_mobile_bre. Default: none (every column sent).
 *   pass_columns     further columns sent in input_data as given (dotted names nested). Default [].
 *   exclude_columns  client workflows: columns never sent (e.g. an outcome column). Default [].
 *   column_types     column -> string | number | boolean | json, for columns sent as given. Default {}.
 * Errors of the call (500 {detail}, 422) are mapped to BreErrors by the HTTP chain, not here.
 */
import { z } from 'zod';
import { normaliseWorkflow, workflowResultColumns } from '../normalise/workflow.js';
import { isNamedEndpoint, NAMED_COLUMNS, NAMED_ENDPOINTS } from '../services/workflow/endpoints.js';
import { BANK_PATH_FIELD } from '../services/workflow/bank-data.js';
import { COLUMN_TYPES } from '../services/workflow/extra-columns.js';
import { buildWorkflowRequest, type WorkflowRequest } from '../services/workflow/request.js';
import { REPORT_PATH_FIELD } from '../services/bureau/report.js';
import type { JsonObject } from '@bre-batch/core/types';
import { registerStageKind } from './registry.js';
import type { ColumnSpec, PrepareResult } from '../input/validation.js';
import type { StageConfig, StageKind } from './types.js';

const optionsSchema = z.strictObject({
  input_like: z.enum(NAMED_ENDPOINTS as [string, ...string[]]).optional(),
  pass_columns: z.array(z.string().min(1)).default([]),
  exclude_columns: z.array(z.string().min(1)).default([]),
  column_types: z.record(z.string(), z.enum(COLUMN_TYPES as [string, ...string[]])).default({}),
});
export type WorkflowOptions = Readonly<z.infer<typeof optionsSchema>>;

export interface WorkflowPrepared {
  readonly path: string;
  readonly body: JsonObject;
}

const ENDPOINT_RE = /^[A-Za-z0-9_-]+$/;

/** The endpoint whose input rules apply: the named endpoint itself, or `input_like`. */
function inputEndpoint(stage: StageConfig<WorkflowOptions>): string {
  return stage.options.input_like ?? stage.endpoint ?? '';
}

export const workflowKind: StageKind<WorkflowOptions, WorkflowPrepared> = {
  kind: 'workflow',
  service: 'workflow',
  // An EMI workflow answers emi_decision instead of decision.
  decisionOf: (result) => String(result.decision ?? result.emi_decision ?? '(none)'),
  versionOf: (result) => ({
    workflow: typeof result.workflow === 'string' ? result.workflow : null,
    version: typeof result.workflow_version === 'string' ? result.workflow_version : null,
  }),
  description:
    'Decision workflow: POST /execute/{client_id}/{endpoint} (location_bre, bureau_mobile_bre, bank_bre, bureau_mobile_bank_bre, repeat_bre, or your own)',
  optionsSchema: optionsSchema as unknown as z.ZodType<WorkflowOptions>,

  checkConfig(stage) {
    const problems: string[] = [];
    if (stage.endpoint === undefined || stage.endpoint === '') {
      problems.push('endpoint: Expected the workflow endpoint to call (e.g. location_bre), got none');
    } else if (!ENDPOINT_RE.test(stage.endpoint)) {
      problems.push(`endpoint: Expected letters, digits, _ or - (one path segment), got '${stage.endpoint}'`);
    }
    if (
      stage.options.input_like &&
      stage.endpoint &&
      isNamedEndpoint(stage.endpoint) &&
      stage.options.input_like !== stage.endpoint
    ) {
      problems.push(
        `options.input_like: ${stage.endpoint} is a named workflow with its own input; input_like applies to client workflows`,
      );
    }
    return problems;
  },

  columns(stage): ColumnSpec {
    const endpoint = inputEndpoint(stage);
    if (isNamedEndpoint(endpoint)) {
      const named = NAMED_COLUMNS[endpoint];
      return { ...named, optional: [...named.optional, ...stage.options.pass_columns] };
    }
    return {
      required: ['user_id', 'reference_id'],
      optional: [],
      conditional: {
        '(every other column)':
          'sent in input_data as given (dotted names nested); reports and bank data as for the named workflows',
      },
      files: [REPORT_PATH_FIELD, BANK_PATH_FIELD],
    };
  },

  resultFields: () => workflowResultColumns(),

  prepare(row, stage, ctx) {
    const endpoint = stage.endpoint ?? '';
    const done = (built: PrepareResult<WorkflowRequest>): PrepareResult<WorkflowPrepared> => {
      if (!built.ok) return built;
      for (const w of built.warnings ?? []) ctx.warn(w, row);
      return {
        ok: true,
        value: {
          path: `/execute/${encodeURIComponent(ctx.clientId)}/${encodeURIComponent(endpoint)}`,
          body: built.value.body,
        },
      };
    };
    const built = buildWorkflowRequest(row.data, inputEndpoint(stage), {
      filesRoot: ctx.filesRoot,
      passColumns: stage.options.pass_columns,
      excludeColumns: stage.options.exclude_columns,
      columnTypes: stage.options.column_types as Readonly<Record<string, 'string' | 'number' | 'boolean' | 'json'>>,
      numberStyle: ctx.numberStyle,
    });
    // Synchronous unless a report or bank file had to be read (see buildWorkflowRequest).
    return built instanceof Promise ? built.then(done) : done(built);
  },

  async execute(prepared, call) {
    const answer = await call(prepared.path, prepared.body);
    return { result: normaliseWorkflow(answer.body), calls: 1 };
  },
};

registerStageKind(workflowKind);
