/** `bre-batch pipelines`: each shipped pipeline with its stages and the input columns it needs. */
import type { CommandModule } from 'yargs';
import { listPipelineNames, loadPipeline } from '../config/pipeline.js';
import { getStageKind } from '../stages/index.js';

function describePipelines(): string {
  const out: string[] = [];
  for (const name of listPipelineNames()) {
    const p = loadPipeline(name);
    out.push(`${p.name}${p.description ? ` - ${p.description}` : ''}`);
    out.push(`  key: ${p.key}`);
    const required = new Set<string>();
    const optional = new Set<string>();
    const conditional = new Map<string, string>();
    for (const st of p.stages) {
      const kind = getStageKind(st.kind)!;
      const cols = kind.columns(st);
      out.push(
        `  stage ${st.id}: ${st.kind}${st.endpoint ? ` ${st.endpoint}` : ''}${st.when.length ? ` (when ${st.when.map((c) => `${c.stage}.${c.field}`).join(' and ')})` : ''}`,
      );
      for (const c of cols.required)
        required.add(cols.alternatives?.[c] ? `${c} (or ${cols.alternatives[c].join(' or ')})` : c);
      for (const c of cols.optional) optional.add(c);
      for (const [c, why] of Object.entries(cols.conditional)) conditional.set(c, why);
    }
    out.push(`  required: ${[...required].join(', ') || '-'}`);
    const opt = [...optional].filter((c) => !required.has(c));
    out.push(`  optional: ${opt.join(', ') || '-'}`);
    if (conditional.size > 0) {
      out.push('  conditional:');
      for (const [c, why] of conditional) out.push(`    ${c}: ${why}`);
    }
    out.push('');
  }
  return out.join('\n');
}

export const pipelinesCommand: CommandModule = {
  command: 'pipelines',
  describe: 'list the shipped pipelines with the input columns each needs',
  handler: () => {
    process.stdout.write(describePipelines());
  },
};
