# Sourced by the load scripts (accept.sh, soak.sh, fleet.sh): what they share to run the service
# under load. Expects PORT set; sets PG, `work` (a scratch directory removed on exit), and, by
# `prepare`, DB, `bin` (WEARHOUSE_BIN: another build, for before/after) and `server`.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/wearhouse/target}
PG="postgres://postgres:postgres@127.0.0.1:5432"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# The stack, wrk, the release build, a fresh database wearhouse_$1, a throwaway master key (the
# service does not start without one), an admin and a Redis prefix of this run's own.
prepare() {
  DB=wearhouse_$1
  export REDIS_KEY_PREFIX="wearhouse_$1_$$" ADMIN_EMAIL="$1@example.com" \
    ADMIN_PASSWORD="$1-test-password" RUST_LOG=warn
  ./scripts/stack.sh >/dev/null
  command -v wrk >/dev/null || { sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo; $sudo apt-get install -y -qq wrk >/dev/null; }
  cargo build --release --quiet --bin wearhouse --example sdk_payload --example fleet_client
  bin=${WEARHOUSE_BIN:-$CARGO_TARGET_DIR/release/wearhouse}
  psql -q "$PG/postgres" -c "drop database if exists $DB with (force)" -c "create database $DB"
  export MASTER_KEY="${MASTER_KEY:-$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')}"
  export DATABASE_URL="$PG/$DB"
}

# Starts `wearhouse <command>` on PORT and waits for /health.
start() {
  "$bin" "$1" --bind "127.0.0.1:$PORT" &
  server=$!
  for _ in $(seq 1 100); do curl -sf "127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
}

# A new API key named $1, as the admin (ADMIN_EMAIL, ADMIN_PASSWORD).
api_key() {
  local token
  token=$(curl -sf -d "username=$ADMIN_EMAIL" -d "password=$ADMIN_PASSWORD" "127.0.0.1:$PORT/api/v1/auth/login" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
  curl -sf -H "Authorization: Bearer $token" -H 'content-type: application/json' -d "{\"name\":\"$1\"}" \
    "127.0.0.1:$PORT/api/v1/developer/api-keys" | python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])'
}

# Creates $2 users with key $1; prints their ids, one a line.
users() {
  for _ in $(seq 1 "$2"); do
    curl -sf -H "X-Service-API-Key: $1" -H 'content-type: application/json' -d '{}' "127.0.0.1:$PORT/api/v1/users" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
  done
}
