#!/usr/bin/env bash
# The review's commands (issue 37): what a reviewer of the layering runs before a change lands.
#   1. state literals in SQL outside their partial-index predicates (each left one says so);
#   2. module cycles inside each crate;
#   3. public items no other crate names (each must be returned by something public);
#   4. clippy with unreachable_pub (workspace lint) and -D warnings.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== state literals (pg_stat_activity's 'active' and commented index predicates expected)"
grep -rnE "'(queued|running|failed|revoked|completed|processing|done|expired|active|pending)'|status (=|<>|in) ?\(?[0-9]" \
    --include=*.rs schema/src ingest/src api/src vendors/src webhooks/src queue/src rules/src src \
    | grep -vE "status = [2-5][0-9][0-9]" || true

echo "== module cycles"
for crate in schema queue rules ingest api webhooks vendors; do
    python3 scripts/review/cycles.py "$crate/src"
done

echo "== public items no other crate names"
python3 scripts/review/unnamed_pub.py

echo "== clippy"
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings
