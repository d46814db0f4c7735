#!/usr/bin/env bash
# Builds the developer portal (portal/) into portal/dist, which the service embeds: installs
# Node.js from Debian when it is missing, the portal's packages from its lockfile (npm ci), and
# bundles it. Run again, it only rebuilds when a source changed.
set -euo pipefail
cd "$(dirname "$0")/../portal"
sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v npm >/dev/null; then
  echo "[portal] installing Node.js and npm from Debian" >&2
  sudo_ apt-get update -q && sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm
fi
# The lockfile decides every version; install scripts are not run (esbuild finds its binary
# through its platform package).
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
fi
newest_source=$(find index.html connect.html build.mjs src package-lock.json -type f -newer dist/index.html 2>/dev/null | head -1 || true)
if [ ! -f dist/index.html ] || [ -n "$newest_source" ]; then
  npm run --silent build
fi
