/** The names of the files in an output folder (docs/output.md). */
export const FILES = {
  manifest: 'manifest.json',
  results: 'results.ndjson',
  resultsCsv: 'results.csv',
  resultsParquet: 'results.parquet',
  errors: 'errors.ndjson',
  errorsParquet: 'errors.parquet',
  retrying: 'errors.retrying.ndjson',
  transactions: 'transactions.csv',
  transactionsParquet: 'transactions.parquet',
  report: 'report.html',
  summary: 'summary.json',
  secrets: 'secrets.ndjson',
  dryRunErrors: 'dry-run-errors.ndjson',
  state: '.state',
  txJournal: '.state/transactions.ndjson',
  /** The column union of the results files, journalled as fields appear (src/output/journal/column-journal.ts). */
  columns: '.state/columns.ndjson',
  /** The run's time series, for report.html (src/output/timeline-store.ts). */
  timeline: '.state/timeline.ndjson',
  /** What results.csv and results.parquet hold, for the next end of the run (src/output/spool/results-index.ts). */
  resultsIndex: '.state/results-index.bin',
  /** What the folder's calls cost, session by session (src/output/spend-file.ts). */
  spend: '.state/spend.json',
  /** A database input's resume point: every row up to it is done (packages/formats/src/frontier.ts). */
  frontier: '.state/source-frontier.json',
} as const;

/** transactions.csv's header, in order. */
export const TRANSACTION_COLUMNS = [
  'key',
  'source',
  'account',
  'txn_id',
  'timestamp',
  'value_date',
  'type',
  'amount',
  'balance',
  'mode',
  'narration',
] as const;
