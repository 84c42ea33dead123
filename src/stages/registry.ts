/** Stage kinds register here by name; pipeline files refer to them by `kind:`. */
import { BreError } from '@bre-batch/core/errors';
import type { ColumnKind } from '@bre-batch/core/types';
import type { StageConfig, StageKind } from './types.js';

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

/**
 * A stage's declared result fields (its kind's `resultFields`): their names in order and their kinds, as the
 * results files (src/output/journal/columns.ts StageColumns) and the sink's tables take them.
 */
export function declaredFields(stage: StageConfig<any>): {
  id: string;
  known: string[];
  kinds: Record<string, ColumnKind>;
} {
  const fields = kindOf(stage).resultFields?.(stage) ?? [];
  return {
    id: stage.id,
    known: fields.map((f) => f.name),
    kinds: Object.fromEntries(fields.map((f) => [f.name, f.kind])),
  };
}

/** Every stage's declared result fields as results.csv heads them (`stage.field`), in pipeline order, typed. */
export function declaredHeaders(stages: readonly StageConfig<any>[]): { header: string; kind: ColumnKind }[] {
  return stages.flatMap((st) =>
    (kindOf(st).resultFields?.(st) ?? []).map((f) => ({ header: `${st.id}.${f.name}`, kind: f.kind })),
  );
}
