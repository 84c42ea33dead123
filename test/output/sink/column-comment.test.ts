/**
 * A column bre-batch adds to its own table on PostgreSQL comes with its comment in one transaction: a worker
 * killed between the two (here: the comment's statement fails as a kill would cut it) leaves no column that
 * no comment names, which the next worker would take for a user's; that worker adds it, commented.
 */
import { beforeAll, describe, expect } from 'vitest';
import { dialectOf, openSession, parseDbUrl, type DbSession } from '../../../src/db/index.js';
import { SinkSchema } from '../../../src/output/sink/schema.js';
import { sinkNames } from '../../../src/output/sink/tables.js';
import { available, freshDatabase, itDb } from '../../helpers/db.js';
import { columnComments, openWriter, SHAPE, sinkTarget, tableColumns } from '../../helpers/sink.js';

const DECIDED = { header: 'decision.decision', kind: 'string' } as const;
const LATER = { header: 'decision.reason_code', kind: 'string' } as const;

/** The session as a kill between a column and its comment leaves it: the comment's statement never runs. */
function cutBeforeComments(session: DbSession): DbSession {
  return new Proxy(session, {
    get(target, prop) {
      if (prop === 'query')
        return (sql: string, params?: readonly unknown[]) =>
          /^COMMENT ON COLUMN/i.test(sql)
            ? Promise.reject(new Error('killed between the column and its comment'))
            : target.query(sql, params as unknown[]);
      const v = Reflect.get(target, prop);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

describe.runIf(available.postgres || process.env.CI === 'true')('a new column and its comment', () => {
  let url: string;
  beforeAll(async () => {
    url = await freshDatabase('postgres');
  });

  itDb('postgres')('are added together or not at all, then by the next worker with the comment', async () => {
    const first = await openWriter(url, 'night', { declared: [DECIDED] });
    await first.close();
    const before = new Set((await tableColumns(url, 'night')).keys());

    const db = parseDbUrl(url, { flag: '--sink' });
    const dialect = dialectOf(db);
    const session = await openSession(db);
    try {
      const prepared = SinkSchema.prepare(
        cutBeforeComments(session),
        dialect,
        sinkTarget(url, 'night'),
        { ...SHAPE, declared: [DECIDED, LATER] },
        sinkNames('night', dialect.maxIdentifier),
      );
      await expect(prepared).rejects.toThrow('killed between the column and its comment');
    } finally {
      await session.close();
    }
    expect(new Set((await tableColumns(url, 'night')).keys()), 'the column went with its comment').toEqual(before);

    const next = await openWriter(url, 'night', { declared: [DECIDED, LATER] });
    await next.close();
    const added = [...(await tableColumns(url, 'night')).keys()].filter((c) => !before.has(c));
    expect(added).toHaveLength(1);
    expect((await columnComments(url, 'night')).get(added[0])).toBe(LATER.header);
  });
});
