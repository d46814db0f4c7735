#!/usr/bin/env bash
# End-to-end Apple Health import timing and peak memory: generates exports of SIZES (in days of
# data; 1650 days ≈ 1 GB), imports each with `wearhouse import` into a fresh database, and
# reports wall time, MB/s and peak RSS (GNU time).
#
#   benches/load/import.sh                 # 1 GB and 4 GB
#   DAYS="1650" benches/load/import.sh     # 1 GB only
set -euo pipefail
cd "$(dirname "$0")/../.."
DAYS=${DAYS:-"1650 6600"}
DB=wearhouse_import_bench
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/wearhouse/target}
PG="postgres://postgres:postgres@127.0.0.1:5432"
work=${WORK_DIR:-$(mktemp -d)}
trap 'rm -rf "$work"' EXIT

./scripts/stack.sh
command -v /usr/bin/time >/dev/null || { s=""; [ "$(id -u)" -eq 0 ] || s=sudo; $s apt-get install -y -qq time >/dev/null; }
cargo build --release --quiet --bin wearhouse --example gen_export
bin=$CARGO_TARGET_DIR/release/wearhouse
export DATABASE_URL="$PG/$DB" RUST_LOG=warn
for days in $DAYS; do
  "$CARGO_TARGET_DIR/release/examples/gen_export" --days "$days" --out "$work/export.xml" 2>/dev/null
  size=$(stat -c %s "$work/export.xml")
  psql -q "$PG/postgres" -c "drop database if exists $DB with (force)" -c "create database $DB"
  "$bin" migrate
  user=$(psql -qAt "$PG/$DB" -c "insert into users (id) values (gen_random_uuid()) returning id" | head -n1)
  sync; echo 1 > /proc/sys/vm/drop_caches 2>/dev/null || true
  /usr/bin/time -v "$bin" import --user "$user" "$work/export.xml" >"$work/out.txt" 2>"$work/time.txt"
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
  echo "$days days, $((size / 1000000)) MB: wall $wall, peak RSS $((rss / 1024)) MB"
  cat "$work/out.txt"
  rm -f "$work/export.xml"
done
psql -q "$PG/postgres" -c "drop database if exists $DB with (force)"
