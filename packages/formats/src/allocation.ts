/**
 * How `run --sample N` shares the rows among the strata (`--sample-allocation`), apart from the manifest's
 * schemas: `run`'s options list them at every start, usage errors included, and the manifest's module brings zod.
 */
export const ALLOCATIONS = ['proportional', 'equal'] as const;
export type Allocation = (typeof ALLOCATIONS)[number];
