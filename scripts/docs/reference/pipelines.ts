/**
 * docs/reference/pipelines.md: each shipped pipeline (pipelines/) with its stages, the input columns they need
 * and the result columns they declare with their types (`StageKind.columns`, `StageKind.resultFields`): what
 * `bre-batch pipelines` lists, and what results.csv, results.parquet and a sink table hold from the first row.
 */
import { listPipelineNames, loadPipeline } from '../../../src/config/pipeline.js';
import { getStageKind } from '../../../src/stages/index.js';
import { cell, code, table } from './markdown.js';

export function pipelinesPage(): string[] {
  const lines = [
    '# Shipped pipelines',
    '',
    'Each pipeline of `pipelines/` as the program reads it: its stages, the input columns they need (`required` in',
    'every row, checked against the header before the start; `optional`; `conditional`, needed in some modes) and',
    'the result columns each stage declares, with their types. A declared column is in `results.csv`,',
    '`results.parquet` and a `--sink` table from the first night, null in every row or not; fields a stage does',
    "not declare (a workflow's `<engine>.<feature>` outputs) are added as they are met. How the types are written",
    'in Parquet: [Results as Parquet](../output.md#results-as-parquet); writing a pipeline of your own:',
    '[Pipelines](../pipelines.md).',
    '',
    ...table(
      ['pipeline', 'stages'],
      listPipelineNames().map((name) => {
        const p = loadPipeline(name);
        return [`[${code(name)}](#${name})`, p.stages.map((s) => code(s.endpoint ?? s.kind)).join(', then ')];
      }),
    ),
  ];
  for (const name of listPipelineNames()) {
    const p = loadPipeline(name);
    lines.push('', `## ${name}`, '');
    if (p.description) lines.push(`${cell(p.description)}.`, '');
    lines.push(`Key: ${code(p.key)}.`, '');
    lines.push(
      ...table(
        ['stage', 'kind', 'endpoint', 'runs when'],
        p.stages.map((s) => [
          code(s.id),
          code(s.kind),
          s.endpoint ? code(s.endpoint) : '',
          s.when.map((c) => code(`${c.stage}.${c.field}`)).join(' and ') || 'always',
        ]),
      ),
    );
    const required = new Map<string, string>();
    const optional = new Set<string>();
    const conditional = new Map<string, string>();
    for (const s of p.stages) {
      const cols = getStageKind(s.kind)!.columns(s);
      for (const c of cols.required) required.set(c, cols.alternatives?.[c]?.join(' or ') ?? '');
      for (const c of cols.optional) optional.add(c);
      for (const [c, why] of Object.entries(cols.conditional)) conditional.set(c, why);
    }
    lines.push('', '### Input columns', '');
    lines.push(
      ...table(
        ['column', 'needed'],
        [
          ...[...required].map(([c, alt]) => [code(c), alt ? `required (or ${cell(alt)})` : 'required']),
          ...[...conditional]
            .filter(([c]) => !required.has(c))
            .map(([c, why]) => [code(c), cell(`conditional: ${why}`)]),
          ...[...optional].filter((c) => !required.has(c) && !conditional.has(c)).map((c) => [code(c), 'optional']),
        ],
      ),
    );
    lines.push('', '### Result columns', '');
    const results = p.stages.flatMap((s) =>
      (getStageKind(s.kind)!.resultFields?.(s) ?? []).map((f) => [code(`${s.id}.${f.name}`), code(f.kind)]),
    );
    lines.push(...(results.length > 0 ? table(['column', 'type'], results) : ['None declared.']));
  }
  return lines;
}
