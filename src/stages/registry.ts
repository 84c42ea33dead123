/** Stage kinds register here by name; pipeline files refer to them by `kind:`. */
import type { StageKind } from './types.js';

const kinds = new Map<string, StageKind<any, any>>();

export function registerStageKind(kind: StageKind<any, any>): void {
  if (kinds.has(kind.kind)) throw new Error(`stage kind '${kind.kind}' is registered twice`);
  kinds.set(kind.kind, kind);
}

export function getStageKind(name: string): StageKind<any, any> | undefined {
  return kinds.get(name);
}

export function stageKindNames(): string[] {
  return [...kinds.keys()].sort();
}
