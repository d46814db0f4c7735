#!/usr/bin/env bash
# Runs wearhouse on this machine: brings up PostgreSQL + TimescaleDB and Redis when missing
# (scripts/stack.sh), builds the release binary, and starts the API and the worker in one
# process on 127.0.0.1:8000. Arguments are passed to `wearhouse` (default: `all`), e.g.
#   ./scripts/run.sh all --bind 0.0.0.0:8000
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo not found: install Rust with rustup (https://rustup.rs)" >&2; exit 1; }
./scripts/stack.sh
[ $# -gt 0 ] || set -- all
exec cargo run --release --locked --quiet -- "$@"
