/**
 * PostgreSQL's fast way to upsert many rows, which the sink takes for its batches: the rows go by COPY (text
 * format) into a temporary table with the target's columns, then one INSERT ... SELECT ... ON CONFLICT moves
 * them; into bre-batch's own table, whose rows are most likely new, by COPY straight into it, the temporary
 * table only once a key turns out to be there already. The server parses COPY's lines several times faster
 * than a multi-row INSERT's bind parameters (a statement of tens of thousands of placeholders is parsed and
 * planned each time), and the driver has no parameters to encode. The same upsert as the generic statements:
 * one row per key, every column written.
 *
 * Inside the caller's transaction: the temporary table is dropped at its commit, or with its rollback; a
 * straight COPY that met a key is undone to its savepoint.
 */
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { sessionError } from './failure.js';

/** A value as COPY's text format writes it (NULL is `\N`; a backslash, tab, newline or CR is escaped). */
function copyValue(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  switch (typeof v) {
    case 'string':
      return ESCAPED.test(v) ? v.replace(ESCAPES, (c) => ESCAPE_OF[c]) : v;
    case 'number':
    case 'bigint':
      return String(v);
    case 'boolean':
      return v ? 't' : 'f';
    default: {
      // As node-postgres sends an object parameter: its JSON.
      const text = JSON.stringify(v);
      return ESCAPED.test(text) ? text.replace(ESCAPES, (c) => ESCAPE_OF[c]) : text;
    }
  }
}

const ESCAPED = /[\\\t\n\r]/;
const ESCAPES = /[\\\t\n\r]/g;
const ESCAPE_OF: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Bytes handed to the COPY stream at a time: the server parses one piece while the next is made. */
const PIECE_BYTES = 256 * 1024;

let staged = 0;

/** Whether the server compresses with LZ4 (PostgreSQL 14 and later, built with it), by connection. */
const lz4 = new WeakMap<pg.Client, boolean>();

/**
 * LZ4 for the large values this transaction writes (a `result` past about 2 KB is compressed): it costs the
 * server about half of what its default (pglz) does, and reading them is the same to every client.
 */
async function compressWithLz4(client: pg.Client): Promise<string> {
  let has = lz4.get(client);
  if (has === undefined) {
    const r = await client.query<{ lz4: boolean }>(
      `SELECT 'lz4' = ANY(enumvals) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'`,
    );
    has = r.rows[0]?.lz4 === true;
    lz4.set(client, has);
  }
  return has ? 'SET LOCAL default_toast_compression = lz4; ' : '';
}

export interface CopyUpsert {
  /** The target, quoted (schema and all). */
  readonly table: string;
  readonly columns: readonly string[];
  readonly quote: (id: string) => string;
  /** INSERT INTO target (columns) SELECT columns FROM `source` ON CONFLICT ... (the dialect's upsert). */
  readonly upsertFrom: (source: string) => string;
  /**
   * The rows are most likely new keys (bre-batch's own table): COPY straight into it first, and only when a key
   * is already there (a unique violation, the COPY undone to its savepoint) by the temporary table, which this
   * connection then keeps to for the table.
   */
  readonly likelyNew: boolean;
}

/** Tables a straight COPY met a key already in, by connection: they go by the temporary table from then on. */
const conflicted = new WeakMap<pg.Client, Set<string>>();

/** Upserts `rows` (values in the order of `columns`) into the target, inside the transaction that is open. */
export async function copyUpsert(
  client: pg.Client,
  u: CopyUpsert,
  rows: readonly (readonly unknown[])[],
): Promise<void> {
  const cols = u.columns.map(u.quote).join(', ');
  // Statements with no parameters and no rows back go together, one round trip (each costs both sides a wake-up).
  let first = '';
  await run(client, async (c) => {
    first = await compressWithLz4(c);
  });
  if (u.likelyNew && !conflicted.get(client)?.has(u.table)) {
    // A straight COPY writes each row once, where the temporary table writes it twice and reads it back.
    await run(client, `${first}SAVEPOINT bre_sink_copy`);
    first = '';
    try {
      await copyRows(client, `COPY ${u.table} (${cols}) FROM STDIN`, rows);
      await run(client, 'RELEASE SAVEPOINT bre_sink_copy');
      return;
    } catch (err) {
      if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
      await run(client, 'ROLLBACK TO SAVEPOINT bre_sink_copy');
      if (!conflicted.has(client)) conflicted.set(client, new Set());
      conflicted.get(client)!.add(u.table);
    }
  }
  staged += 1;
  const stage = `pg_temp.${u.quote(`bre_sink_stage_${staged}`)}`;
  // The columns' types are the target's own (a user's table's too); no constraint is copied. Rows are not
  // compressed or moved out of line in it (toast_tuple_target): that is done once, in the target.
  await run(
    client,
    `${first}CREATE TEMPORARY TABLE ${stage} WITH (toast_tuple_target = 8160) ON COMMIT DROP AS SELECT ${cols} FROM ${u.table} WITH NO DATA`,
  );
  await copyRows(client, `COPY ${stage} (${cols}) FROM STDIN`, rows);
  await run(client, u.upsertFrom(stage));
}

const UNIQUE_VIOLATION = '23505';

/** COPY ... FROM STDIN of the rows, in COPY's text format. */
async function copyRows(client: pg.Client, sql: string, rows: readonly (readonly unknown[])[]): Promise<void> {
  // Loaded with the first COPY, as postgres.ts loads pg with the first connection.
  const copyStreams = (await import('pg-copy-streams')).default;
  const stream = client.query(copyStreams.from(sql));
  let failure: unknown;
  // Kept for the stream's life: a failure after the one awaited below must not be an unhandled 'error'.
  stream.on('error', (err) => (failure ??= err));
  const done = finished(stream);
  done.catch(() => undefined);
  // One piece at a time, each written before the next is made: the server parses while the next is made, and
  // after a refusal nothing more is written (pg-copy-streams would write it to a connection it has let go).
  const send = (piece: Buffer) =>
    new Promise<void>((resolve) => {
      const refused = () => resolve();
      stream.once('error', refused);
      stream.write(piece, () => {
        stream.off('error', refused);
        resolve();
      });
    });
  // Each line written into the piece's bytes as it is made: strings joined into a piece cost several times
  // more to turn into bytes (a fresh buffer each piece: the last one may still wait in the socket).
  let piece = Buffer.allocUnsafe(PIECE_BYTES);
  let at = 0;
  const parts: string[] = [];
  for (const row of rows) {
    if (failure) break;
    parts.length = row.length;
    for (let i = 0; i < row.length; i += 1) parts[i] = copyValue(row[i]);
    const line = parts.join('\t');
    // At most 3 bytes a UTF-16 unit, and the newline.
    const most = line.length * 3 + 1;
    if (at + most > piece.length) {
      if (at > 0) await send(piece.subarray(0, at));
      if (failure) break;
      piece = Buffer.allocUnsafe(Math.max(PIECE_BYTES, most));
      at = 0;
    }
    at += piece.write(line, at);
    piece[at] = 0x0a;
    at += 1;
  }
  if (!failure && at > 0) await send(piece.subarray(0, at));
  if (!failure) stream.end();
  try {
    await done;
  } catch (err) {
    throw sessionError(err);
  }
}

async function run(client: pg.Client, work: string | ((client: pg.Client) => Promise<void>)): Promise<void> {
  try {
    if (typeof work === 'string') await client.query(work);
    else await work(client);
  } catch (err) {
    throw sessionError(err);
  }
}
