/**
 * The database sink: the output folder's journals written into tables, exactly once (./follower.ts follows
 * the journals, ./writer.ts writes each batch through ./batch.ts in a transaction with the folder's progress,
 * into the tables ./schema.ts made or checked). What differs per database is in src/db/ (each dialect's `sink`
 * statements and what its errors mean).
 */
export { folderId, SinkFollower } from './follower.js';
export { SinkWriter, type FolderId, type SinkShape, type SinkTarget } from './writer.js';
export { SinkThread } from './sink-thread.js';
