/**
 * The rebuild's thread (started by ./rebuild-thread.ts): rebuildOutputs (./rebuild.ts) with the options it was given,
 * the earlier sessions' decisions counted here, then one message: the result and the counts, or the failure.
 */
import { ColumnUnion } from '../journal/columns.js';
import { DecisionCounter } from '../../stages/index.js';
import { rebuildOutputs } from './rebuild.js';
import type { RebuildWorkerData, FromRebuild } from './rebuild-thread.js';
import { threadPort } from '../worker-thread.js';

const port = threadPort<RebuildWorkerData, never, FromRebuild>();
if (port) {
  const { union: changes, decisions: given, ...rest } = port.data;
  let union: ColumnUnion | undefined;
  if (changes) {
    union = new ColumnUnion();
    for (const c of changes) union.add(c.stage, c.field, c.types);
  }
  const decisions = given ? new DecisionCounter(given.stages) : undefined;
  decisions?.restore(given!.counts);
  rebuildOutputs({
    ...rest,
    ...(union ? { union } : {}),
    ...(decisions ? { visitResult: (line) => decisions.add(line.stages), tally: decisions } : {}),
  }).then(
    (result) => port.post({ type: 'done', result, ...(decisions ? { counts: decisions.save() } : {}) }),
    (err: unknown) => port.fail(err),
  );
}
