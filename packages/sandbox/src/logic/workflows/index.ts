/**
 * The named workflows (decision spec 1.4, 4.2-4.6) and their challengers: `<endpoint>_challenger` runs the
 * same workflow with the v2 cut-offs (workflow_version_path `workflow_<name>_v2`, final_decision.version
 * 'v2'), so back-tests of champion vs challenger show real swaps.
 */
import type { Variant, WorkflowRun } from './common.js';
import { bank } from './bank.js';
import { bureauMobile } from './bureau-mobile.js';
import { bureauMobileBank } from './bureau-mobile-bank.js';
import { location } from './location.js';
import { repeat } from './repeat.js';

const WORKFLOWS: Readonly<Record<string, WorkflowRun>> = {
  location_bre: location,
  bureau_mobile_bre: bureauMobile,
  bank_bre: bank,
  bureau_mobile_bank_bre: bureauMobileBank,
  repeat_bre: repeat,
};

/** Endpoint name -> workflow and variant; undefined for an unknown endpoint. */
export function resolveWorkflow(endpoint: string): { run: WorkflowRun; variant: Variant } | undefined {
  const challenger = endpoint.endsWith('_challenger');
  const base = challenger ? endpoint.slice(0, -'_challenger'.length) : endpoint;
  const run = Object.hasOwn(WORKFLOWS, base) ? WORKFLOWS[base] : undefined;
  return run ? { run, variant: challenger ? 'v2' : 'v1' } : undefined;
}

/** Every endpoint the sandbox serves (champions, then challengers). */
export const WORKFLOW_ENDPOINTS: readonly string[] = [
  ...Object.keys(WORKFLOWS),
  ...Object.keys(WORKFLOWS).map((e) => `${e}_challenger`),
];
