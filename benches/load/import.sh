#!/usr/bin/env bash
# End-to-end Apple Health import timing and peak memory: generates the EXPORTS (days:shape;
# watch ≈ 0.6 MB a day, 1650 days ≈ 1 GB; varied ≈ 0.5 MB a day of many small records of two
# dozen types from a dozen apps), imports each with `wearhouse import` into a fresh database,
# and reports wall time, MB/s, records/s and peak RSS (GNU time).
#
#   benches/load/import.sh                          # 48 MB, 1 GB, 340 MB varied, 4 GB
#   EXPORTS="1650:watch" benches/load/import.sh     # 1 GB only
#   WEARHOUSE_BIN=/tmp/old/wearhouse benches/load/import.sh   # another build (before/after)
set -euo pipefail
cd "$(dirname "$0")/../.."
EXPORTS=${EXPORTS:-"80:watch 1650:watch 700:varied 6600:watch"}
DB=wearhouse_import_bench
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/wearhouse/target}
PG="postgres://postgres:postgres@127.0.0.1:5432"
work=${WORK_DIR:-$(mktemp -d)}
trap 'rm -rf "$work"' EXIT

./scripts/stack.sh
command -v /usr/bin/time >/dev/null || { s=""; [ "$(id -u)" -eq 0 ] || s=sudo; $s apt-get install -y -qq time >/dev/null; }
cargo build --release --quiet --bin wearhouse --example gen_export
bin=${WEARHOUSE_BIN:-$CARGO_TARGET_DIR/release/wearhouse}
export DATABASE_URL="$PG/$DB" RUST_LOG=warn
for export in $EXPORTS; do
  days=${export%%:*} shape=${export#*:}
  records=$("$CARGO_TARGET_DIR/release/examples/gen_export" --days "$days" --shape "$shape" \
    --out "$work/export.xml" 2>&1 | awk '{ print $1 }')
  size=$(stat -c %s "$work/export.xml")
  psql -q "$PG/postgres" -c "drop database if exists $DB with (force)" -c "create database $DB"
  "$bin" migrate
  user=$(psql -qAt "$PG/$DB" -c "insert into users (id) values (gen_random_uuid()) returning id" | head -n1)
  sync; echo 1 > /proc/sys/vm/drop_caches 2>/dev/null || true
  /usr/bin/time -v "$bin" import --user "$user" "$work/export.xml" >"$work/out.txt" 2>"$work/time.txt"
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
  secs=$(echo "$wall" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
  echo "$shape, $days days, $((size / 1000000)) MB, $records records: wall $wall," \
    "$(awk -v b="$size" -v s="$secs" 'BEGIN { printf "%.0f MB/s", b / 1e6 / s }')," \
    "$(awk -v r="$records" -v s="$secs" 'BEGIN { printf "%.0f records/s", r / s }')," \
    "peak RSS $((rss / 1024)) MB"
  cat "$work/out.txt"
  rm -f "$work/export.xml"
done
psql -q "$PG/postgres" -c "drop database if exists $DB with (force)"
