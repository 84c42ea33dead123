/**
 * Several hosts, one job (`run --job NAME --sink URL`): the job's state in the sink's database (./schema.ts,
 * ./store.ts), a worker's claims and leases (./member.ts), the fence each sink batch passes (./fence.ts), the
 * job's status and report (./status.ts).
 */
export { JobStore, type ChunkPlan, type ClaimedChunk, type JobRow } from './store.js';
export { JobMember, newWorkerId, DEFAULT_HEARTBEAT_MS, DEFAULT_LEASE_MS, type ChunkListener } from './member.js';
export { JobFence, type FenceOutcome, type HeldChunk } from './fence.js';
export { definitionDifferences, mismatchError, type JobDefinition } from './definition.js';
export { jobTables, JOBS_TABLE, CHUNKS_TABLE, WORKERS_TABLE } from './schema.js';
