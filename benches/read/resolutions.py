"""Times the first page of heart rate at every resolution over windows of a day to a year, for
one user (by default heavy user 1: a sample a minute for a year), one request at a time:
p50 and p99 of REPEAT requests per cell, each over a random window of that length.

    python3 benches/read/resolutions.py --port 8091 --key <api key> [--user <uuid>] [--repeat 40]
"""

import datetime
import random

from client import Client, arguments, p99

parser = arguments(__doc__)
parser.add_argument("--repeat", type=int, default=40)
args = parser.parse_args()

client = Client(args.port, args.key)
year0 = datetime.datetime(2025, 11, 1, tzinfo=datetime.timezone.utc)
rng = random.Random(7)
print(f"user {args.user}, {args.repeat} first pages of 100 per cell: p50 / p99 ms")
print("resolution | " + " | ".join(f"{d:>3} d window" for d in (1, 7, 30, 365)))
for resolution in ("raw", "1min", "5min", "15min", "1hour", "1day"):
    cells = []
    for days in (1, 7, 30, 365):
        times = []
        for _ in range(args.repeat):
            start = year0 + datetime.timedelta(days=0 if days == 365 else rng.randrange(0, 365 - days))
            end = start + datetime.timedelta(days=days)
            path = (f"/api/v1/users/{args.user}/timeseries?types=heart_rate&limit=100"
                    f"&resolution={resolution}&start_time={start:%Y-%m-%dT%H:%M:%SZ}"
                    f"&end_time={end:%Y-%m-%dT%H:%M:%SZ}")
            times.append(client.get(path)[0])
        times.sort()
        cells.append(f"{times[len(times) // 2]:5.1f} / {p99(times):5.1f}")
    print(f"{resolution:>10} | " + " | ".join(cells))
