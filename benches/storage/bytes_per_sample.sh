#!/usr/bin/env bash
# Bytes a stored sample costs (issue 31): generates a watch-like Apple Health export of DAYS days
# (≈ 0.6 MB a day), imports it with `wearhouse import` into a fresh database, seals every past
# day (`wearhouse seal --now`), VACUUMs, and reports every table's size (heap, indexes and
# TOAST; a hypertable's over its chunks), the samples stored (rows and sealed), and bytes per sample for the durable data (samples, their indexes, every
# rollup, sessions) apart from the tables that expire (outbox, webhooks, sync runs, raw
# batches, vendor pages, imports).
#
#   benches/storage/bytes_per_sample.sh                  # 800 days ≈ 470 MB, ≈ 1 M samples
#   DAYS=80 benches/storage/bytes_per_sample.sh          # a quick look
#   ROWS_ONLY=1 benches/storage/bytes_per_sample.sh      # without sealing (the row-wise figure)
#   DATABASE=wearhouse_read_bench REPORT_ONLY=1 benches/storage/bytes_per_sample.sh
#                                                        # an existing database, as it is
#   COMPACT=1 …                                          # the tables sealing empties rewritten
set -euo pipefail
cd "$(dirname "$0")/../.."
DAYS=${DAYS:-800}
DB=${DATABASE:-wearhouse_storage_bench}
PG="postgres://postgres:postgres@127.0.0.1:5432"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/wearhouse/target}

if [ -z "${REPORT_ONLY:-}" ]; then
  ./scripts/stack.sh >/dev/null
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cargo build --release --quiet --bin wearhouse --example gen_export
  bin=${WEARHOUSE_BIN:-$CARGO_TARGET_DIR/release/wearhouse}
  "$CARGO_TARGET_DIR/release/examples/gen_export" --days "$DAYS" --shape watch --out "$work/export.xml" >/dev/null
  psql -q "$PG/postgres" -c "drop database if exists $DB with (force)" -c "create database $DB"
  DATABASE_URL="$PG/$DB" RUST_LOG=warn "$bin" migrate
  user=$(psql -qAt "$PG/$DB" -c "insert into users (id) values (gen_random_uuid()) returning id" | head -n1)
  echo "export: $((DAYS)) days, $(( $(stat -c %s "$work/export.xml") / 1000000 )) MB"
  DATABASE_URL="$PG/$DB" RUST_LOG=warn "$bin" import --user "$user" "$work/export.xml" | tail -n 1
  if [ -z "${ROWS_ONLY:-}" ]; then
    # Every past day sealed into blocks, as the worker's sealer does once days are quiet.
    DATABASE_URL="$PG/$DB" RUST_LOG=warn "$bin" seal --now 2>/dev/null
  fi
fi
psql -q "$PG/$DB" -c "vacuum (analyze)" 2>/dev/null
if [ -n "${COMPACT:-}" ]; then
  # Sealing deletes most rows of the plain tables it empties (the local day rollups, the
  # sessions); their heaps keep the space for the rows that come next, and the sealer rebuilds
  # their indexes. Rewritten, they show what the space is worth once reused.
  psql -q "$PG/$DB" -c "vacuum (full, analyze) daily_rollups, sleep_sessions, workouts"
fi
psql -qAt -F $'\t' "$PG/$DB" <<'SQL' | column -t -s $'\t'
with sizes as (
  select c.relname as name,
         case when h.hypertable_name is not null then hypertable_size(c.oid)
              else pg_total_relation_size(c.oid) end as bytes
  from pg_class c
  join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
  left join timescaledb_information.hypertables h on h.hypertable_name = c.relname
  where c.relkind in ('r', 'p')
),
expiring(name) as (values ('outbox'), ('webhook_messages'), ('webhook_deliveries'),
  ('webhook_attempts'), ('sync_runs'), ('sdk_batches'), ('vendor_pages'), ('vendor_pulls'),
  ('imports'), ('uploads'), ('export_routes'), ('object_deletions'), ('refinery_schema_history'),
  ('user_storage'), ('block_repacks'), ('invitation_codes'), ('connect_links'),
  ('team_invitations'), ('audit_events')),
n as (select (select count(*) from samples)
              + (select coalesce(sum(sample_count), 0) from sample_blocks)::numeric as samples)
select 'table', 'bytes', 'bytes/sample', 'kind'
union all
select s.name, s.bytes::text, round(s.bytes / nullif(n.samples, 0), 1)::text,
       case when e.name is null then 'durable' else 'expiring' end
from sizes s cross join n left join expiring e on e.name = s.name
where s.bytes > 16384
union all
select 'DURABLE (all but expiring)', sum(s.bytes)::text, round(sum(s.bytes) / max(n.samples), 1)::text, ''
from sizes s cross join n left join expiring e on e.name = s.name where e.name is null
union all
select 'WHOLE DATABASE', pg_database_size(current_database())::text,
       round(pg_database_size(current_database()) / max(n.samples), 1)::text, ''
from n
union all
select 'samples stored', max(n.samples)::text, '', '' from n;
SQL
