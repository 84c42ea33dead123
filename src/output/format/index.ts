/**
 * The output folder format, owned here and nowhere else: file names, the schemas of manifest.json, a
 * results line, an error line and summary.json, and their readers. The runner, merge, compare and the
 * bench read and write folders through this module.
 */
export { FILES, TRANSACTION_COLUMNS } from './files.js';
export { readJsonFile, writeJsonFile, type JsonFileRead } from './json-file.js';
export { manifestSchema, readManifest, sampleDesignSchema, writeManifest, type Manifest, type ManifestSample, type ManifestSource } from './manifest.js';
export { errorTableColumns, TRANSACTION_TABLE, type TypedColumn } from './tables.js';
export { readFrontier, writeFrontier, type Frontier } from './frontier.js';
export {
  errorLines, errorLineSchema, fieldProblemSchema, isErrorLine, isResultLine, resultLineBatches, resultLineSchema, secretsLineSchema,
  type ErrorLine, type ResultLine, type SecretsLine,
} from './journal.js';
export {
  callStatsShape, decisionCountsSchema, loadRunSummary, mergedSummarySchema, readRunSummary, runSummarySchema, serviceSummarySchema, stageSummarySchema,
  writeSummary, type MergedSummary, type RunSummary,
} from './summary.js';
