/**
 * Several hosts, one job (`run --job NAME --sink URL`): the job's state in the sink's database (./schema.ts,
 * ./store.ts), a worker's claims and leases (./member.ts), the fence each sink batch passes (./fence.ts), the
 * job's status and report (./status.ts), a file input's chunks (./file-chunks.ts).
 */
export { JobStore, type ChunkPlan, type ClaimedChunk } from './store.js';
export { JobMember, newWorkerId } from './member.js';
export { definitionDifferences, mismatchError, type JobDefinition } from './definition.js';
export { checkSplittable, fileChunkRows, fileSeen, splitFileChunks, type FileSeen } from './file-chunks.js';
