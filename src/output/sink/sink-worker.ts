/**
 * The sink's thread (started by ./sink-thread.ts): the follower and its writer, with their own connection, follow
 * the run's journals into the tables. The run's thread reads how far they have been written from the shared
 * memory stored here after each batch, and is told when writing fails for good.
 */
import { BreError, isBreError } from '@bre-batch/core/errors';
import { FILES, readManifest } from '@bre-batch/formats';
import { SinkFollower } from './follower.js';
import { sinkFailure, type FromSinkThread, type SinkWorkerData, type ToSinkThread } from './sink-thread.js';
import { threadPort } from '../worker-thread.js';
import { sinkUnavailable, SinkWriter } from './writer.js';
import { JobFence } from '../../job/fence.js';
import { retrying } from '../../retry/policy.js';

const port = threadPort<SinkWorkerData, ToSinkThread, FromSinkThread>();
if (port) {
  const { data } = port;
  const fail = (err: unknown) => port.fail(sinkFailure(err));
  const positions = new BigInt64Array(data.positions);
  const log = (line: string) => port.post({ type: 'log', line });
  let writer: SinkWriter | undefined;
  let follower: SinkFollower | undefined;
  let jobFence: JobFence | undefined;
  const store = (f: SinkFollower) => {
    Atomics.store(positions, 0, BigInt(f.positions.results));
    Atomics.store(positions, 1, BigInt(f.positions.errors));
  };
  try {
    writer = await openWriter(data, log);
    const manifest = readManifest(data.dir);
    if (!manifest)
      throw new BreError('OUTPUT_MISMATCH', `${data.dir} has no ${FILES.manifest}: the sink has no folder to follow`);
    const f = await SinkFollower.open(data.dir, manifest, writer, log);
    follower = f;
    if (data.job) {
      const fence = new JobFence(data.job.name, data.job.worker, writer.dialect, data.job.schema, data.job.leaseMs);
      jobFence = fence;
      f.fence = fence;
      f.onBatch = () => {
        const outcome = fence.committed();
        if (outcome && (outcome.lost.length > 0 || outcome.done.length > 0 || outcome.refused > 0))
          port.post({ type: 'job', outcome });
      };
    }
    store(f);
    f.onProgress = () => {
      store(f);
      port.post({ type: 'progress', stats: { ...f.stats }, reconnects: writer!.reconnects });
    };
    f.onFailure = fail;
    f.follow();
    port.post({ type: 'ready' });
  } catch (err) {
    fail(err);
    await writer?.close().catch(() => undefined);
  }
  port.onMessage((m) => {
    // Chunks claimed and lost come before any of their rows is journalled (messages keep their order).
    if (m.type === 'hold') return jobFence?.hold(m.chunk);
    if (m.type === 'drop') return jobFence?.drop(m.chunk);
    const f = follower;
    const w = writer!;
    if (!f) return;
    if (m.type === 'finish') {
      // The connection is closed before the run hears: it ends the thread then.
      f.finish().then(
        async (stats) => {
          store(f);
          await w.close().catch(() => undefined);
          port.post({ type: 'done', stats: { ...stats }, reconnects: w.reconnects });
        },
        async (err: unknown) => {
          await w.close().catch(() => undefined);
          fail(err);
        },
      );
    } else {
      f.stop()
        .finally(() => w.close().catch(() => undefined))
        .finally(() => port.post({ type: 'stopped' }));
    }
  });
}

/**
 * The thread's own writer. The run made and checked the tables a moment ago (../../pipeline/sink.ts), so a
 * failure now is the database going away: tried again for --sink-retry, as a write would be.
 */
function openWriter(data: SinkWorkerData, log: (line: string) => void): Promise<SinkWriter> {
  const unreachable = (err: unknown) =>
    isBreError(err) && (err.code === 'DB_UNREACHABLE' || err.code === 'DB_QUERY_FAILED');
  return retrying(
    {
      forMs: data.target.retryForMs,
      retryable: unreachable,
      giveUp: (err) => sinkUnavailable(data.target, (err as Error).message, err),
    },
    () => SinkWriter.open(data.target, data.shape, log),
  );
}
