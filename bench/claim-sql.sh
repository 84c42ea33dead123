#!/bin/bash
# The database's cost of one chunk claim, the statement before and after the claim read the partial indexes
# (src/job/store.ts, src/job/schema.ts): on one table of 200,000 chunks of an earlier job left done and a job of
# 5,000 waiting chunks, pgbench makes 2,000 claims with each (a transaction each, its commit included), two
# rounds in turn. The figure is in the README's Performance table. Needs psql and pgbench against
# BRE_BENCH_PG_HOST and BRE_BENCH_PG_USER (default 127.0.0.1 and postgres, trust); makes and drops the database
# bre_claim_sql.
set -euo pipefail
PG=(-h "${BRE_BENCH_PG_HOST:-127.0.0.1}" -U "${BRE_BENCH_PG_USER:-postgres}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/setup.sql" <<'SQL'
CREATE TABLE bre_batch_chunks (job text NOT NULL, chunk integer NOT NULL, first_row bigint NOT NULL, rows integer NOT NULL, after_key text, byte_start bigint, byte_end bigint, state text NOT NULL DEFAULT 'waiting', holder text, token bigint NOT NULL DEFAULT 0, lease_until timestamptz, claimed_at timestamptz, committed bytea, position integer NOT NULL DEFAULT 0, rows_results integer NOT NULL DEFAULT 0, rows_errors integer NOT NULL DEFAULT 0, sent_to integer NOT NULL DEFAULT 0, prev_sent integer NOT NULL DEFAULT 0, resent integer NOT NULL DEFAULT 0, takeovers integer NOT NULL DEFAULT 0, done_at timestamptz, done_by text, PRIMARY KEY (job, chunk));
INSERT INTO bre_batch_chunks (job, chunk, first_row, rows, state) SELECT 'history', g, g*500+1, 500, 'done' FROM generate_series(0, 199999) g;
INSERT INTO bre_batch_chunks (job, chunk, first_row, rows) SELECT 'j', g, g*500+1, 500 FROM generate_series(0, 4999) g;
VACUUM ANALYZE bre_batch_chunks;
SQL
cat >"$dir/reset.sql" <<'SQL'
UPDATE bre_batch_chunks SET state = 'waiting', holder = NULL, lease_until = NULL WHERE job = 'j';
VACUUM ANALYZE bre_batch_chunks;
SQL
# Before: one scan of the job's chunks, sorted, in one statement.
cat >"$dir/before.sql" <<'SQL'
UPDATE bre_batch_chunks c SET state = 'held', holder = 'w', token = c.token + 1, lease_until = now() + 60000 * interval '1 millisecond', claimed_at = now(),
  takeovers = c.takeovers + (CASE WHEN c.state = 'held' THEN 1 ELSE 0 END), prev_sent = CASE WHEN c.state = 'held' THEN GREATEST(c.sent_to, c.prev_sent) ELSE c.prev_sent END, sent_to = 0
FROM (SELECT job, chunk, state FROM bre_batch_chunks WHERE job = 'j' AND (state = 'waiting' OR (state = 'held' AND lease_until < now())) ORDER BY (state = 'held'), chunk LIMIT 1 FOR UPDATE SKIP LOCKED) s
WHERE c.job = s.job AND c.chunk = s.chunk RETURNING c.chunk, c.token, c.first_row, c.rows, c.after_key, c.byte_start, c.byte_end, c.committed, c.prev_sent, s.state AS was;
SQL
# After: the lowest held chunk whose lease lapsed, else the lowest waiting one, each from its partial index.
cat >"$dir/after.sql" <<'SQL'
WITH l AS (SELECT chunk, 'held' AS was FROM bre_batch_chunks WHERE job = 'j' AND state = 'held' AND lease_until < now() ORDER BY chunk LIMIT 1 FOR UPDATE SKIP LOCKED),
  w AS (SELECT chunk, 'waiting' AS was FROM bre_batch_chunks WHERE job = 'j' AND state = 'waiting' AND NOT EXISTS (SELECT 1 FROM l) ORDER BY chunk LIMIT 1 FOR UPDATE SKIP LOCKED),
  s AS (SELECT chunk, was FROM l UNION ALL SELECT chunk, was FROM w)
UPDATE bre_batch_chunks c SET state = 'held', holder = 'w', token = c.token + 1, lease_until = now() + 60000 * interval '1 millisecond', claimed_at = now(),
  takeovers = c.takeovers + (CASE WHEN c.state = 'held' THEN 1 ELSE 0 END), prev_sent = CASE WHEN c.state = 'held' THEN GREATEST(c.sent_to, c.prev_sent) ELSE c.prev_sent END, sent_to = 0
FROM s WHERE c.job = 'j' AND c.chunk = s.chunk RETURNING c.chunk, c.token, c.first_row, c.rows, c.after_key, c.byte_start, c.byte_end, c.committed, c.prev_sent, s.was;
SQL
psql -q "${PG[@]}" -c "DROP DATABASE IF EXISTS bre_claim_sql" -c "CREATE DATABASE bre_claim_sql"
psql -q "${PG[@]}" -d bre_claim_sql -f "$dir/setup.sql"
claims() { pgbench -n "${PG[@]}" -f "$1" -t 2000 bre_claim_sql 2>/dev/null | grep 'latency average'; }
for round in 1 2; do
  psql -q "${PG[@]}" -d bre_claim_sql -c "DROP INDEX IF EXISTS bre_batch_chunks_waiting" -c "DROP INDEX IF EXISTS bre_batch_chunks_held" -f "$dir/reset.sql"
  echo "round $round, before: $(claims "$dir/before.sql")"
  psql -q "${PG[@]}" -d bre_claim_sql -c "CREATE INDEX bre_batch_chunks_waiting ON bre_batch_chunks (job, chunk) WHERE state = 'waiting'" \
    -c "CREATE INDEX bre_batch_chunks_held ON bre_batch_chunks (job, chunk) WHERE state = 'held'" -f "$dir/reset.sql"
  echo "round $round, after: $(claims "$dir/after.sql")"
done
psql -q "${PG[@]}" -c "DROP DATABASE bre_claim_sql"
