#!/usr/bin/env bash
# Sealing a backlog with one sealer against several side by side (`SEAL_JOBS`): for each entry of
# ORDER, users FIRST–LAST of the read set (`benches/read/generate.sql`) into a fresh migrated
# database, VACUUM ANALYZE, then `wearhouse seal --now` with that many sealers; its last line
# (days, samples, bytes of blocks, seconds, samples/s) is printed.
#
#   benches/storage/seal_jobs.sh                     # ORDER="1 2 1 2", users 1001-1200
set -euo pipefail
cd "$(dirname "$0")/../.."
ORDER=${ORDER:-1 2 1 2}
FIRST=${FIRST:-1001}
LAST=${LAST:-1200}
DB=wearhouse_seal_jobs
PG="postgres://postgres:postgres@127.0.0.1:5432"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/wearhouse/target}
export MASTER_KEY="${MASTER_KEY:-$(printf 'wearhouse read bench' | sha256sum | cut -c1-64)}"

./scripts/stack.sh >/dev/null
cargo build --release --quiet --bin wearhouse
bin=$CARGO_TARGET_DIR/release/wearhouse
for jobs in $ORDER; do
  psql -q "$PG/postgres" -c "drop database if exists $DB with (force)" -c "create database $DB" 2>/dev/null
  DATABASE_URL="$PG/$DB" RUST_LOG=warn "$bin" migrate
  psql -q -X -v ON_ERROR_STOP=1 -v first="$FIRST" -v last="$LAST" "$PG/$DB" -f benches/read/generate.sql
  psql -q -X "$PG/$DB" -c "vacuum analyze"
  echo "SEAL_JOBS=$jobs: $(DATABASE_URL="$PG/$DB" SEAL_JOBS=$jobs RUST_LOG=warn "$bin" seal --now 2>/dev/null | tail -n 1)"
done
psql -q "$PG/postgres" -c "drop database $DB with (force)"
