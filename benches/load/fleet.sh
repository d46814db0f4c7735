#!/usr/bin/env bash
# What a fleet sees: N SDK payloads of RECORDS records from USERS_N users, posted by CLIENTS
# parallel clients to `wearhouse all` (API and worker in one process, default settings), timed
# from the first post until every batch is stored (counted in the database). Reports records/s
# end to end, accept latency p50/p99, the CPU PostgreSQL and wearhouse used, and, in the same
# run, the rate of a bare binary COPY of the stored samples (sorted by the key) into an empty
# twin of the `samples` hypertable with the same unique index: the machine's own limit for
# these rows, so the figure is also a ratio to it.
#
#   benches/load/fleet.sh                                   # 60 × 10,000 records, 20 users, 4 clients
#   N=120 RECORDS=5000 USERS_N=40 CLIENTS=8 benches/load/fleet.sh
#   SEAL=1 benches/load/fleet.sh     # the sealer seals each past day as soon as it lands
#                                     # (SEAL_QUIET_MINUTES=0), beside the ingest
#   CLIENT=curl benches/load/fleet.sh  # a curl process per post and psql polling, as before
#                                       # 2026-12-03 (the fleet's own CPU then came from the box)
#
# The fleet is `examples/fleet_client.rs`: one process posting each body from memory over
# kept-alive connections, then waiting on one database connection. A curl per post, the bash
# around it and a psql every 50 ms took 15-20 % of the two cores from the service under test.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${N:-60}
RECORDS=${RECORDS:-10000}
USERS_N=${USERS_N:-20}
CLIENTS=${CLIENTS:-4}
PORT=${PORT:-8091}

. benches/load/service.sh
prepare fleet
# The payloads' days are past: with no quiet time the sealer takes them while batches land.
[ -z "${SEAL:-}" ] || export SEAL_QUIET_MINUTES=0
start all
KEY=$(api_key fleet)
fleet="$CARGO_TARGET_DIR/release/examples/fleet_client"
users "$KEY" "$USERS_N" >"$work/users"
mapfile -t USERS <"$work/users"

# One payload per round of users: each user's posts carry distinct days, so nothing dedups.
rounds=$(( (N + USERS_N - 1) / USERS_N ))
for r in $(seq 0 $((rounds - 1))); do
  "$CARGO_TARGET_DIR/release/examples/sdk_payload" --records "$RECORDS" --day $((r * 60)) >"$work/body-$r.json"
done
bytes=$(stat -c %s "$work/body-0.json")
for i in $(seq 0 $((N - 1))); do
  echo "${USERS[$((i % USERS_N))]} $work/body-$((i / USERS_N)).json"
done >"$work/posts"
echo "fleet: $N payloads of $RECORDS records ($((bytes / 1000)) kB), $USERS_N users, $CLIENTS clients"

# CPU ticks of wearhouse and of every PostgreSQL process, now.
ticks() { awk '{ s += $14 + $15 } END { print s + 0 }' "$@" 2>/dev/null || echo 0; }
pg_ticks() { ticks $(for p in $(pgrep -x postgres); do echo "/proc/$p/stat"; done); }
hz=$(getconf CLK_TCK)

post() {
  read -r user file <<<"$1"
  curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -H "X-Service-API-Key: $KEY" \
    -H 'content-type: application/json' --data-binary "@$file" \
    "http://127.0.0.1:$PORT/api/v1/sdk/users/$user/sync"
}
export -f post
export KEY PORT

# Where PostgreSQL's time goes (PROFILE=1): its statements, from now on.
if [ -n "${PROFILE:-}" ]; then
  psql -qAt "$PG/$DB" -c "create extension if not exists pg_stat_statements" -c "select pg_stat_statements_reset()" >/dev/null
fi
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }
m0=$(busy)
pg0=$(pg_ticks); wh0=$(ticks "/proc/$server/stat"); t0=$(date +%s.%N)
if [ "${CLIENT:-}" = curl ]; then
  tr '\n' '\0' <"$work/posts" | xargs -0 -P "$CLIENTS" -I{} bash -c 'post "$@"' _ {} >"$work/accepts"
  t_accepted=$(date +%s.%N)
  # Polled with psql's own binary where Debian's is a Perl wrapper.
  poll=$(ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -1 || true)
  while [ "$("${poll:-psql}" -qAt "$PG/$DB" -c "select count(*) from sdk_batches where status = 'queued'")" != 0 ]; do sleep 0.05; done
else
  "$fleet" post --port "$PORT" --key "$KEY" --posts "$work/posts" --clients "$CLIENTS" >"$work/accepts"
  t_accepted=$(date +%s.%N)
  "$fleet" wait --database "$PG/$DB"
fi
t1=$(date +%s.%N); pg1=$(pg_ticks); wh1=$(ticks "/proc/$server/stat"); m1=$(busy)

ok=$(grep -c '^202 ' "$work/accepts" || true)
done_n=$(psql -qAt "$PG/$DB" -c "select count(*) from sdk_batches where status = 'done'")
# Rows and blocks counted in one statement (one snapshot): the sealer moves rows meanwhile.
# A build from before sealed blocks (WEARHOUSE_BIN) has no sample_blocks.
stored() {
  local blocks=0
  [ -z "$(psql -qAt "$PG/$DB" -c "select to_regclass('sample_blocks')")" ] \
    || blocks="(select coalesce(sum(sample_count), 0) from sample_blocks)"
  psql -qAt -F ' ' "$PG/$DB" -c "select (select count(*) from samples), $blocks"
}
read -r rows sealed <<<"$(stored)"
samples=$((rows + sealed))
records=$((N * RECORDS))
echo "stored: $rows samples as rows, $sealed sealed into blocks by then"
python3 - "$work/accepts" "$t0" "$t_accepted" "$t1" "$records" "$samples" "$pg0" "$pg1" "$wh0" "$wh1" "$hz" "$m0" "$m1" <<'PY'
import sys
path, t0, ta, t1, records, samples, pg0, pg1, wh0, wh1, hz, m0, m1 = sys.argv[1:]
times = sorted(float(l.split()[1]) * 1000 for l in open(path) if l.strip())
t0, ta, t1 = float(t0), float(ta), float(t1)
pct = lambda q: times[min(len(times) - 1, int(q * len(times)))]
wall = t1 - t0
print(f"accepted in {ta - t0:.2f} s; all stored after {wall:.2f} s")
print(f"end to end: {int(records) / wall:,.0f} records/s ({int(samples):,} samples stored)")
print(f"accept latency: p50 {pct(0.5):.0f} ms, p99 {pct(0.99):.0f} ms")
cpu = lambda a, b: (int(b) - int(a)) / int(hz) / wall * 100
(b0, i0), (b1, i1) = map(int, m0.split()), map(int, m1.split())
machine = (b1 - b0) / max(1, (b1 - b0) + (i1 - i0)) * 100
print(f"CPU over the run: PostgreSQL {cpu(pg0, pg1):.0f} %, wearhouse {cpu(wh0, wh1):.0f} % (of 200 %); the machine {machine:.0f} % busy")
PY
if [ -n "${PROFILE:-}" ]; then
  psql -q "$PG/$DB" -c "select round(total_exec_time::numeric) as ms, calls, rows,
      regexp_replace(left(query, 110), '\s+', ' ', 'g') as statement
    from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
    order by total_exec_time desc limit 12"
fi
[ "$ok" = "$N" ] || { echo "only $ok of $N posts were accepted" >&2; exit 1; }
[ "$done_n" = "$N" ] || { echo "only $done_n of $N batches were stored" >&2; exit 1; }
if [ -n "${SEAL:-}" ]; then
  # The sealer's backlog once ingest is done: how long until no past day is left as rows.
  due="select count(*) from samples where ts < date_trunc('day', now() - interval '2 days', 'UTC')"
  left=1
  for _ in $(seq 1 1500); do left=$(psql -qAt "$PG/$DB" -c "$due"); [ "$left" != 0 ] || break; sleep 0.2; done
  [ "$left" = 0 ] || { echo "$left samples of past days still rows 300 s after the last batch" >&2; exit 1; }
  echo "every past day sealed $(python3 -c "print(f'{$(date +%s.%N) - $t1:.1f}')") s after the last batch was stored"
  read -r rows_after sealed_after <<<"$(stored)"
  [ $((rows_after + sealed_after)) = "$samples" ] \
    || { echo "sealing changed the samples stored: $samples, then $rows_after rows + $sealed_after sealed" >&2; exit 1; }
fi
kill "$server"; wait "$server" 2>/dev/null || true
# The bare COPY copies the rows: sealed, there are none left to copy.
[ -z "${SEAL:-}" ] || exit 0

# The machine's own limit for these rows: a bare binary COPY into an empty twin.
psql -q "$PG/$DB" >/dev/null <<SQL
create table samples_twin (like samples including all);
select create_hypertable('samples_twin', by_range('ts', interval '7 days'), create_default_indexes => false);
\copy (select * from samples order by user_id, series_type_id, ts, data_source_id) to '$work/samples.bin' with (format binary)
SQL
c0=$(date +%s.%N)
psql -q "$PG/$DB" -c "\\copy samples_twin from '$work/samples.bin' with (format binary)"
c1=$(date +%s.%N)
python3 -c "
samples, c = $samples, $c1 - $c0
e2e = $records / ($t1 - $t0)
print(f'bare COPY of the stored samples: {samples / c:,.0f} rows/s ({c:.2f} s); end to end is {e2e / (samples / c):.2f} of it')"
psql -q "$PG/postgres" -c "drop database if exists $DB with (force)"
