#!/usr/bin/env python3
"""Sets a bucket's CORS rules (PutBucketCors, AWS SigV4), standard library only.

Browsers upload export parts straight to the bucket: PUT and POST must be allowed and the ETag
header readable. Used by scripts/stack.sh, reading the S3_* settings from the environment.
"""
import base64
import datetime
import hashlib
import hmac
import os
import sys
import urllib.parse
import urllib.request

BODY = (
    "<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin>"
    "<AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod>"
    "<AllowedMethod>POST</AllowedMethod><AllowedHeader>*</AllowedHeader>"
    "<ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3600</MaxAgeSeconds>"
    "</CORSRule></CORSConfiguration>"
).encode()


def sign(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def main() -> int:
    endpoint = os.environ["S3_ENDPOINT"].rstrip("/")
    region, bucket = os.environ["S3_REGION"], os.environ["S3_BUCKET"]
    key_id, secret = os.environ["S3_ACCESS_KEY_ID"], os.environ["S3_SECRET_ACCESS_KEY"]
    host = urllib.parse.urlparse(endpoint).netloc
    now = datetime.datetime.now(datetime.timezone.utc)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    payload_hash = hashlib.sha256(BODY).hexdigest()
    md5 = base64.b64encode(hashlib.md5(BODY).digest()).decode()
    headers = {
        "content-md5": md5,
        "content-type": "application/xml",
        "host": host,
        "x-amz-content-sha256": payload_hash,
        "x-amz-date": amz_date,
    }
    signed = ";".join(sorted(headers))
    canonical = "\n".join([
        "PUT", f"/{bucket}", "cors=",
        "".join(f"{k}:{headers[k]}\n" for k in sorted(headers)),
        signed, payload_hash,
    ])
    scope = f"{day}/{region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    k = sign(sign(sign(sign(("AWS4" + secret).encode(), day), region), "s3"), "aws4_request")
    signature = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={key_id}/{scope}, SignedHeaders={signed}, Signature={signature}"
    )
    request = urllib.request.Request(f"{endpoint}/{bucket}?cors=", data=BODY, method="PUT", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return 0 if response.status in (200, 204) else 1
    except urllib.error.HTTPError as e:
        print(f"PutBucketCors failed: {e.code} {e.read().decode(errors='replace')}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
