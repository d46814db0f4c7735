#!/usr/bin/env bash
# Soak of the accept path plus the worker: `wearhouse all` (API and worker in one process)
# takes SDK batches at a steady rate for DURATION seconds while this script samples, every
# INTERVAL seconds, the server's RSS, Redis's memory and keys, and PostgreSQL's size split into
# the data (samples hypertable, stored batches) and everything else. Flat RSS and Redis and a
# flat "other" size, with the data growing in step with what was accepted, is the pass.
#
#   benches/load/soak.sh          # defaults: 600 s, 4 connections, 20 ms apart, 100 records
#   DURATION=60 benches/load/soak.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-600}
INTERVAL=${INTERVAL:-30}
CONNECTIONS=${CONNECTIONS:-4}
DELAY_MS=${DELAY_MS:-20}
RECORDS=${RECORDS:-100}
USERS_N=${USERS_N:-100}
BODY_COUNT=${BODY_COUNT:-600}
PORT=${PORT:-8091}

. benches/load/service.sh
prepare soak
start all
KEY=$(api_key soak)
users "$KEY" "$USERS_N" >"$work/users"
for k in $(seq 1 "$BODY_COUNT"); do
  "$CARGO_TARGET_DIR/release/examples/sdk_payload" --records "$RECORDS" --no-sleep --no-workout --day "$k" \
    >"$work/body_$k.json"
done
echo "soak: ${DURATION}s, $CONNECTIONS connections ${DELAY_MS} ms apart, $RECORDS records ($(wc -c <"$work/body_1.json") bytes) a request, $USERS_N users × $BODY_COUNT days"

sample() {
  local rss redis_mem redis_keys sizes
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$server/status")
  redis_mem=$(redis-cli info memory | awk -F: '/^used_memory:/ {print $2}' | tr -d '\r')
  redis_keys=$(redis-cli --scan --pattern "$REDIS_KEY_PREFIX:*" | while read -r k; do
    t=$(redis-cli type "$k"); [ "$t" = stream ] && redis-cli xlen "$k" || echo 0; done | paste -sd+ | bc)
  sizes=$(psql -qAt -F' ' "$PG/$DB" -c "select pg_database_size(current_database()),
      hypertable_size('samples'), pg_total_relation_size('sdk_batches'),
      (select count(*) from samples), (select count(*) from sdk_batches),
      (select count(*) from sdk_batches where status = 'queued')")
  read -r db samples_b batches_b samples_n batches_n queued <<<"$sizes"
  printf '%5s %8.1f %9.2f %9s %9.1f %9.1f %9.1f %9.1f %10s %8s %7s\n' "$1" "$(bc -l <<<"$rss/1024")" \
    "$(bc -l <<<"$redis_mem/1048576")" "${redis_keys:-0}" "$(bc -l <<<"$db/1048576")" \
    "$(bc -l <<<"$samples_b/1048576")" "$(bc -l <<<"$batches_b/1048576")" \
    "$(bc -l <<<"($db-$samples_b-$batches_b)/1048576")" "$samples_n" "$batches_n" "$queued"
}

echo "    t  RSS MiB redis MiB  stream n    PG MiB samples MiB batches MiB other MiB    samples  batches  queued"
sample 0
USERS="$work/users" BODIES="$work" BODY_COUNT="$BODY_COUNT" KEY="$KEY" DELAY_MS="$DELAY_MS" \
  wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s benches/load/soak.lua \
  "http://127.0.0.1:$PORT" >"$work/wrk.txt" &
load=$!
t=0
while kill -0 "$load" 2>/dev/null; do
  sleep "$INTERVAL"; t=$((t + INTERVAL))
  kill -0 "$load" 2>/dev/null && sample "$t"
done
wait "$load" || true
for _ in $(seq 1 120); do
  [ "$(psql -qAt "$PG/$DB" -c "select count(*) from sdk_batches where status = 'queued'")" = 0 ] && break
  sleep 1
done
sample end
grep -E "requests:|p50|p99|Requests/sec" "$work/wrk.txt"
echo "largest tables (with indexes and TOAST), rows:"
psql -qAt -F' ' "$PG/$DB" -c "select c.relname, pg_size_pretty(pg_total_relation_size(c.oid)), c.reltuples::int8
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.relkind = 'r' and n.nspname in ('public', '_timescaledb_internal')
    order by pg_total_relation_size(c.oid) desc limit 10" | sed 's/^/  /'
accepted=$(psql -qAt "$PG/$DB" -c "select count(*) from sdk_batches")
done_n=$(psql -qAt "$PG/$DB" -c "select count(*) from sdk_batches where status = 'done'")
echo "accepted batches: $accepted, done: $done_n"
kill "$server"; wait "$server" 2>/dev/null || true
psql -q "$PG/postgres" -c "drop database if exists $DB with (force)"
[ "$done_n" = "$accepted" ] || { echo "some accepted batches were not stored" >&2; exit 1; }
