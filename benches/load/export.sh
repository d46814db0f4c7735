#!/usr/bin/env bash
# An export of a multi-million-sample user's whole record, end to end through the binary: a
# generated Apple Health export of DAYS days (watch ≈ 1,550 samples a day) is imported with
# `wearhouse import`, sealed (`wearhouse seal --now`; SEAL= leaves the samples as rows), then
# `POST /users/{id}/exports` on `wearhouse all` is timed until the export is done. Reports
# samples/s, the archive's size, and the service's peak RSS before and after the export
# (VmHWM: the export runs in its worker). The archive is downloaded and its lines counted.
#
#   benches/load/export.sh                  # 1650 days, about 2.6 M samples
#   DAYS=400 SEAL= benches/load/export.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
DAYS=${DAYS:-1650}
SEAL=${SEAL-1}
PORT=${PORT:-8093}

. benches/load/service.sh
prepare export
cargo build --release --quiet --example gen_export
set -a
. "$HOME/.cache/wearhouse/s3.env"
set +a
"$CARGO_TARGET_DIR/release/examples/gen_export" --days "$DAYS" --shape watch --out "$work/export.xml" >/dev/null 2>&1
"$bin" migrate
start all
KEY=$(api_key export)
USER_ID=$(users "$KEY" 1)
"$bin" import --user "$USER_ID" "$work/export.xml" >/dev/null
rm -f "$work/export.xml"
[ -z "$SEAL" ] || "$bin" seal --now >/dev/null 2>&1
count="select (select count(*) from samples) + (select coalesce(sum(sample_count), 0) from sample_blocks)"
samples=$(psql -qAt "$PG/$DB" -c "$count")
hwm() { awk '/^VmHWM/ { print int($2 / 1024) }' "/proc/$server/status"; }
rss0=$(hwm)

t0=$(date +%s.%N)
export_id=$(curl -sf -X POST -H "X-Service-API-Key: $KEY" "127.0.0.1:$PORT/api/v1/users/$USER_ID/exports" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
while :; do
  curl -sf -H "X-Service-API-Key: $KEY" "127.0.0.1:$PORT/api/v1/users/$USER_ID/exports/$export_id" >"$work/export.json"
  status=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$work/export.json")
  [ "$status" = done ] && break
  [ "$status" = failed ] && { cat "$work/export.json" >&2; exit 1; }
  sleep 0.2
done
t1=$(date +%s.%N)
rss1=$(hwm)
url=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["download_url"])' "$work/export.json")
curl -sf -o "$work/export.zip" "$url"
lines=$(unzip -p "$work/export.zip" samples.jsonl | wc -l)
fhir=$(unzip -p "$work/export.zip" fhir.ndjson | wc -l)
[ "$lines" = "$samples" ] || { echo "samples.jsonl has $lines lines for $samples samples" >&2; exit 1; }
python3 - "$samples" "$t0" "$t1" "$(stat -c %s "$work/export.zip")" "$rss0" "$rss1" "$fhir" "${SEAL:+sealed}" <<'PY'
import sys
samples, t0, t1, size, rss0, rss1, fhir, sealed = sys.argv[1:]
secs = float(t1) - float(t0)
print(f"export of {int(samples):,} samples ({sealed or 'rows'}): {secs:.1f} s, {int(samples) / secs:,.0f} samples/s; "
      f"archive {int(size) / 1e6:.0f} MB ({int(size) / int(samples):.1f} bytes a sample), {int(fhir):,} FHIR resources")
print(f"service peak RSS: {rss0} MB before the export, {rss1} MB after it")
PY
psql -q "$PG/postgres" -c "drop database if exists $DB with (force)"
