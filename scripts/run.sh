#!/usr/bin/env bash
# Runs wearhouse on this machine: brings up PostgreSQL + TimescaleDB and Redis when missing
# (scripts/stack.sh), builds the release binary, and starts the API and the worker in one
# process on 127.0.0.1:8000. Arguments are passed to `wearhouse` (default: `all`), e.g.
#   ./scripts/run.sh all --bind 0.0.0.0:8000
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo not found: install Rust with rustup (https://rustup.rs)" >&2; exit 1; }
./scripts/stack.sh
# The developer portal, embedded in the binary (served at /).
./scripts/portal.sh
# The local S3 server's settings (an explicit environment wins).
s3_env="${WEARHOUSE_CACHE_DIR:-$HOME/.cache/wearhouse}/s3.env"
if [ -f "$s3_env" ]; then
  while IFS='=' read -r k v; do [ -n "$k" ] && [ -z "${!k:-}" ] && export "$k=$v"; done <"$s3_env"
fi
# The master key seals the secrets the service stores. Made once, kept beside the cache (mode
# 600); back it up: without it those secrets cannot be read. An explicit MASTER_KEY wins.
if [ -z "${MASTER_KEY:-}" ]; then
  key_file="${WEARHOUSE_CACHE_DIR:-$HOME/.cache/wearhouse}/master.key"
  if [ ! -s "$key_file" ]; then
    mkdir -p "$(dirname "$key_file")"
    (umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$key_file")
    echo "[run] made a master key in $key_file (keep a copy: it seals the stored secrets)" >&2
  fi
  MASTER_KEY="$(cat "$key_file")"
  export MASTER_KEY
fi
[ $# -gt 0 ] || set -- all
# Cargo's own progress (not --quiet): the first build on a fresh machine takes minutes.
target="${CARGO_TARGET_DIR:-target}"
[ -x "$target/release/wearhouse" ] || echo "[run] building the release binary (first time: 10+ minutes on 2 cores)" >&2
cargo build --release --locked --bin wearhouse
exec "$target/release/wearhouse" "$@"
