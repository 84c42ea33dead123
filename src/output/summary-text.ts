/** The few lines printed on stdout at the end of a run, from its summary.json. */
import { describeSampleOptions } from '../sample/design.js';
import { specOf } from '../sample/draw.js';
import { formatAmount } from '../limits/spend.js';
import { limitPerMinute } from '@bre-batch/core/rates';
import { SERVICES } from '@bre-batch/core/types';
import { FILES, type RunSummary } from '@bre-batch/formats';
import { describeErrorGroups } from './error-groups.js';

/**
 * `journals`: the journals' names as they are in the folder when this is printed (a finished run's are gzip'ed
 * after its summary.json is written: `results.ndjson.gz`).
 */
export function formatSummary(sum: RunSummary, journals: readonly string[] = [FILES.results, FILES.errors]): string {
  const r = sum.rows;
  const lines: string[] = [];
  lines.push(
    `${sum.dry_run ? 'Dry run' : 'Run'} of pipeline '${sum.pipeline}' ${sum.finished ? 'finished' : 'STOPPED'} in ${sum.seconds} s`,
  );
  if (sum.dry_run)
    lines.push(
      `  rows: ${r.read} read, ${r.valid} valid, ${r.failed_this_session} would fail${sum.dry_run_errors ? ` (see ${sum.dry_run_errors})` : ''}`,
    );
  else
    lines.push(
      `  rows: ${r.succeeded} succeeded, ${r.failed} in errors${r.resumed ? `, ${r.resumed} already done before (resumed)` : ''}${r.out_of_shard ? `, ${r.out_of_shard} in other shards` : ''}${r.not_in_sample ? `, ${r.not_in_sample} not in the sample` : ''}`,
    );
  if (sum.errors_by_field)
    lines.push(
      `  ${sum.dry_run ? 'would fail' : 'errors'}, by field and code: ${describeErrorGroups(sum.errors_by_field)}`,
    );
  if (sum.input_empty)
    lines.push(`  input: no data rows, it held ${sum.input_empty} (--allow-empty: an empty night, nothing to do)`);
  if (sum.sample) {
    const d = sum.sample;
    lines.push(
      `  sample: ${d.sampled} of ${d.population} rows in ${d.strata.length} strat${d.strata.length === 1 ? 'um' : 'a'} (${describeSampleOptions(specOf(d))}); each row carries its stratum and weight N_h/n_h`,
    );
  }
  for (const svc of SERVICES) {
    const st = sum.services[svc];
    if (!st) continue;
    lines.push(
      `  ${svc}: ${st.attempts} calls, ${st.retries} retries, ${st.throttled_429} x 429, achieved ${st.achieved_per_minute ?? '-'}/min (limit ${limitText(st.rate_limit)}), p95 ${st.latency_ms.p95 ?? '-'} ms`,
    );
  }
  for (const [address, a] of Object.entries(sum.addresses ?? {})) {
    const rates = SERVICES.filter((svc) => a.services[svc])
      .map((svc) => `${svc} ${a.services[svc]!.achieved_per_minute ?? '-'}/min`)
      .join(', ');
    const moved = a.rows_moved_away > 0 ? `, ${a.rows_moved_away} rows moved to other addresses` : '';
    lines.push(
      `  from ${address}: ${a.rows} rows, ${a.calls} calls, ${a.throttled_429} x 429, achieved ${rates || '-'}, ${a.failures} failures${moved}${a.circuit_open ? ` (failing: ${a.circuit_open})` : ''}`,
    );
  }
  for (const [stage, counts] of Object.entries(sum.decisions)) {
    const parts = Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .map(([d, n]) => `${d} ${n}`);
    if (parts.length > 0) lines.push(`  decisions (stage ${stage}): ${parts.join(', ')}`);
  }
  for (const [stage, v] of Object.entries(sum.versions ?? {})) {
    if (!v.mixed) continue;
    const parts = Object.entries(v.by_version).map(([version, c]) => `${version} ${c.rows} rows`);
    const change = v.first_answers[1];
    lines.push(
      `  versions (stage ${stage}): MIXED, ${parts.join(', ')}${change ? `; ${change.version} first answered at ${change.at} (row ${change.row})` : ''}`,
    );
  }
  if (r.unexpected_version_not_written)
    lines.push(
      `  not written: ${r.unexpected_version_not_written} answers of another version than --expect-version expects (the resume sends those rows again)`,
    );
  if (r.taken_over_not_sent)
    lines.push(
      `  not sent: ${r.taken_over_not_sent} rows of chunks another worker took over (this worker's lease had lapsed; that worker sends them)`,
    );
  if (sum.spend) lines.push(spendLine(sum.spend));
  if (sum.stopped) lines.push(`  stopped: ${sum.stopped.message}`);
  const open = (r.in_flight_at_stop ?? 0) + (r.not_started ?? 0);
  if (sum.stopped && open > 0)
    lines.push(
      `  not done this session: ${r.in_flight_at_stop ?? 0} rows in flight at the stop, ${r.not_started ?? 0} read but not started (the resume sends them)`,
    );
  if (sum.remaining)
    lines.push(
      `  left: about ${sum.remaining.rows_estimate} rows, ${sum.remaining.time_estimate} at the configured limits`,
    );
  if (!sum.dry_run) lines.push(`  output: ${sum.out}`);
  if (Array.isArray(sum.files) && sum.files.length > 0)
    lines.push(`  files: ${[...journals, ...sum.files].join(', ')}`);
  return lines.join('\n');
}

/** The limit in calls a minute, as the achieved rate beside it; `--rate` as given when it said a second. */
function limitText(given: string): string {
  const perMinute = limitPerMinute(given);
  return perMinute === given ? given : `${perMinute}, --rate ${given}`;
}

/** `spend: 12.30 EUR in all (4.10 EUR this session, 164 calls billed: ...); --max-spend 15.00 EUR, 2.70 EUR left`. */
function spendLine(sp: NonNullable<RunSummary['spend']>): string {
  const money = (units: number) => formatAmount(Math.round(units * 1e6), sp.currency);
  const calls = SERVICES.filter((svc) => sp.services[svc])
    .map((svc) => `${svc} ${sp.services[svc]!.calls_billed_this_session}`)
    .join(', ');
  let cap = '';
  if (sp.max_spend !== null) {
    const over = sp.total - sp.max_spend;
    cap =
      over > 0
        ? `; --max-spend ${money(sp.max_spend)}: over by ${money(over)} (the retries of rows already in flight)`
        : `; --max-spend ${money(sp.max_spend)}, ${money(sp.left ?? 0)} left`;
  }
  return `  spend: ${money(sp.total)} in all (${money(sp.this_session)} this session; calls billed: ${calls || 'none'})${cap}`;
}
