#!/usr/bin/env bash
# A streaming replica of the box's PostgreSQL for the read benchmarks (pg_basebackup -R), on
# port 5442, its data in ~/.cache/wearhouse/bench-replica; it prints the replica's URL for
# database $DB.
#
#   benches/read/replica.sh start     # takes a base backup (minutes for the read set) and starts it
#   benches/read/replica.sh stop      # stops it and deletes its data
set -euo pipefail
DB=${DB:-wearhouse_read_bench}
PORT=${REPLICA_PORT:-5442}
DIR=${REPLICA_DIR:-$HOME/.cache/wearhouse/bench-replica}
PGBIN=/usr/lib/postgresql/15/bin
as_postgres() { if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else (cd / && sudo -u postgres "$@"); fi; }
case "${1:-}" in
  start)
    if [ ! -f "$DIR/postmaster.pid" ]; then
      # The box's cluster (scripts/stack.sh's pg_hba.conf) takes no replication connection:
      # let the postgres user in through the socket.
      hba=$(as_postgres psql -tAc 'show hba_file')
      if ! grep -q '^local[[:space:]]\+replication' "$hba"; then
        echo 'local replication postgres trust' >>"$hba"
        as_postgres psql -qc 'select pg_reload_conf()' >/dev/null
      fi
      mkdir -p "$(dirname "$DIR")"
      chmod o+x "$(dirname "$DIR")" "$HOME" "$HOME/.cache" 2>/dev/null || true
      rm -rf "$DIR" && mkdir -p "$DIR" && chmod 700 "$DIR"
      [ "$(id -u)" -ne 0 ] || chown postgres "$DIR"
      as_postgres "$PGBIN/pg_basebackup" -h /var/run/postgresql -U postgres -D "$DIR" -R -X stream -c fast
      # Debian keeps the configuration outside the data directory: the copy has none. A hot
      # standby needs these settings at least as high as its primary's.
      {
        for setting in max_connections max_worker_processes max_locks_per_transaction \
          max_prepared_transactions max_wal_senders shared_preload_libraries; do
          echo "$setting = '$(as_postgres psql -tAc "show $setting")'"
        done
        printf "port = %s\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\n" "$PORT" "$DIR"
        echo "shared_buffers = '${REPLICA_SHARED_BUFFERS:-2GB}'"
        echo "timescaledb.telemetry_level = off"
      } | as_postgres tee "$DIR/postgresql.conf" >/dev/null
      printf 'local all all trust\nhost all all 127.0.0.1/32 trust\n' | as_postgres tee "$DIR/pg_hba.conf" >/dev/null
      as_postgres "$PGBIN/pg_ctl" -D "$DIR" -l "$DIR/log" -w start >/dev/null
    fi
    echo "postgres://postgres:postgres@127.0.0.1:$PORT/$DB"
    ;;
  stop)
    [ ! -f "$DIR/postmaster.pid" ] || as_postgres "$PGBIN/pg_ctl" -D "$DIR" -m fast -w stop >/dev/null
    rm -rf "$DIR"
    ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
