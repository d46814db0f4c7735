#!/usr/bin/env python3
"""Fingerprints of timeseries pages on the read benchmark's data set, one line per page walk, to
compare two builds (or a set before and after sealing) answer for answer:

    python3 benches/read/answers.py --port 8091 --key <api key> > old.txt
    ... restart the service with the other build ...
    python3 benches/read/answers.py --port 8091 --key <api key> > new.txt
    diff old.txt new.txt    # nothing: every page the same, byte for byte

Per user (two heavy, three ordinary), resolution, window (a month, an unaligned day and a half,
the year), type filter (heart rate, none, steps) and priority filter: the first page, two more
by `next_cursor` and one back by `previous_cursor`, each as the MD5 of its body.
"""

import argparse
import hashlib
import json
import urllib.request

USERS = [1, 3, 6, 100, 777]
RESOLUTIONS = ["raw", "1min", "5min", "15min", "1hour", "1day"]
WINDOWS = [
    ("2026-03-01T00:00:00Z", "2026-03-31T00:00:00Z"),
    ("2026-03-01T10:07:00Z", "2026-03-02T13:55:00Z"),
    ("2025-11-01", "2026-11-01"),
]
TYPES = ["heart_rate", "", "steps"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=8091)
    p.add_argument("--key", required=True)
    a = p.parse_args()

    def get(path):
        r = urllib.request.Request(
            f"http://127.0.0.1:{a.port}{path}", headers={"X-Service-API-Key": a.key}
        )
        return urllib.request.urlopen(r).read()

    def md5(body):
        return hashlib.md5(body).hexdigest()[:12]

    for u in USERS:
        uid = "00000000-0000-4000-8000-%012x" % u
        for res in RESOLUTIONS:
            for start, end in WINDOWS:
                for types in TYPES:
                    for prio in ["false", "true"]:
                        path = (
                            f"/api/v1/users/{uid}/timeseries?limit=100&resolution={res}"
                            f"&start_time={start}&end_time={end}&filter_by_priority={prio}"
                        )
                        if types:
                            path += f"&types={types}"
                        body = get(path)
                        out = [md5(body)]
                        page = json.loads(body)
                        for _ in range(2):
                            cursor = page["pagination"].get("next_cursor")
                            if not cursor:
                                break
                            body = get(f"{path}&cursor={cursor}")
                            out.append(md5(body))
                            page = json.loads(body)
                        cursor = page["pagination"].get("previous_cursor")
                        if cursor:
                            out.append(md5(get(f"{path}&cursor={cursor}")))
                        print(u, res, start, end, types or "all", prio, " ".join(out))


if __name__ == "__main__":
    main()
