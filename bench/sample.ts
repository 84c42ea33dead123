/**
 * The counting pass of `run --sample` (src/pipeline/sample.ts): what the two local reads that draw a sample add
 * before the first call. Measured as `run --plan` (which calls nothing) with and without the sample on the same
 * generated champion_challenger input: without, the plan reads the input once; with, three times (the two reads
 * of the draw, then the plan's own count). The difference is the draw; process start-up cancels out. Each
 * variant runs `rounds` times, the fastest counted (the machine is shared).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sampleCsv } from '../scripts/champion-challenger-sample.js';
import { runCli } from './harness.js';

export interface SampleDrawFigures {
  readonly rows: number;
  readonly strata: number;
  readonly sampled: number;
  /** Fastest `--plan` without and with the sample, s. */
  readonly plan_s: number;
  readonly plan_with_sample_s: number;
  /** The draw: the two reads, s, and rows a second over both. */
  readonly draw_s: number;
  readonly draw_rows_per_s: number;
  /** What the sample saves at the documented limits (from the plans). */
  readonly plan_text: string;
}

export async function benchSampleDraw(o: {
  readonly dir: string;
  readonly rows: number;
  readonly rounds: number;
}): Promise<SampleDrawFigures> {
  const input = join(o.dir, `cc-${o.rows}.csv`);
  writeFileSync(input, sampleCsv(o.rows));
  const base = ['run', 'champion_challenger', '--input', input, '--plan'];
  const sample = ['--sample-share', '0.05', '--stratify-by', 'application_date:month,channel'];
  let plain = Infinity;
  let sampled = Infinity;
  let text = '';
  for (let i = 0; i < o.rounds; i += 1) {
    const a = await runCli(base, {});
    const b = await runCli([...base, ...sample], {});
    if (a.code !== 0 || b.code !== 0) throw new Error(`--plan failed: ${a.stderr}${b.stderr}`);
    plain = Math.min(plain, a.seconds);
    sampled = Math.min(sampled, b.seconds);
    text = b.stdout;
  }
  const m = /a sample of ([\d,]+) of [\d,]+ rows, ([\d,]+) strata/.exec(text);
  const num = (s: string | undefined) => Number((s ?? 'NaN').replace(/,/g, ''));
  const draw = Math.max(0, sampled - plain);
  return {
    rows: o.rows,
    strata: num(m?.[2]),
    sampled: num(m?.[1]),
    plan_s: round(plain),
    plan_with_sample_s: round(sampled),
    draw_s: round(draw),
    draw_rows_per_s: draw > 0 ? Math.round((2 * o.rows) / draw) : 0,
    plan_text: text.trim(),
  };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
