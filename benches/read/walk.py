"""Walks one user's whole year of heart rate with the cursor, 100 samples a page, and prints the
time of each stretch of pages: a cursor page must cost the same at the end as at the start.

    python3 benches/read/walk.py --port 8091 --key <api key> [--user <uuid>]
"""

import json
import statistics
import urllib.parse

from client import Client, arguments, p99

parser = arguments(__doc__)
parser.add_argument("--stretch", type=int, default=500, help="pages per reported stretch")
args = parser.parse_args()

client = Client(args.port, args.key)
base = (f"/api/v1/users/{args.user}/timeseries?types=heart_rate&limit=100"
        "&start_time=2025-11-01T00:00:00Z&end_time=2026-11-01T00:00:00Z")
cursor, times, samples, seen_last = None, [], 0, None
while True:
    path = base + (f"&cursor={urllib.parse.quote(cursor)}" if cursor else "")
    ms, body = client.get(path)
    times.append(ms)
    page = json.loads(body)
    data = page["data"]
    samples += len(data)
    # No duplicate and no gap: timestamps strictly increase across pages.
    for s in data:
        if seen_last is not None and s["timestamp"] <= seen_last:
            raise SystemExit(f"out of order at page {len(times)}: {s['timestamp']} after {seen_last}")
        seen_last = s["timestamp"]
    cursor = page["pagination"]["next_cursor"]
    if not page["pagination"]["has_more"] or not cursor:
        break

print(f"pages: {len(times)}, samples: {samples}, total: {sum(times) / 1000:.1f} s")
print("pages        | mean ms | p50 ms | p99 ms")
for i in range(0, len(times), args.stretch):
    chunk = sorted(times[i:i + args.stretch])
    print(f"{i + 1:>5}-{i + len(chunk):<6} | {statistics.mean(chunk):7.2f} | {statistics.median(chunk):6.2f} | {p99(chunk):6.2f}")
