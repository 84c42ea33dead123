/** Stage kinds register here by name; pipeline files refer to them by `kind:`. */
import { BreError } from '../errors.js';
import type { StageKind } from './types.js';

const kinds = new Map<string, StageKind<any, any>>();

export function registerStageKind(kind: StageKind<any, any>): void {
  if (kinds.has(kind.kind)) throw new Error(`stage kind '${kind.kind}' is registered twice`);
  kinds.set(kind.kind, kind);
}

export function getStageKind(name: string): StageKind<any, any> | undefined {
  return kinds.get(name);
}

/** The kind of a stage of a loaded pipeline (the loader has checked the name; a stray one is a pipeline error). */
export function kindOf(stage: { readonly kind: string }): StageKind<any, any> {
  const kind = kinds.get(stage.kind);
  if (!kind) throw new BreError('PIPELINE_INVALID', `unknown stage kind '${stage.kind}'`);
  return kind;
}

export function stageKindNames(): string[] {
  return [...kinds.keys()].sort();
}
