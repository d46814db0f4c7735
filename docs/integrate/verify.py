"""Verifies a wearhouse webhook with the official Standard Webhooks library
(`pip install standardwebhooks`). In your receiver, pass the raw body and the request headers.

    python3 verify.py headers.json body.json     # WEBHOOK_SECRET=whsec_... ; prints the event type
"""

import json
import os
import sys

from standardwebhooks.webhooks import Webhook


def verify(secret: str, headers: dict, body: bytes) -> dict:
    # Raises standardwebhooks.webhooks.WebhookVerificationError when the signature or the
    # timestamp (5 minutes of tolerance) does not hold: answer 400 then, and do not process it.
    return Webhook(secret).verify(body, headers)


if __name__ == "__main__":
    headers = json.load(open(sys.argv[1]))
    body = open(sys.argv[2], "rb").read()
    event = verify(os.environ["WEBHOOK_SECRET"], headers, body)
    print(event["type"])
