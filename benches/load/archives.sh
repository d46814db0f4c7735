#!/usr/bin/env bash
# Import timing by archive kind (issue 16): one generated export (DAYS, watch shape; 1650 days ≈
# 1 GB of XML) with its workouts' route files, handed over as
#   xml          export.xml alone (no routes: a bare XML has none)
#   zip          a seekable zip, sizes in the local headers, export.xml then the routes
#   descriptors  deflated, sizes in data descriptors after the data, routes first, as macOS
#                Archive Utility and streaming zippers write it (Python's zipfile to a pipe)
#   stored       every entry stored, sizes after the data: read from the stored entry on
#                through the central directory, from a temporary file
# each imported by `wearhouse import` into a fresh database, page cache warm, RUNS rounds with
# the kinds interleaved. Reports wall time, MB/s of XML, records/s and peak RSS.
#
#   benches/load/archives.sh                         # DAYS=1650 RUNS=3
#   WEARHOUSE_BIN=/tmp/before/wearhouse KINDS="xml zip descriptors" benches/load/archives.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
DAYS=${DAYS:-1650}
RUNS=${RUNS:-3}
KINDS=${KINDS:-"xml zip descriptors stored"}
DB=wearhouse_archive_bench
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/wearhouse/target}
PG="postgres://postgres:postgres@127.0.0.1:5432"
work=${WORK_DIR:-$(mktemp -d)}
trap 'rm -rf "$work"' EXIT

./scripts/stack.sh
command -v /usr/bin/time >/dev/null || { s=""; [ "$(id -u)" -eq 0 ] || s=sudo; $s apt-get install -y -qq time >/dev/null; }
cargo build --release --quiet --bin wearhouse --example gen_export
bin=${WEARHOUSE_BIN:-$CARGO_TARGET_DIR/release/wearhouse}
export DATABASE_URL="$PG/$DB" RUST_LOG=warn

records=$("$CARGO_TARGET_DIR/release/examples/gen_export" --days "$DAYS" --out "$work/export.xml" \
  --routes "$work" 2>&1 | awk '{ print $1 }')
xml_size=$(stat -c %s "$work/export.xml")
routes=()
for f in "$work"/workout-routes/*.gpx; do routes+=("$(basename "$f")"); done
zip=tests/tools/zip_export.py
entries() { # method, routes first (1) or last (0)
  local m=$1 first=$2 out=()
  local rs=(); for r in "${routes[@]}"; do rs+=("$m:apple_health_export/workout-routes/$r=$work/workout-routes/$r"); done
  [ "$first" = 1 ] && out+=("${rs[@]}")
  out+=("$m:apple_health_export/export.xml=$work/export.xml")
  [ "$first" = 1 ] || out+=("${rs[@]}")
  printf '%s\n' "${out[@]}"
}
for kind in $KINDS; do
  case $kind in
    xml) ;;
    zip) mapfile -t e < <(entries deflate 0); python3 $zip "$work/zip.zip" "${e[@]}" ;;
    descriptors) mapfile -t e < <(entries deflate 1); python3 $zip - "${e[@]}" | cat >"$work/descriptors.zip" ;;
    stored) mapfile -t e < <(entries store 0); python3 $zip - "${e[@]}" | cat >"$work/stored.zip" ;;
    *) echo "unknown kind $kind" >&2; exit 2 ;;
  esac
done
echo "export: $DAYS days, $((xml_size / 1000000)) MB of XML, $records records, ${#routes[@]} route files"
for run in $(seq "$RUNS"); do
  for kind in $KINDS; do
    file="$work/$kind.zip"; [ "$kind" = xml ] && file="$work/export.xml"
    psql -q "$PG/postgres" -c "drop database if exists $DB with (force)" -c "create database $DB"
    "$bin" migrate
    user=$(psql -qAt "$PG/$DB" -c "insert into users (id) values (gen_random_uuid()) returning id" | head -n1)
    cat "$file" >/dev/null # warm
    /usr/bin/time -v "$bin" import --user "$user" "$file" >"$work/out.txt" 2>"$work/time.txt" \
      || { cat "$work/time.txt"; exit 1; }
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
    secs=$(echo "$wall" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
    routed=$(psql -qAt "$PG/$DB" -c "select count(*) from workouts where route is not null")
    echo "run $run, $kind, $(( $(stat -c %s "$file") / 1000000 )) MB: wall $wall," \
      "$(awk -v b="$xml_size" -v s="$secs" 'BEGIN { printf "%.0f MB/s of XML", b / 1e6 / s }')," \
      "$(awk -v r="$records" -v s="$secs" 'BEGIN { printf "%.0f records/s", r / s }')," \
      "peak RSS $((rss / 1024)) MB, workouts with a route: $routed"
  done
done
psql -q "$PG/postgres" -c "drop database if exists $DB with (force)"
