import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pipelineJsonSchema } from '../../src/config/json-schema.js';

describe('pipelines/pipeline.schema.json', () => {
  it('is the schema the loader validates with (regenerate: node dist/config/json-schema.js > pipelines/pipeline.schema.json)', () => {
    const committed = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', '..', 'pipelines', 'pipeline.schema.json'), 'utf8'),
    );
    expect(committed).toEqual(pipelineJsonSchema());
    expect(committed.properties.stages.items.properties.kind.enum).toEqual([
      'aa_fetch',
      'aa_report',
      'bsa_fetch',
      'bureau_features',
      'workflow',
    ]);
  });
});
