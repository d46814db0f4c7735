#!/usr/bin/env bash
# Runs every test: unit tests and the end-to-end tests against real PostgreSQL + TimescaleDB
# and Redis, which scripts/stack.sh brings up first. Extra arguments go to the test runner.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo not found: install Rust with rustup (https://rustup.rs)" >&2; exit 1; }
./scripts/stack.sh
# The developer portal, built into the binary, and the browser its tests drive.
./scripts/portal.sh
# The TypeScript client's tools (openapi-typescript, openapi-fetch, tsc, esbuild) from their
# lockfile, for tests/e2e/clients.rs.
if [ ! -d tests/clients/ts/node_modules ] \
  || [ tests/clients/ts/package-lock.json -nt tests/clients/ts/node_modules/.package-lock.json ]; then
  npm ci --prefix tests/clients/ts --ignore-scripts --no-audit --no-fund --loglevel=error
fi
if ! command -v chromium >/dev/null; then
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
fi
# An independent Standard Webhooks implementation checks our signatures (tests/e2e/webhook_delivery.rs).
# openapi-spec-validator checks the served OpenAPI document (tests/e2e/catalogues.rs), and
# openapi-python-client generates the client tests/e2e/clients.rs drives, and aiosmtpd receives
# the team's invitation mails (tests/e2e/team.rs), and the MCP client of the `mcp` package talks
# to /mcp (tests/e2e/mcp.rs).
for module in standardwebhooks:standardwebhooks openapi_spec_validator:openapi-spec-validator \
  openapi_python_client:openapi-python-client aiosmtpd:aiosmtpd mcp:mcp==2.3.0; do
  python3 -c "import ${module%%:*}" 2>/dev/null || python3 -m pip install -q --user "${module#*:}" \
    || python3 -m pip install -q --break-system-packages --user "${module#*:}"
done
# The FHIR R4 validator for exports (tests/e2e/exports.rs): fhir.resources 6.4.0 is the last
# release whose root package is R4, and it needs pydantic 1, so it gets a venv of its own.
fhir_venv="$HOME/.cache/wearhouse/fhir-venv"
if ! "$fhir_venv/bin/python" -c "import fhir.resources" 2>/dev/null; then
  python3 -m venv "$fhir_venv"
  "$fhir_venv/bin/pip" install -q 'fhir.resources==6.4.0' 'pydantic<2'
fi
if cargo nextest --version >/dev/null 2>&1; then
  exec cargo nextest run --workspace --locked --no-fail-fast "$@"
else
  exec cargo test --workspace --locked --no-fail-fast "$@"
fi
