/** docs/reference/metrics.md: every Prometheus metric of a run, as src/metrics/prometheus.ts declares it. */
import { RunMetrics } from '../../../src/metrics/prometheus.js';
import { cell, code, table } from './markdown.js';

const LABELS: Readonly<Record<string, string>> = {
  pipeline: "the pipeline's name",
  shard: '`K/N` of a sharded run, empty otherwise',
  service: '`workflow`, `bureau` or `account`',
  address: 'the source address, with several `--local-address` (empty otherwise)',
  outcome: '`read`, `succeeded` or `failed`',
  state: '`running`, `finished`, `stopped` or `failed`',
  currency: 'the currency of `--price`',
};

export function metricsPage(): string[] {
  const defs = RunMetrics.definitions();
  const labels = [...new Set(defs.flatMap((d) => d.labels))];
  return [
    '# Metrics',
    '',
    'Every metric a run writes (`--metrics-file`), serves (`--metrics-port`) and pushes (`--pushgateway`), in',
    "Prometheus' text format, as the program declares it. How to collect them and alert on them:",
    '[Monitoring](../operations/monitoring.md#metrics).',
    '',
    ...table(
      ['metric', 'type', 'labels', 'help'],
      defs.map((d) => [code(d.name), d.type, d.labels.map(code).join(', '), cell(d.help)]),
    ),
    '',
    '## Labels',
    '',
    ...table(
      ['label', 'value'],
      labels.map((l) => [code(l), LABELS[l] ?? '']),
    ),
  ];
}
