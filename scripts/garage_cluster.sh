#!/usr/bin/env bash
# A three-node Garage cluster with replication factor 3 on this one machine, for tests of what
# the service does when a storage node goes away. It lives beside the single node of
# scripts/stack.sh (other directories, other ports), so both can run at once.
#   scripts/garage_cluster.sh up        configs, three servers started, connected, a layout
#                                       (zones dc1-dc3, 10G each) applied, the bucket, CORS and an
#                                       access key, settings (node 1's S3 endpoint) written to
#                                       $WEARHOUSE_CACHE_DIR/garage-cluster/s3.env; the single
#                                       node's s3.env stays as it is (the tests use that one)
#   scripts/garage_cluster.sh stop N    stops node N (SIGTERM; SIGKILL after 10 s) and waits until
#                                       the other nodes count it as down
#   scripts/garage_cluster.sh kill N    the same with SIGKILL at once, as a crash would
#   scripts/garage_cluster.sh start N   starts node N and waits until it is connected again to
#                                       every running node
#   scripts/garage_cluster.sh status    `garage status` as the first running node sees it
# scripts/stack.sh runs `up` when GARAGE_NODES=3, and passes `scripts/stack.sh garage-node ...` on.
# Node N (1-3) keeps garage.toml, meta/, data/ and garage.log in
# $WEARHOUSE_CACHE_DIR/garage-cluster/nodeN and listens on 127.0.0.1: S3 39N0, RPC 39N1, admin 39N3.
# Safe to run again and again: `up` checks every step first and does nothing when already done.
set -euo pipefail

log() { printf '[garage-cluster] %s\n' "$*" >&2; }
die() { printf '[garage-cluster] error: %s\n' "$*" >&2; exit 1; }

CACHE_DIR="${WEARHOUSE_CACHE_DIR:-$HOME/.cache/wearhouse}"
GARAGE="$CACHE_DIR/garage/bin/garage"   # built by scripts/stack.sh
CLUSTER_DIR="$CACHE_DIR/garage-cluster"
CLUSTER_ENV="$CLUSTER_DIR/s3.env"
NODES=3
S3_BUCKET="${WEARHOUSE_S3_BUCKET:-wearhouse-uploads}"

node_dir() { printf '%s/node%s' "$CLUSTER_DIR" "$1"; }
node_conf() { printf '%s/node%s/garage.toml' "$CLUSTER_DIR" "$1"; }
s3_port() { printf '39%s0' "$1"; }
rpc_port() { printf '39%s1' "$1"; }
admin_port() { printf '39%s3' "$1"; }
S3_ENDPOINT="http://127.0.0.1:$(s3_port 1)"

# garage as node N: `gn 2 status`
gn() { local n=$1; shift; "$GARAGE" -c "$(node_conf "$n")" "$@"; }

check_node() {
  [[ "${1:-}" =~ ^[1-9]$ ]] && [ "$1" -le "$NODES" ] || die "no node '${1:-}': nodes are 1 to $NODES"
}

# The pid of node N's server (started by this script or by hand with the same command line).
node_pid() { pgrep -fx -- "$GARAGE -c $(node_conf "$1") server" | head -n1; }
node_up() { gn "$1" status >/dev/null 2>&1; }

ensure_configs() {
  local n secret=""
  # One rpc_secret for all nodes; node 1's config holds it once written.
  [ -f "$(node_conf 1)" ] && secret=$(sed -n 's/^rpc_secret = "\(.*\)"$/\1/p' "$(node_conf 1)")
  [ -n "$secret" ] || secret=$(openssl rand -hex 32)
  for n in $(seq 1 "$NODES"); do
    mkdir -p "$(node_dir "$n")/meta" "$(node_dir "$n")/data"
    [ -f "$(node_conf "$n")" ] && continue
    cat >"$(node_conf "$n")" <<CONF
metadata_dir = "$(node_dir "$n")/meta"
data_dir = "$(node_dir "$n")/data"
db_engine = "lmdb"
replication_factor = 3
rpc_bind_addr = "127.0.0.1:$(rpc_port "$n")"
rpc_public_addr = "127.0.0.1:$(rpc_port "$n")"
rpc_secret = "$secret"

[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:$(s3_port "$n")"
root_domain = ".s3.garage.localhost"

[admin]
api_bind_addr = "127.0.0.1:$(admin_port "$n")"
admin_token = "$(openssl rand -hex 24)"
CONF
  done
}

start_node() {
  local n=$1
  node_up "$n" && return 0
  log "starting Garage node $n"
  nohup "$GARAGE" -c "$(node_conf "$n")" server >>"$(node_dir "$n")/garage.log" 2>&1 &
  for _ in $(seq 1 100); do node_up "$n" && return 0; sleep 0.2; done
  die "Garage node $n did not come up (see $(node_dir "$n")/garage.log)"
}

# stop_node N [signal]: TERM waits up to 10 s for a clean exit, then kills.
stop_node() {
  local n=$1 sig=${2:-TERM} pid
  pid=$(node_pid "$n")
  if [ -z "$pid" ]; then log "Garage node $n is not running"; return 0; fi
  log "stopping Garage node $n (pid $pid, SIG$sig)"
  kill -"$sig" "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 25); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    ! kill -0 "$pid" 2>/dev/null || die "Garage node $n (pid $pid) did not stop"
  fi
  wait_seen_down "$n"
}

# After node N stops: wait until the running nodes no longer count it as up, so that what a
# test does next meets a cluster that knows it is degraded.
wait_seen_down() {
  local n=$1 id m seen up
  id=$(node_id "$n")
  for _ in $(seq 1 300); do
    seen=0
    for m in $(seq 1 "$NODES"); do
      [ "$m" != "$n" ] && [ -n "$(node_pid "$m")" ] || continue
      if ! up=$(nodes_up_seen_by "$m" 2>/dev/null) || grep -qx "$id" <<<"$up"; then seen=1; fi
    done
    [ "$seen" -eq 0 ] && return 0
    sleep 0.2
  done
  die "the other nodes still count node $n as up after 60 s"
}

# `garage json-api <endpoint>` as node N, piped into a python3 snippet reading it as `d`.
json() {
  local n=$1 endpoint=$2 code=$3; shift 3
  gn "$n" json-api "$endpoint" | python3 -c "import json, sys; d = json.load(sys.stdin); $code" "$@"
}

node_id() { gn "$1" node id -q 2>/dev/null | cut -d@ -f1; }

# Ids of the nodes node N currently has a connection to (itself included).
nodes_up_seen_by() { json "$1" GetClusterStatus 'print("\n".join(x["id"] for x in d["nodes"] if x["isUp"]))'; }

ensure_layout() {
  local n ids=() todo version staged
  for n in $(seq 1 "$NODES"); do ids+=("$(node_id "$n")"); done
  # Nodes with neither a role nor a staged role change: "<node number> <id>" each.
  todo=$(json 1 GetClusterLayout '
have = {r["id"] for r in d["roles"]} | {c["id"] for c in d["stagedRoleChanges"]}
for i, id in enumerate(sys.argv[1:], 1):
    if id not in have: print(i, id)' "${ids[@]}")
  while read -r n id; do
    [ -n "${n:-}" ] || continue
    log "assigning node $n to zone dc$n"
    gn 1 layout assign -z "dc$n" -c 10G "$id" >/dev/null
  done <<<"$todo"
  read -r version staged < <(json 1 GetClusterLayout 'print(d["version"], len(d["stagedRoleChanges"]))')
  if [ "$staged" -gt 0 ]; then
    log "applying cluster layout version $((version + 1))"
    gn 1 layout apply --version "$((version + 1))" >/dev/null
  fi
}

# Healthy: node 1 is connected to every storage node and every partition has all its copies.
cluster_healthy() { [ "$(json 1 GetClusterHealth 'print(d["status"])' 2>/dev/null)" = healthy ]; }

# Every running node counts every other running one as up: `garage node connect` the pairs
# that are not (a restarted node would reconnect from its peer list on its own, but only after
# a retry delay), and wait until they are.
ensure_connected() {
  local m k running=() ids=() up missing first=1
  for m in $(seq 1 "$NODES"); do
    if [ -n "$(node_pid "$m")" ]; then running+=("$m"); fi
    ids[m]=$(node_id "$m")
  done
  for _ in $(seq 1 150); do
    missing=0
    for m in "${running[@]}"; do
      up=$(nodes_up_seen_by "$m" 2>/dev/null || true)
      for k in "${running[@]}"; do
        grep -qx "${ids[$k]}" <<<"$up" && continue
        missing=1
        [ "$first" -eq 1 ] && log "connecting node $m to node $k"
        gn "$m" node connect "${ids[$k]}@127.0.0.1:$(rpc_port "$k")" >/dev/null 2>&1 || true
      done
    done
    [ "$missing" -eq 0 ] && return 0
    first=0
    sleep 0.2
  done
  die "the running Garage nodes did not all connect to each other within 30 s"
}

wait_healthy() {
  for _ in $(seq 1 150); do cluster_healthy && return 0; sleep 0.2; done
  gn 1 status >&2 || true
  die "the Garage cluster is not healthy after 30 s"
}

env_key_ok() {
  [ -f "$CLUSTER_ENV" ] && grep -qx "S3_ENDPOINT=$S3_ENDPOINT" "$CLUSTER_ENV" \
    && grep -q "^S3_ACCESS_KEY_ID=GK" "$CLUSTER_ENV" \
    && gn 1 key info "$(sed -n 's/^S3_ACCESS_KEY_ID=//p' "$CLUSTER_ENV")" >/dev/null 2>&1
}

ensure_bucket_and_key() {
  for _ in $(seq 1 50); do gn 1 bucket list >/dev/null 2>&1 && break; sleep 0.2; done
  gn 1 bucket info "$S3_BUCKET" >/dev/null 2>&1 || gn 1 bucket create "$S3_BUCKET" >/dev/null
  if ! env_key_ok; then
    local out id secret
    out=$(gn 1 key create "wearhouse-cluster-$(date +%s)")
    id=$(printf '%s\n' "$out" | sed -n 's/^Key ID: *//p')
    secret=$(printf '%s\n' "$out" | sed -n 's/^Secret key: *//p')
    [ -n "$id" ] && [ -n "$secret" ] || die "could not read the new Garage key: $out"
    gn 1 bucket allow --read --write --owner "$S3_BUCKET" --key "$id" >/dev/null
    cat >"$CLUSTER_ENV" <<ENV
S3_ENDPOINT=$S3_ENDPOINT
S3_REGION=garage
S3_BUCKET=$S3_BUCKET
S3_ACCESS_KEY_ID=$id
S3_SECRET_ACCESS_KEY=$secret
S3_FORCE_PATH_STYLE=true
ENV
  fi
  ( set -a; . "$CLUSTER_ENV"; set +a; python3 "$(dirname "$0")/s3_put_cors.py" ) || die "could not set the bucket's CORS rules"
}

up() {
  local n
  [ -x "$GARAGE" ] || die "no Garage at $GARAGE (scripts/stack.sh builds it)"
  ensure_configs
  for n in $(seq 1 "$NODES"); do start_node "$n"; done
  ensure_connected
  ensure_layout
  wait_healthy
  ensure_bucket_and_key
}

status() {
  local n
  for n in $(seq 1 "$NODES"); do
    if node_up "$n"; then gn "$n" status; return; fi
  done
  die "no Garage cluster node is running"
}

usage() { die "usage: $0 up | status | start N | stop N | kill N"; }

case "${1:-}" in
  up) up ;;
  status) status ;;
  start) check_node "${2:-}"; [ -f "$(node_conf "$2")" ] || die "no cluster yet: run '$0 up' first"
         start_node "$2"; ensure_connected ;;
  stop) check_node "${2:-}"; stop_node "$2" TERM ;;
  kill) check_node "${2:-}"; stop_node "$2" KILL ;;
  *) usage ;;
esac
