#!/usr/bin/env bash
# Load test of the SDK accept path: wrk posts 100-record payloads to `wearhouse serve` for
# DURATION seconds with CONNECTIONS connections; then a worker drains the queue and the script
# checks that every accepted batch was stored.
#
#   benches/load/accept.sh            # defaults: 30 s, 32 connections, 100 records a request
#   DURATION=60 CONNECTIONS=64 RECORDS=100 benches/load/accept.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-30}
CONNECTIONS=${CONNECTIONS:-32}
RECORDS=${RECORDS:-100}
USERS_N=${USERS_N:-200}
PORT=${PORT:-8089}

. benches/load/service.sh
prepare load
export DATABASE_POOL_SIZE=${POOL:-32}
start serve
KEY=$(api_key load)
users "$KEY" "$USERS_N" >"$work/users"
"$CARGO_TARGET_DIR/release/examples/sdk_payload" --records "$RECORDS" --no-sleep --no-workout >"$work/body.json"
echo "payload: $RECORDS records, $(wc -c <"$work/body.json") bytes; $USERS_N users; $CONNECTIONS connections; ${DURATION}s"

USERS="$work/users" BODY="$work/body.json" KEY="$KEY" \
  wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s benches/load/post.lua "http://127.0.0.1:$PORT" | tee "$work/wrk.txt"
kill "$server"; wait "$server" 2>/dev/null || true

accepted=$(psql -qAt "$PG/$DB" -c "select count(*) from sdk_batches")
echo "accepted batches: $accepted; draining with a worker…"
start=$(date +%s)
"$bin" worker &
worker=$!
while [ "$(psql -qAt "$PG/$DB" -c "select count(*) from sdk_batches where status = 'queued'")" != 0 ]; do sleep 1; done
kill "$worker"; wait "$worker" 2>/dev/null || true
done_n=$(psql -qAt "$PG/$DB" -c "select count(*) from sdk_batches where status = 'done'")
samples=$(psql -qAt "$PG/$DB" -c "select count(*) from samples")
echo "drained in $(( $(date +%s) - start ))s: $done_n of $accepted batches done, $samples samples stored"
[ "$done_n" = "$accepted" ] || { echo "some accepted batches were not stored" >&2; exit 1; }
psql -q "$PG/postgres" -c "drop database if exists $DB with (force)"
