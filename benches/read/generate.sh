#!/usr/bin/env bash
# Generates the read-benchmark data set into database `wearhouse_read_bench` (dropped first):
# 10,000 users, ~101 million samples, a year of sleep sessions and workouts. Takes about an hour
# and a half on the reference machine and ~45 GB of disk (20 GB of it hourly rollups).
#
#   benches/read/generate.sh                  # USERS=10000 BATCH=200 JOBS=2 by default
#
# JOBS batches load at once (one psql each): the batches touch disjoint users, and a batch is
# CPU-bound, so on two cores two at once take about half as long as one after another.
set -euo pipefail
cd "$(dirname "$0")/../.."
USERS=${USERS:-10000}
BATCH=${BATCH:-200}
JOBS=${JOBS:-2}
DB=${DB:-wearhouse_read_bench}
PG="postgres://postgres:postgres@127.0.0.1:5432"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/wearhouse/target}

./scripts/stack.sh
cargo build --release --quiet --bin wearhouse
psql -q "$PG/postgres" -c "drop database if exists $DB with (force)" -c "create database $DB"
DATABASE_URL="$PG/$DB" RUST_LOG=warn "$CARGO_TARGET_DIR/release/wearhouse" migrate

start=$(date +%s)
export PG DB USERS start
seq 1 "$BATCH" "$USERS" | xargs -P "$JOBS" -I{} bash -c '
  first={}; last=$((first + '"$BATCH"' - 1)); [ "$last" -le "$USERS" ] || last=$USERS
  psql -q -X -v ON_ERROR_STOP=1 -v first="$first" -v last="$last" "$PG/$DB" -f benches/read/generate.sql
  echo "users $first-$last loaded ($(($(date +%s) - start)) s)"'
psql -q -X "$PG/$DB" -c "vacuum analyze"
psql -X "$PG/$DB" -c "select (select count(*) from users) as users, (select count(*) from samples) as samples,
  (select count(*) from sleep_sessions) as sleep_sessions, (select count(*) from workouts) as workouts,
  pg_size_pretty(pg_database_size(current_database())) as size"
echo "generated in $(($(date +%s) - start)) s"
