#!/usr/bin/env bash
# Reads beside heavy writes (issue 36): paced reads on the read-benchmark data set alone, then
# the same reads while Apple Health exports are imported one after another into the same
# database (`wearhouse import`, each into a new user, deleted afterwards). With REPLICA=1 the
# service also reads from a streaming replica started on this box (pg_basebackup -R), so the
# reads leave the primary; on two cores both servers still share them (a diagnosis). PIN=1 (with
# REPLICA=1) gives each side a core of its own, as if on machines of their own: the primary and
# the imports on CPU 0; the replica, the service and the read load on CPU 1 (the disk and the
# memory stay shared). The replica still replays every import on CPU 1, as it would on its own
# machine. The primary is given both cores back at the end.
#
#   USERS=1000 benches/read/generate.sh     # once: the 10 % read set
#   benches/read/isolation.sh               # PACED="timeseries:200 activity:500" DAYS=780 (≈ 470 MB)
#   REPLICA=1 benches/read/isolation.sh
#   REPLICA=1 PIN=1 PACED="timeseries:100 activity:300" benches/read/isolation.sh
#   WEARHOUSE_BIN=/tmp/old/wearhouse benches/read/isolation.sh   # another build (before/after)
#   DIAG=1 PACED="timeseries:200" benches/read/isolation.sh        # and what the box did meanwhile
#
# DIAG=1 also prints, for each second of the reads beside imports whose p99 passed STALL_MS (200),
# what was at work then: the database's sessions, the cores' and disk's pressure, and (with
# sysstat's pidstat installed) each process's share of the cores. Its samplers (a psql each 0.2
# and 0.5 s, pidstat, vmstat) run only beside the imports and cost the reads there a tail of
# their own (timeseries p99 2.7x idle with them, 1.2x without, one build): a diagnosis, not a figure.
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-30}
PORT=${PORT:-8092}
DB=${DB:-wearhouse_read_bench}
DAYS=${DAYS:-780}
PACED=${PACED:-timeseries:200 activity:500}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/wearhouse/target}
PG="postgres://postgres:postgres@127.0.0.1:5432"
work=$(mktemp -d)
chmod 755 "$work"
# A PostgreSQL cluster's processes (postmaster and children; later backends inherit it) on
# CPUs $2: `pin_cluster <data directory> <cpus>`.
pin_cluster() {
  local pm; pm=$(head -1 "$1/postmaster.pid")
  for p in $pm $(pgrep -P "$pm"); do taskset -a -p -c "$2" "$p" >/dev/null; done
}
primary_dir=$(psql -tA "$PG/postgres" -c 'show data_directory')
on() { if [ "${PIN:-0}" = 1 ]; then taskset -c "$1" "${@:2}"; else "${@:2}"; fi; }
unpin() { [ "${PIN:-0}" != 1 ] || pin_cluster "$primary_dir" 0-"$(($(nproc) - 1))"; }
trap 'kill $(jobs -p) 2>/dev/null || true; unpin; rm -rf "$work"' EXIT
if [ "${PIN:-0}" = 1 ]; then
  [ "${REPLICA:-0}" = 1 ] || { echo "PIN=1 needs REPLICA=1" >&2; exit 2; }
  pin_cluster "$primary_dir" 0
fi

cargo build --release --quiet --bin wearhouse --example read_load --example gen_export
bin=${WEARHOUSE_BIN:-$CARGO_TARGET_DIR/release/wearhouse}
"$CARGO_TARGET_DIR/release/examples/gen_export" --days "$DAYS" --out "$work/export.xml" >/dev/null 2>&1
echo "export: $(( $(stat -c %s "$work/export.xml") / 1000000 )) MB ($DAYS days)"

export MASTER_KEY="${MASTER_KEY:-$(printf 'wearhouse read bench' | sha256sum | cut -c1-64)}"
export DATABASE_URL="$PG/$DB" REDIS_KEY_PREFIX="wearhouse_iso_$$" ADMIN_EMAIL=read@example.com \
  ADMIN_PASSWORD=read-bench-password RUST_LOG=warn DATABASE_POOL_SIZE=${POOL:-16} \
  OUTGOING_WEBHOOKS_ENABLED=false
# With REPLICA=1 a replica too (left running for the next run: `benches/read/replica.sh stop`).
# shellcheck source=benches/read/serve.sh
. benches/read/serve.sh
if [ "${PIN:-0}" = 1 ]; then
  pin_cluster "$(psql -tA "$replicas" -c 'show data_directory')" 1
  for p in $(jobs -p); do taskset -a -p -c 1 "$p" >/dev/null; done   # the service
fi
USERS=$(psql -tA "$PG/$DB" -c "select count(*) from users where email is null or email not like 'import-%'")

paced() {
  on 1 "$CARGO_TARGET_DIR/release/examples/read_load" --port "$PORT" --key "$KEY" --users "$USERS" \
    --readers 50 --seconds "$DURATION" --mode "${1%%:*}" --rate "${1##*:}" --timeline "$work/timeline"
}

# Imports one after another until stopped; each into a new user, its seconds printed.
import_loop() {
  local n=0
  while :; do
    n=$((n + 1))
    local user
    user=$(curl -sf -H "X-Service-API-Key: $KEY" -H 'content-type: application/json' \
      -d "{\"email\": \"import-$$-$n@example.com\"}" "127.0.0.1:$PORT/api/v1/users" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    echo "$user" >>"$work/imported"
    local t0; t0=$(date +%s.%N)
    # The replica's list too (empty without one): imports yield to the API's reads there.
    on 0 env DATABASE_REPLICA_URLS="$replicas" "$bin" import --user "$user" "$work/export.xml" >/dev/null 2>&1
    echo "import $n: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s" >>"$work/imports.log"
  done
}

# What the API's sessions of the database at $1 wait on, a line per waiting session each 0.2 s
# until killed: `wait_event_type:wait_event`, and for a lock the blocking statement's start.
waits_of() {
  while :; do
    psql -tAq "$1" -c "select a.wait_event_type || ':' || a.wait_event || coalesce(' <- ' || (
        select left(regexp_replace(b.query, '\s+', ' ', 'g'), 70) from pg_stat_activity b
         where b.pid = any(pg_blocking_pids(a.pid)) limit 1), '')
      from pg_stat_activity a where a.application_name = 'wearhouse api'
       and a.state = 'active' and a.wait_event is not null and a.pid <> pg_backend_pid()" 2>/dev/null
    sleep 0.2
  done
}
# Everything at work on the box every 0.5 s until killed, each line after its Unix time: the
# cores' and the disk's pressure (PSI, µs stalled since boot), then every non-idle session of
# the database at $1 (who, what it waits on, for how long its statement has run, the statement).
box_of() {
  while :; do
    local now; now=$(date +%s.%N)
    echo "$now psi cpu $(awk '/some/ { print $5 }' /proc/pressure/cpu) io $(awk '/some/ { print $5 }' /proc/pressure/io) $(awk '/full/ { print $5 }' /proc/pressure/io)"
    psql -tAq -F ' | ' "$1" -c "select coalesce(nullif(application_name, ''), backend_type), state,
        coalesce(wait_event_type || ':' || wait_event, 'cpu'),
        round(extract(epoch from clock_timestamp() - query_start)::numeric * 1000) || ' ms',
        left(regexp_replace(query, '\s+', ' ', 'g'), 60)
      from pg_stat_activity where state is distinct from 'idle' and pid <> pg_backend_pid()
        and backend_type not in ('walwriter', 'checkpointer', 'background writer', 'logical replication launcher', 'autovacuum launcher', 'TimescaleDB Background Worker Launcher')" 2>/dev/null \
      | sed "s/^/$now   /"
    sleep 0.5
  done
}
# The seconds of the last paced run whose p99 was over $1 ms, with what `box_of` saw in them.
stalls() {
  awk -v over="$1" '$4 > over' "$work/timeline" | while read -r second n p50 p99 max; do
    echo "-- second $second: $n requests, p50 $p50 ms, p99 $p99 ms, max $max ms"
    awk -v s="$second" 'int($1) >= s - 1 && int($1) <= s' "$work/box" | cut -c11- | head -30
    [ ! -s "$work/pidstat" ] || awk -v t="$(date -d "@$second" +%T)" '$1 == t && $8 >= 5 {
      printf "   %5.1f%% cpu %s", $8, $10; for (i = 11; i <= NF && i < 16; i++) printf " %s", $i; print "" }' \
      "$work/pidstat"
  done | head -150
}
# Autovacuum (after the generation, or after an earlier run's deletes) would blur the reads
# alone: wait until none runs.
quiet() {
  # And the build and the export's generation done before: the load average settled.
  for _ in $(seq 1 180); do
    awk '{ exit !($1 < 1.0) }' /proc/loadavg && break
    sleep 1
  done
  for _ in $(seq 1 600); do
    [ "$(psql -tA "$PG/$DB" -c "select count(*) from pg_stat_activity where backend_type = 'autovacuum worker'")" = 0 ] && return
    sleep 1
  done
}

quiet
for run in $PACED; do
  echo "== $run, alone (load $(cut -d' ' -f1-3 /proc/loadavg))"
  paced "$run"
done
for run in $PACED; do
  echo "== $run, while exports are imported one after another"
  : >"$work/imports.log"
  import_loop &
  loop=$!
  # DIAG=1: how busy the cores and the disk are meanwhile (vmstat, 5 s averages), and what
  # the API's sessions wait on (sampled every 0.2 s; with the blocker's statement when a lock).
  if [ "${DIAG:-0}" = 1 ]; then
    vmstat -w 5 8 &
    waits_of "$PG/$DB" >"$work/waits" &
    samplers=$!
    [ -z "$replicas" ] || { waits_of "$replicas" >"$work/waits-replica" & samplers="$samplers $!"; }
    box_of "$PG/$DB" >"$work/box" &
    samplers="$samplers $!"
    # Which processes had the cores, each second (sysstat's pidstat, when installed).
    if command -v pidstat >/dev/null; then
      LC_ALL=C pidstat -u -h -l 1 >"$work/pidstat" &
      samplers="$samplers $!"
    fi
  fi
  sleep 5
  paced "$run"
  kill "$loop" 2>/dev/null || true
  if [ "${DIAG:-0}" = 1 ]; then
    # shellcheck disable=SC2086
    kill $samplers 2>/dev/null || true
    for f in "$work"/waits*; do
      echo "-- what the API's sessions waited on ($(basename "$f"); samples every 0.2 s):"
      { grep -v '^$' "$f" || true; } | sort | uniq -c | sort -rn | head -8
    done
    echo "-- the seconds whose p99 was over ${STALL_MS:-200} ms, and what was at work then:"
    stalls "${STALL_MS:-200}" || true   # (none, or cut at its first 150 lines)
  fi
  pkill -f "$bin import" 2>/dev/null || true
  wait "$loop" 2>/dev/null || true
  cat "$work/imports.log"
done

# The imported users go, with every row (deleting a user takes a developer's token).
if [ -f "$work/imported" ]; then
  while read -r user; do
    code=$(curl -s -o "$work/deleted" -w '%{http_code}' -X DELETE -H "Authorization: Bearer $token" \
      "127.0.0.1:$PORT/api/v1/users/$user" </dev/null || true)
    [ "$code" = 200 ] || echo "could not delete imported user $user: $code $(head -c 200 "$work/deleted")" >&2
  done <"$work/imported"
  # Their space vacuumed now, not by an autovacuum in the middle of the next run's reads.
  psql -q "$PG/$DB" -c "vacuum analyze"
fi
