/**
 * What every named workflow shares: the rule chain (decision spec 1.3: a rule stage proceeds only when all
 * its conditions hold, otherwise the decision is Reject) and the response envelope (2.3-2.5).
 */
import { Fail, unexpectedInput, validationFailed } from '../../answers.js';
import type { Obj, Validator } from '../../validate.js';

export type Variant = 'v1' | 'v2';

/** Account-service facts a workflow needs when it fetches bank data itself. */
interface SessionFacts {
  /** End of the statement period of a BSA session (its processing start, or now when never started). */
  bsaStatementEnd(userId: string, sessionId: string): number;
}

export interface WorkflowContext {
  /** v1 = champion (`<endpoint>`), v2 = challenger (`<endpoint>_challenger`): different cut-offs. */
  readonly variant: Variant;
  readonly userId: string;
  readonly now: number;
  readonly sessions: SessionFacts;
}

interface Rule {
  readonly name: string;
  readonly pass: boolean;
}

export interface Stage {
  readonly engine: string;
  readonly rules: readonly Rule[];
}

export interface ChainResult {
  readonly approved: boolean;
  /** The engine that produced the decision: the failing stage, or the last one. */
  readonly engine: string;
  readonly rulesEvaluation: Record<string, boolean>;
  readonly failed: readonly string[];
}

/** Runs stages in order and stops at the first stage with a failing rule (later stages are not evaluated). */
export function runChain(stages: readonly Stage[]): ChainResult {
  const rulesEvaluation: Record<string, boolean> = {};
  for (const stage of stages) {
    const failed: string[] = [];
    for (const r of stage.rules) {
      rulesEvaluation[r.name] = r.pass;
      if (!r.pass) failed.push(r.name);
    }
    if (failed.length > 0) return { approved: false, engine: stage.engine, rulesEvaluation, failed };
  }
  return { approved: true, engine: stages[stages.length - 1].engine, rulesEvaluation, failed: [] };
}

export function decisionReason(c: ChainResult): string {
  return c.approved ? `${c.engine} bre checked` : `${c.engine} bre rejected: ${c.failed.join('; ')}`;
}

/** Throws the 422 collected so far, if any. */
export function assertValid(v: Validator): void {
  if (!v.ok) throw new Fail(validationFailed('workflow', v.issues));
}

/** Throws a 500 "unexpected value" answer (decision spec section 7). */
export function unexpected(message: string): never {
  throw new Fail(unexpectedInput(message));
}

export const floorTo = (x: number, step: number) => Math.floor(x / step) * step;

export interface WorkflowOutput {
  readonly workflowName: string;
  readonly outputData: Obj;
}

export type WorkflowRun = (input: Obj, ctx: WorkflowContext) => WorkflowOutput;

/** The 200 body (decision spec 2.3): field order as documented. */
export function envelope(
  requestId: string,
  userId: string,
  referenceId: string,
  variant: Variant,
  out: WorkflowOutput,
): Obj {
  return {
    request_id: requestId,
    user_id: userId,
    reference_id: referenceId,
    workflow_version_path: `workflow_${out.workflowName}_${variant}`,
    engine_history: [],
    output_data: out.outputData,
  };
}

export const INPUT_LOC = ['body', 'input_data'] as const;
