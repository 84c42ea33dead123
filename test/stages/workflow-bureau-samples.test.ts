/** Every shipped sample input of a workflow / bureau pipeline prepares without a field error. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/pipeline.js';
import { readRows } from '@bre-batch/formats/input/read';
import { getStageKind } from '../../src/stages/index.js';
import { context, SAMPLES } from './helpers.js';

const PIPELINES = [
  'location',
  'bureau_mobile',
  'bank',
  'bureau_mobile_bank',
  'repeat',
  'bureau_features',
  'rescore',
  'champion_challenger',
];

function sampleOf(name: string): string | undefined {
  for (const ext of ['.csv', '.ndjson']) if (existsSync(join(SAMPLES, name + ext))) return join(SAMPLES, name + ext);
  return undefined;
}

describe('shipped samples prepare cleanly', () => {
  it.each(PIPELINES)('%s', async (name) => {
    const pipeline = loadPipeline(name);
    const input = sampleOf(name);
    expect(input, `samples/${name}.csv or .ndjson`).toBeDefined();
    const problems: string[] = [];
    let rows = 0;
    for await (const r of readRows(input!)) {
      rows++;
      for (const st of pipeline.stages) {
        const kind = getStageKind(st.kind)!;
        if (kind.service === 'account') continue;
        const res = await kind.prepare(r, st, context());
        if (!res.ok) problems.push(`row ${r.row} ${st.id}: ${res.errors.map((e) => e.message).join('; ')}`);
      }
    }
    expect(rows).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });
});
