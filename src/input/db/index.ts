/** A database as the input (`--input postgres://... --table NAME | --query SQL`): see ./source.ts. */
export { DbSource, DEFAULT_PAGE_ROWS, type DbSourceOptions, type SourceStats } from './source.js';
export { describeRelation, parseRelation, sourceIdentity, splitQualifiedName, tableName } from './relation.js';
