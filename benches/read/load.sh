#!/usr/bin/env bash
# Read benchmark against the data set of generate.sh: wrk with 50 connections (50 concurrent
# readers) for DURATION seconds on each of a 100-point timeseries page, a 30-day activity
# summary and a 30-day sleep summary (saturation: latency there is queueing); then the same
# reads paced at fixed rates by 50 readers (examples/read_load.rs), raw and downsampled; then a
# full cursor walk of one user's year of heart rate, and that user's first pages at every
# resolution over windows of a day to a year (resolutions.py).
#
#   benches/read/generate.sh   # once
#   benches/read/load.sh       # DURATION=30 CONNECTIONS=50 by default
#   MODES= PACED="resolutions:400" WALK=0 benches/read/load.sh   # one paced run only
#   WEARHOUSE_BIN=/tmp/old/wearhouse benches/read/load.sh        # another build (before/after)
#   RESTART_PG=1 benches/read/load.sh    # restart PostgreSQL first (rules out a state built up by earlier runs)
#   REPLICA=1 benches/read/load.sh       # reads from a streaming replica beside the primary
#
# Before each read, a fixed CPU probe (the same single-core loop, best of three) and what
# PostgreSQL's autovacuum is doing: the box's speed has wandered by up to 3x between runs, and
# the probe tells a slower box from a slower build.
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-30}
CONNECTIONS=${CONNECTIONS:-50}
PORT=${PORT:-8091}
DB=${DB:-wearhouse_read_bench}
MODES=${MODES-timeseries activity sleep}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/wearhouse/target}
PG="postgres://postgres:postgres@127.0.0.1:5432"
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT

# Milliseconds a fixed single-core loop takes (best of three), and the vacuums running now.
probe() {
  local ms
  ms=$(python3 -c 'import time
best = 1e9
for _ in range(3):
    t = time.perf_counter(); sum(i * i for i in range(2_000_000)); best = min(best, time.perf_counter() - t)
print(round(best * 1000))')
  local vacuums
  vacuums=$(psql -tA "$PG/$DB" -c "select count(*) from pg_stat_activity where backend_type = 'autovacuum worker' or query ilike 'vacuum%'" 2>/dev/null || echo '?')
  echo "probe before $1: cpu loop ${ms} ms, vacuums running ${vacuums}, load $(cut -d' ' -f1-3 /proc/loadavg)"
}

sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
if [ "${RESTART_PG:-0}" = 1 ]; then
  $sudo pg_ctlcluster --skip-systemctl-redirect 15 main restart
  for _ in $(seq 1 300); do pg_isready -q -h 127.0.0.1 && break; sleep 1; done
fi

command -v wrk >/dev/null || { $sudo apt-get install -y -qq wrk >/dev/null; }
cargo build --release --quiet --bin wearhouse --example read_load
bin=${WEARHOUSE_BIN:-$CARGO_TARGET_DIR/release/wearhouse}
# A fixed throwaway master key: the service does not start without one, and seals its signing
# secret in the database under it, so every run on the data set must use the same key.
export MASTER_KEY="${MASTER_KEY:-$(printf 'wearhouse read bench' | sha256sum | cut -c1-64)}"
export DATABASE_URL="$PG/$DB" REDIS_KEY_PREFIX="wearhouse_read_$$" ADMIN_EMAIL=read@example.com \
  ADMIN_PASSWORD=read-bench-password RUST_LOG=warn DATABASE_POOL_SIZE=${POOL:-16}
# shellcheck source=benches/read/serve.sh
. benches/read/serve.sh
USERS=$(psql -tA "$PG/$DB" -c "select count(*) from users")
export KEY USERS

for mode in $MODES; do
  probe "$mode"
  echo "== $mode: $CONNECTIONS readers, ${DURATION}s (after a 10 s warm-up)"
  MODE=$mode wrk -t2 -c"$CONNECTIONS" -d10s -s benches/read/read.lua "http://127.0.0.1:$PORT" >/dev/null
  MODE=$mode wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" -s benches/read/read.lua "http://127.0.0.1:$PORT" \
    | sed -n '/^requests:/,$p'
  # Server-side quantiles of the last 30 s, from the service's own histogram.
  curl -s "127.0.0.1:$PORT/metrics" | grep 'wearhouse_http_request_duration_seconds{' \
    | grep -E "route=\"[^\"]*(timeseries|summaries/$mode)\"" | grep -E 'quantile="0.(5|9|99)"' \
    | sed -E 's/.*quantile="([0-9.]+)"} ([0-9.e-]+)/server-side p\1: \2 s/'
  # Time spent waiting for a pooled connection (a build before this metric prints nothing).
  curl -s "127.0.0.1:$PORT/metrics" | grep -E '^wearhouse_db_pool_wait_seconds\{quantile="0.(5|99)"' \
    | sed -E 's/.*quantile="([0-9.]+)"} ([0-9.e-]+)/pool wait p\1: \2 s/' || true
done
# Paced (open-loop) runs: 50 readers at a fixed total rate, latency counted from when each
# request was due.
for run in ${PACED-timeseries:400 activity:1000 sleep:100 resolutions:400 1min:200 5min:200 15min:200 1hour:200 1day:200}; do
  probe "paced $run"
  "$CARGO_TARGET_DIR/release/examples/read_load" --port "$PORT" --key "$KEY" --users "$USERS" \
    --readers "$CONNECTIONS" --seconds "$DURATION" --mode "${run%%:*}" --rate "${run##*:}"
done
[ "${WALK:-1}" = 0 ] || probe walk
[ "${WALK:-1}" = 0 ] || python3 benches/read/walk.py --port "$PORT" --key "$KEY"
[ "${HEAVY:-1}" = 0 ] || python3 benches/read/resolutions.py --port "$PORT" --key "$KEY"
