/**
 * The local PostgreSQL (127.0.0.1:5432, trust, user postgres) and MariaDB (127.0.0.1:3306, root, no password)
 * for the database tests: each test file makes databases of its own with `freshDatabase` and they are dropped
 * when the file is done. Never a shared server stopped: "the sink goes away" is played by killing the test's
 * own connections (`killConnections`). Without a server the tests are skipped with a message saying so; under
 * CI=true they fail instead (.ci/run starts both servers).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, type it } from 'vitest';
import { gatedIt } from './gate.js';
import { portAnswers } from './tools.js';
import { openSession, parseDbUrl, type DbSession, type DialectName } from '../../src/db/index.js';

const PG_ADMIN_URL = process.env.BRE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MYSQL_ADMIN_URL = process.env.BRE_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/mysql';

const ADMIN: Readonly<Record<DialectName, string>> = { postgres: PG_ADMIN_URL, mysql: MYSQL_ADMIN_URL };

function answers(url: string): Promise<boolean> {
  const u = new URL(url);
  return portAnswers(Number(u.port), 1000, u.hostname);
}

export const available: Readonly<Record<DialectName, boolean>> = {
  postgres: await answers(PG_ADMIN_URL),
  mysql: await answers(MYSQL_ADMIN_URL),
};
const gates: Readonly<Record<DialectName, typeof it>> = {
  postgres: gatedIt(
    available.postgres,
    `no postgres server answers at ${ADMIN.postgres}`,
    'npm test as root starts it',
  ),
  mysql: gatedIt(available.mysql, `no mysql server answers at ${ADMIN.mysql}`, 'npm test as root starts it'),
};

/** `it` when the dialect's server answers; under CI=true without it, a test that fails saying so; else `it.skip`. */
export function itDb(dialect: DialectName): typeof it {
  return gates[dialect];
}

const made: { dialect: DialectName; name: string }[] = [];

function withDatabase(adminUrl: string, name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.href;
}

/** An admin session on the dialect's server (the caller closes it). */
export async function adminSession(dialect: DialectName): Promise<DbSession> {
  return openSession(parseDbUrl(ADMIN[dialect], { flag: 'test' }));
}

/** A new, empty database on the dialect's server; its URL (no password). Dropped after the test file. */
export async function freshDatabase(dialect: DialectName, prefix = 'bre_test'): Promise<string> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = await adminSession(dialect);
  try {
    await admin.query(`CREATE DATABASE ${dialect === 'postgres' ? `"${name}"` : `\`${name}\``}`);
  } finally {
    await admin.close();
  }
  made.push({ dialect, name });
  return withDatabase(ADMIN[dialect], name);
}

/** Kills every other connection to `database` (PostgreSQL: pg_terminate_backend; MariaDB: KILL). */
export async function killConnections(dialect: DialectName, database: string): Promise<number> {
  const admin = await adminSession(dialect);
  try {
    if (dialect === 'postgres') {
      const r = await admin.query<{ ok: boolean }>(
        'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      );
      return r.rows.length;
    }
    const r = await admin.query<{ id: string | number }>(
      'SELECT id FROM information_schema.PROCESSLIST WHERE db = ? AND id <> CONNECTION_ID()',
      [database],
    );
    for (const { id } of r.rows) await admin.query(`KILL ${Number(id)}`).catch(() => undefined);
    return r.rows.length;
  } finally {
    await admin.close();
  }
}

afterAll(async () => {
  if (process.env.BRE_KEEP_TEST_OUTPUT) return;
  for (const { dialect, name } of made.splice(0)) {
    await killConnections(dialect, name).catch(() => undefined);
    const admin = await adminSession(dialect);
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${dialect === 'postgres' ? `"${name}"` : `\`${name}\``}`);
    } finally {
      await admin.close();
    }
  }
});
