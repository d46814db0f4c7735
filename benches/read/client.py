"""What the read scripts share: their arguments (the service's port, an API key, a user) and a
timed GET on one kept-alive connection."""

import argparse
import http.client
import time

# User 1 of the generated set: heart rate every minute for a year (525,600 samples).
HEAVY_USER = "00000000-0000-4000-8000-000000000001"


def arguments(doc):
    """The common arguments; the caller adds its own and parses."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--port", type=int, default=8091)
    parser.add_argument("--key", required=True)
    parser.add_argument("--user", default=HEAVY_USER)
    return parser


class Client:
    def __init__(self, port, key):
        self.conn = http.client.HTTPConnection("127.0.0.1", port)
        self.key = key

    def get(self, path):
        """(milliseconds, body) of a GET that must answer 200."""
        t0 = time.perf_counter()
        self.conn.request("GET", path, headers={"X-Service-API-Key": self.key})
        resp = self.conn.getresponse()
        body = resp.read()
        ms = (time.perf_counter() - t0) * 1000
        if resp.status != 200:
            raise SystemExit(f"{path}: {resp.status} {body[:200]!r}")
        return ms, body


def p99(sorted_times):
    return sorted_times[min(len(sorted_times) - 1, int(len(sorted_times) * 0.99))]
