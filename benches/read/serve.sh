# shellcheck shell=bash
# Sourced by load.sh and isolation.sh: starts `$bin serve` on $PORT against $PG/$DB (with
# REPLICA=1, the read routes also on a streaming replica, benches/read/replica.sh), waits for
# it, logs the bench's developer in and makes an API key: sets `token` and `KEY`.
replicas=""
[ "${REPLICA:-0}" != 1 ] || { replicas=$(DB=$DB benches/read/replica.sh start); echo "replica: $replicas"; }
DATABASE_REPLICA_URLS="$replicas" "$bin" serve --bind "127.0.0.1:$PORT" &
for _ in $(seq 1 100); do curl -sf "127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
token=$(curl -sf -d "username=$ADMIN_EMAIL" -d "password=$ADMIN_PASSWORD" "127.0.0.1:$PORT/api/v1/auth/login" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
KEY=$(curl -sf -H "Authorization: Bearer $token" -H 'content-type: application/json' -d '{"name":"bench"}' \
  "127.0.0.1:$PORT/api/v1/developer/api-keys" | python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])')
