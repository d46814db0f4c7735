#!/usr/bin/env bash
# Brings up everything wearhouse needs on this machine, idempotently:
#   PostgreSQL (>= 15) running, with the TimescaleDB extension (Apache edition, built from
#   Debian trixie's source package when missing) preloaded; Redis running; the service's
#   database created; an S3 server (Garage, built once from crates.io and cached outside the
#   clone) running with a bucket, CORS and an access key, whose settings are written to
#   $WEARHOUSE_CACHE_DIR/s3.env (default ~/.cache/wearhouse/s3.env) for run.sh and the tests.
# Safe to run again and again: every step checks first and does nothing when already done.
# Used by scripts/run.sh, scripts/test.sh and .ci/run.
# GARAGE_NODES=3 brings up a three-node Garage cluster (replication factor 3) instead of the
# single node, on other ports (S3 on 127.0.0.1:3910), its settings in garage-cluster/s3.env; see
# scripts/garage_cluster.sh. `scripts/stack.sh garage-node stop|kill|start N` stops or starts
# one of its nodes, `scripts/stack.sh garage-node status` shows them.
set -euo pipefail

log() { printf '[stack] %s\n' "$*" >&2; }
die() { printf '[stack] error: %s\n' "$*" >&2; exit 1; }

if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi
as_root() { "${SUDO[@]}" "$@"; }
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi
}

apt_updated=0
apt_install() {
  if [ "$apt_updated" -eq 0 ]; then as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

CACHE_DIR="${WEARHOUSE_CACHE_DIR:-$HOME/.cache/wearhouse}"
DB_NAME="${WEARHOUSE_DB_NAME:-wearhouse}"
PG_HOST=127.0.0.1
PG_PORT=5432

# ---------------------------------------------------------------- PostgreSQL
pg_version() { ls /etc/postgresql 2>/dev/null | sort -n | tail -n1; }

ensure_postgres() {
  if [ -z "$(pg_version)" ]; then
    log "installing PostgreSQL"
    apt_install postgresql postgresql-contrib
  fi
  PGV=$(pg_version)
  [ "${PGV%%.*}" -ge 15 ] || die "PostgreSQL $PGV found; wearhouse needs 15 or newer"
  PG_BIN=/usr/lib/postgresql/$PGV/bin
  PG_CONF_DIR=/etc/postgresql/$PGV/main
  if ! pg_isready -q -h "$PG_HOST" -p "$PG_PORT"; then
    log "starting PostgreSQL $PGV"
    as_root pg_ctlcluster --skip-systemctl-redirect "$PGV" main start || true
    wait_postgres
  fi
}

# A cluster stopped uncleanly (a killed machine) replays its WAL before it
# accepts anyone; that can take minutes on a large database, and pg_isready says
# so (exit 1, "rejecting connections"), so wait on that far longer than on silence.
wait_postgres() {
  local silent=0 starting=0 rc
  while :; do
    rc=0; pg_isready -q -h "$PG_HOST" -p "$PG_PORT" || rc=$?
    case $rc in
      0) return 0 ;;
      1) starting=$((starting + 1)); [ "$starting" -le 1800 ] || break ;;
      *) silent=$((silent + 1)); [ "$silent" -le 60 ] || break ;;
    esac
    sleep 0.5
  done
  die "PostgreSQL did not come up on $PG_HOST:$PG_PORT"
}

# psql as the postgres superuser over the local socket (works with Debian's default peer auth).
pg_admin() { as_postgres psql -X -q -v ON_ERROR_STOP=1 -At -p "$PG_PORT" "$@"; }

ensure_tcp_login() {
  # The default DATABASE_URL is postgres://postgres:postgres@127.0.0.1:5432/wearhouse. Where
  # TCP logins need a password (Debian's default pg_hba), give the postgres role that password;
  # with trust auth (as on CI machines) the password is ignored.
  if ! PGPASSWORD=postgres psql -X -q -h "$PG_HOST" -p "$PG_PORT" -U postgres -d postgres -Atc 'select 1' >/dev/null 2>&1; then
    log "setting a local password for the postgres role (TCP login)"
    pg_admin -d postgres -c "alter role postgres password 'postgres'"
  fi
}

# ---------------------------------------------------------------- TimescaleDB
build_timescaledb() {
  log "TimescaleDB is missing: building the Apache edition from Debian trixie's source (about 2 minutes)"
  apt_install "postgresql-server-dev-$PGV" cmake libssl-dev build-essential xz-utils
  local d="$CACHE_DIR/timescaledb-build"
  rm -rf "$d"; mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
  echo 'deb-src http://deb.debian.org/debian trixie main' >"$d/sources.list"
  local o=(-oDir::Etc::SourceList="$d/sources.list" -oDir::Etc::SourceParts=/dev/null
           -oDir::State::Lists="$d/lists" -oDir::Cache="$d/cache" -oAPT::Sandbox::User=root)
  apt-get "${o[@]}" -qq update
  (cd "$d" && apt-get "${o[@]}" -qq source --download-only timescaledb && tar xf timescaledb_*.orig.tar.xz)
  local src; src=$(ls -d "$d"/timescaledb-*/ | head -n1)
  cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DPG_CONFIG="$PG_BIN/pg_config" \
    -DAPACHE_ONLY=1 -DREGRESS_CHECKS=OFF -DTAP_CHECKS=OFF -DSEND_TELEMETRY_DEFAULT=OFF \
    -DUSE_TELEMETRY=OFF >/dev/null
  make -s -C "$src/build" -j"$(nproc)" >/dev/null
  as_root make -s -C "$src/build" install >/dev/null
  rm -rf "$d"
}

ensure_timescaledb() {
  local share; share=$("$PG_BIN/pg_config" --sharedir)
  if [ ! -f "$share/extension/timescaledb.control" ]; then build_timescaledb; fi
  local preload; preload=$(pg_admin -d postgres -c 'show shared_preload_libraries')
  if [[ "$preload" != *timescaledb* ]]; then
    log "preloading timescaledb and restarting PostgreSQL"
    # Each database with the extension gets a background scheduler; the test suite makes many
    # short-lived databases, so leave room for them.
    as_root tee "$PG_CONF_DIR/conf.d/50-timescaledb.conf" >/dev/null <<CONF
shared_preload_libraries = 'timescaledb'
timescaledb.telemetry_level = off
max_worker_processes = 64
timescaledb.max_background_workers = 48
CONF
    as_root pg_ctlcluster --skip-systemctl-redirect "$PGV" main restart
    wait_postgres
  fi
}

# Settings for a box that ingests and serves, sized from this machine's memory (the README's
# "PostgreSQL settings" says why each). Written after other conf.d files so they win; PostgreSQL
# restarts only when they change. pg_stat_statements is loaded to see where time goes.
ensure_tuning() {
  local ram_mb; ram_mb=$(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo)
  local shared=$(( ram_mb / 4 )); [ "$shared" -gt 8192 ] && shared=8192
  local cache=$(( ram_mb * 3 / 4 ))
  local want; want=$(cat <<CONF
# Written by wearhouse's scripts/stack.sh for a box of ${ram_mb} MB that ingests and serves.
shared_preload_libraries = 'timescaledb,pg_stat_statements'
shared_buffers = ${shared}MB
effective_cache_size = ${cache}MB
maintenance_work_mem = 512MB
work_mem = 16MB
wal_buffers = 64MB
min_wal_size = 1GB
max_wal_size = 8GB
checkpoint_timeout = 15min
checkpoint_completion_target = 0.9
wal_compression = lz4
random_page_cost = 1.1
effective_io_concurrency = 200
pg_stat_statements.track = top
autovacuum = on
CONF
)
  local file="$PG_CONF_DIR/conf.d/95-wearhouse.conf"
  if [ "$(cat "$file" 2>/dev/null)" != "$want" ]; then
    log "writing PostgreSQL settings for this box (shared_buffers ${shared}MB) and restarting it"
    printf '%s\n' "$want" | as_root tee "$file" >/dev/null
    as_root pg_ctlcluster --skip-systemctl-redirect "$PGV" main restart
    wait_postgres
  fi
}

ensure_database() {
  if [ "$(pg_admin -d postgres -c "select 1 from pg_database where datname = '$DB_NAME'")" != 1 ]; then
    log "creating database $DB_NAME"
    pg_admin -d postgres -c "create database \"$DB_NAME\""
  fi
}

# ---------------------------------------------------------------- Redis
ensure_redis() {
  if ! command -v redis-server >/dev/null; then
    log "installing Redis"
    apt_install redis-server redis-tools
  fi
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    log "starting Redis"
    as_root mkdir -p /var/lib/redis /var/log/redis
    as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" \
      --appendonly no --dir /var/lib/redis --logfile /var/log/redis/wearhouse.log
    for _ in $(seq 1 40); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && return 0; sleep 0.25; done
    die "Redis did not come up on 127.0.0.1:6379"
  fi
}

# ---------------------------------------------------------------- S3 (Garage)
GARAGE_DIR="$CACHE_DIR/garage"
GARAGE="$GARAGE_DIR/bin/garage"
GARAGE_CONF="$GARAGE_DIR/garage.toml"
S3_BUCKET="${WEARHOUSE_S3_BUCKET:-wearhouse-uploads}"
S3_ENV="$CACHE_DIR/s3.env"
GARAGE_NODES="${GARAGE_NODES:-1}"

garage() { "$GARAGE" -c "$GARAGE_CONF" "$@"; }

build_garage() {
  log "building Garage (S3 server) from crates.io once; this takes 10-30 minutes"
  apt_install libsodium-dev libzstd-dev pkg-config
  cargo install --quiet --root "$GARAGE_DIR" garage --locked --no-default-features --features lmdb,system-libs
}

ensure_garage() {
  [ -x "$GARAGE" ] || build_garage
  mkdir -p "$GARAGE_DIR/meta" "$GARAGE_DIR/data"
  if [ ! -f "$GARAGE_CONF" ]; then
    cat >"$GARAGE_CONF" <<CONF
metadata_dir = "$GARAGE_DIR/meta"
data_dir = "$GARAGE_DIR/data"
db_engine = "lmdb"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:3901"
rpc_public_addr = "127.0.0.1:3901"
rpc_secret = "$(openssl rand -hex 32)"

[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:3900"
root_domain = ".s3.garage.localhost"

[admin]
api_bind_addr = "127.0.0.1:3903"
admin_token = "$(openssl rand -hex 24)"
CONF
  fi
  if ! garage status >/dev/null 2>&1; then
    log "starting Garage"
    nohup "$GARAGE" -c "$GARAGE_CONF" server >>"$GARAGE_DIR/garage.log" 2>&1 &
    for _ in $(seq 1 100); do garage status >/dev/null 2>&1 && break; sleep 0.2; done
    garage status >/dev/null 2>&1 || die "Garage did not come up (see $GARAGE_DIR/garage.log)"
  fi
  local layout; layout=$(garage layout show 2>/dev/null || true)
  if [[ "$layout" == *"No nodes currently have a role"* ]]; then
    local node; node=$(garage node id -q | cut -d@ -f1)
    garage layout assign -z dc1 -c 10G "$node" >/dev/null
    garage layout apply --version 1 >/dev/null
  fi
  for _ in $(seq 1 50); do garage bucket list >/dev/null 2>&1 && break; sleep 0.2; done
  garage bucket info "$S3_BUCKET" >/dev/null 2>&1 || garage bucket create "$S3_BUCKET" >/dev/null
  if [ ! -f "$S3_ENV" ] || ! grep -q "^S3_ACCESS_KEY_ID=GK" "$S3_ENV" \
     || ! garage key info "$(sed -n 's/^S3_ACCESS_KEY_ID=//p' "$S3_ENV")" >/dev/null 2>&1; then
    local out id secret
    out=$(garage key create "wearhouse-$(date +%s)")
    id=$(printf '%s\n' "$out" | sed -n 's/^Key ID: *//p')
    secret=$(printf '%s\n' "$out" | sed -n 's/^Secret key: *//p')
    [ -n "$id" ] && [ -n "$secret" ] || die "could not read the new Garage key: $out"
    garage bucket allow --read --write --owner "$S3_BUCKET" --key "$id" >/dev/null
    cat >"$S3_ENV" <<ENV
S3_ENDPOINT=http://127.0.0.1:3900
S3_REGION=garage
S3_BUCKET=$S3_BUCKET
S3_ACCESS_KEY_ID=$id
S3_SECRET_ACCESS_KEY=$secret
S3_FORCE_PATH_STYLE=true
ENV
  fi
  ensure_cors
}

ensure_garage_cluster() {
  [ -x "$GARAGE" ] || build_garage
  "$(dirname "$0")/garage_cluster.sh" up
}

# Browsers upload parts straight to the bucket: allow PUT/POST and let them read the ETag
# (Garage's CLI has no CORS command; this is the S3 API call, signed by a small script).
ensure_cors() {
  ( set -a; . "$S3_ENV"; set +a; python3 "$(dirname "$0")/s3_put_cors.py" ) || die "could not set the bucket's CORS rules"
}

main() {
  if [ "${1:-}" = garage-node ]; then shift; exec "$(dirname "$0")/garage_cluster.sh" "$@"; fi
  case "$GARAGE_NODES" in
    1) s3_desc="S3 (Garage) on 127.0.0.1:3900 (settings in $S3_ENV)" ;;
    3) s3_desc="S3 (Garage, 3 nodes, replication factor 3) on 127.0.0.1:3910 (settings in $CACHE_DIR/garage-cluster/s3.env)" ;;
    *) die "GARAGE_NODES=$GARAGE_NODES: use 1 (the default) or 3" ;;
  esac
  command -v pg_isready >/dev/null || apt_install postgresql-client
  ensure_postgres
  ensure_tcp_login
  ensure_timescaledb
  ensure_tuning
  ensure_database
  ensure_redis
  if [ "$GARAGE_NODES" = 3 ]; then ensure_garage_cluster; else ensure_garage; fi
  log "ready: PostgreSQL $PGV with TimescaleDB on $PG_HOST:$PG_PORT (database $DB_NAME), Redis on 127.0.0.1:6379, $s3_desc"
}

main "$@"
