/**
 * The JSON Schema of pipeline files, for editors (pipelines/pipeline.schema.json, referenced from each
 * shipped file). Generated from the same zod schema the loader validates with; a test keeps the committed
 * file in step. Regenerate: `node dist/config/json-schema.js > pipelines/pipeline.schema.json`.
 */
import { z } from 'zod';
import { pipelineFileSchema } from './pipeline.js';
import { stageKindNames } from '../stages/index.js';

export function pipelineJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(pipelineFileSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, any>;
  schema.title = 'bre-batch pipeline';
  const kind = schema.properties?.stages?.items?.properties?.kind;
  if (kind) {
    kind.enum = stageKindNames();
    kind.description = 'a registered stage kind';
  }
  return schema;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  process.stdout.write(`${JSON.stringify(pipelineJsonSchema(), null, 2)}\n`);
}
