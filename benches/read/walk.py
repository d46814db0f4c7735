"""Walks one user's whole year of heart rate with the cursor, 100 samples a page, and prints the
time of each stretch of pages: a cursor page must cost the same at the end as at the start.

    python3 benches/read/walk.py --port 8091 --key <api key> [--user <uuid>]
"""

import argparse
import http.client
import json
import statistics
import time
import urllib.parse

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, default=8091)
parser.add_argument("--key", required=True)
# User 1 of the generated set: heart rate every minute for a year (525,600 samples).
parser.add_argument("--user", default="00000000-0000-4000-8000-000000000001")
parser.add_argument("--stretch", type=int, default=500, help="pages per reported stretch")
args = parser.parse_args()

conn = http.client.HTTPConnection("127.0.0.1", args.port)
base = (f"/api/v1/users/{args.user}/timeseries?types=heart_rate&limit=100"
        "&start_time=2025-11-01T00:00:00Z&end_time=2026-11-01T00:00:00Z")
cursor, times, samples, seen_last = None, [], 0, None
while True:
    path = base + (f"&cursor={urllib.parse.quote(cursor)}" if cursor else "")
    t0 = time.perf_counter()
    conn.request("GET", path, headers={"X-Service-API-Key": args.key})
    resp = conn.getresponse()
    body = resp.read()
    times.append((time.perf_counter() - t0) * 1000)
    if resp.status != 200:
        raise SystemExit(f"page {len(times)}: {resp.status} {body[:200]!r}")
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
    p99 = chunk[min(len(chunk) - 1, int(len(chunk) * 0.99))]
    print(f"{i + 1:>5}-{i + len(chunk):<6} | {statistics.mean(chunk):7.2f} | {statistics.median(chunk):6.2f} | {p99:6.2f}")
