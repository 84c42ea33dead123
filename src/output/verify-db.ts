/**
 * `bre-batch verify` of a folder whose input was a database table or query (./verify.ts does the rest): the
 * rows read again as the run read them (src/input/db/, in key order, --limit and --shard applied), and their keys
 * set against the keys of the folder's results and errors lines: every row once (a key held by several rows is
 * in errors once per row, a row without a key once among the keyless), none that the input does not hold, and
 * as many rows. The folder's keys are held in memory while the input is read (a few dozen bytes a key).
 */
import { dialectOf, parseDbUrl, type DbUrl } from '../db/index.js';
import { BreError } from '@bre-batch/core/errors';
import { DbSource, describeRelation, parseRelation, sourceIdentity } from '../input/db/index.js';
import { lineKey, shardOf } from '../input/shard.js';
import type { Manifest } from '@bre-batch/formats';

/** The keys of a folder's lines: how many lines each key has, and how many lines have none. */
export class FolderKeys {
  readonly counts = new Map<string, number>();
  nulls = 0;

  add(key: string | null): void {
    if (key === null) this.nulls += 1;
    else this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
}

export interface DbCheck {
  /** What was checked, and each difference (as VerifyReport's). */
  readonly checked: string[];
  readonly problems: string[];
  readonly notes: string[];
}

const EXAMPLES = 10;

const listed = (keys: readonly string[], total: number) =>
  `${keys
    .slice(0, EXAMPLES)
    .map((k) => JSON.stringify(k))
    .join(', ')}${total > EXAMPLES ? ` and ${total - EXAMPLES} more` : ''}`;

/**
 * The URL to read the input from: `given` (verify --input, for what the record leaves out: parameters such as
 * TLS settings, a password in an env: URL), which must name the recorded server, database and user; else the
 * recorded one (its password, if any, from where the run found it: PGPASSWORD, ~/.pgpass, MYSQL_PWD).
 */
export function inputUrl(m: Manifest, given: DbUrl | undefined): DbUrl {
  const source = m.input.source!;
  if (!given) return parseDbUrl(source.url, { flag: 'the recorded input' });
  const relation = relationOf(m, given);
  const named = sourceIdentity(given, relation).url;
  if (named !== source.url)
    throw new BreError('USAGE', `Expected --input to name the database the run read, ${source.url}; got ${named}`, {
      field: 'input',
    });
  return given;
}

function relationOf(m: Manifest, url: DbUrl) {
  const source = m.input.source!;
  return parseRelation(
    source.table !== null ? { table: source.table } : { query: source.query ?? '' },
    dialectOf(url).name,
  );
}

/**
 * The input's rows against `keys` (taken from the folder's lines; emptied as rows are matched). `finished`: rows
 * not in the folder are differences (else a resume does them); `sampled`: the rows it had to do are its sample,
 * which is not drawn again, so only rows the input does not hold are looked for.
 */
export async function checkDbRows(
  m: Manifest,
  url: DbUrl,
  keys: FolderKeys,
  o: { readonly finished: boolean; readonly sampled: boolean },
): Promise<DbCheck> {
  const r: DbCheck = { checked: [], problems: [], notes: [] };
  let held = keys.nulls;
  for (const n of keys.counts.values()) held += n;
  const relation = relationOf(m, url);
  const shard = m.shard && !m.merged_from ? /^(\d+)\/(\d+)$/.exec(m.shard) : null;
  let source: DbSource;
  try {
    source = await DbSource.open({
      url,
      relation,
      key: m.key,
      // The key column as the run matched it: its own name, else the one name that differs only in case.
      header: (h) => {
        if (h.names.includes(m.key)) return h.names;
        const same = h.names.filter((n) => n.toLowerCase() === m.key.toLowerCase());
        return same.length === 1 ? h.names.map((n) => (n === same[0] ? m.key : n)) : h.names;
      },
    });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    r.problems.push(`input ${m.input.source!.url}: cannot be read again (${why})`);
    return r;
  }
  let read = 0;
  let missing = 0;
  const missingKeys: string[] = [];
  let missingNulls = 0;
  try {
    outer: for await (const batch of source.rows()) {
      for (const row of batch) {
        if (m.limit !== null && row.row > m.limit) break outer;
        const key = lineKey(row, m.key);
        if (shard && shardOf(key, row.row, Number(shard[2])) !== Number(shard[1])) continue;
        read += 1;
        if (key === null) {
          if (keys.nulls > 0) keys.nulls -= 1;
          else missingNulls += 1;
          continue;
        }
        const n = keys.counts.get(key) ?? 0;
        if (n > 1) keys.counts.set(key, n - 1);
        else if (n === 1) keys.counts.delete(key);
        else {
          missing += 1;
          if (missingKeys.length < EXAMPLES) missingKeys.push(key);
        }
      }
    }
  } finally {
    await source.close();
  }
  // `table applicants (shard 1/2)` in the differences; where it was read (its URL) in what was checked.
  const what = `${describeRelation(relation)}${shard ? ` (shard ${m.shard})` : ''}`;
  if (o.sampled)
    r.notes.push(
      'a sampled run: the rows it had to do are its sample, which verify does not draw again; keys outside the input are still looked for',
    );
  else if (!o.finished)
    r.notes.push('the run has not finished: rows not done yet are not differences (a resume does them)');
  else {
    if (missing > 0)
      r.problems.push(`${missing} keys of ${what} are in neither results nor errors: ${listed(missingKeys, missing)}`);
    if (missingNulls > 0)
      r.problems.push(`${missingNulls} rows of ${what} without a key are in neither results nor errors`);
    if (read !== held) r.problems.push(`${what} holds ${read} rows now; the folder's results and errors ${held}`);
  }
  const extra = [...keys.counts].flatMap(([k, n]) => Array<string>(n).fill(k));
  if (extra.length > 0)
    r.problems.push(
      `${extra.length} rows of the folder have keys that ${what} does not hold: ${listed(extra, extra.length)}`,
    );
  if (keys.nulls > 0)
    r.problems.push(`${keys.nulls} rows of the folder without a key are more than ${what} holds without one`);
  r.checked.push(
    `${source.description}${shard ? ` (shard ${m.shard})` : ''}${m.limit !== null ? ` up to --limit ${m.limit}` : ''}: ${read} rows read again, their keys each once in results or errors`,
  );
  return r;
}
