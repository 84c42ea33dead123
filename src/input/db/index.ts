/** A database as the input (`--input postgres://... --table NAME | --query SQL`): see ./source.ts. */
export { DbSource, DEFAULT_PAGE_ROWS, DEFAULT_RETRY_FOR_MS, keyText, type DbSourceOptions, type SourceStart, type SourceStats } from './source.js';
export { describeRelation, parseRelation, sourceIdentity, splitQualifiedName, tableName } from './relation.js';
export { endsGroup, splitPage, type PageSplit } from './page.js';
