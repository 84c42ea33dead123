/**
 * The output folder format, owned here and nowhere else: file names, the schemas of manifest.json, a
 * results line, an error line and summary.json, and their readers. The runner, merge, compare and the
 * bench read and write folders through this module.
 */
export { FILES, TRANSACTION_COLUMNS } from './files.js';
export {
  manifestSchema,
  readManifest,
  sampleDesignSchema,
  writeManifest,
  type Manifest,
  type ManifestSample,
  type ManifestSession,
} from './manifest.js';
export { errorTableColumns, PROVENANCE_COLUMNS, TRANSACTION_TABLE } from './tables.js';
export { readFrontier, writeFrontier } from './frontier.js';
export {
  errorLines,
  errorLineSchema,
  isErrorLine,
  isResultLine,
  resultLineBatches,
  resultLineSchema,
  type ErrorLine,
  type ResultLine,
} from './journal.js';
export {
  loadRunSummary,
  readRunSummary,
  runSummarySchema,
  versionsSummarySchema,
  writeSummary,
  type MergedSummary,
  type RunSummary,
  type VersionsSummary,
} from './summary.js';
