/** The names of the files in an output folder (README: Output folder). */
export const FILES = {
  manifest: 'manifest.json',
  results: 'results.ndjson',
  resultsCsv: 'results.csv',
  errors: 'errors.ndjson',
  retrying: 'errors.retrying.ndjson',
  transactions: 'transactions.csv',
  summary: 'summary.json',
  secrets: 'secrets.ndjson',
  dryRunErrors: 'dry-run-errors.ndjson',
  state: '.state',
  txJournal: '.state/transactions.ndjson',
} as const;

/** transactions.csv's header, in order. */
export const TRANSACTION_COLUMNS = ['key', 'source', 'account', 'txn_id', 'timestamp', 'value_date', 'type', 'amount', 'balance', 'mode', 'narration'] as const;
