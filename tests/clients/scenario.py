"""An integrator's first steps, through the Python client that openapi-python-client generates
from the served document (tests/e2e/clients.rs generates it and runs this against the service).

Environment: WEARHOUSE_URL, ADMIN_EMAIL, ADMIN_PASSWORD; PYTHONPATH holds the generated client.
Prints one line a step; exits non-zero at the first step that does not hold.
"""

import io
import os
import sys
import time
import urllib.request
import zipfile

from wearhouse_client import AuthenticatedClient, Client
from wearhouse_client.api.api_keys import api_keys_create
from wearhouse_client.api.auth import auth_login
from wearhouse_client.api.connect_links import connect_links_create
from wearhouse_client.api.data import timeseries_list
from wearhouse_client.api.sdk import sdk_sync_upload
from wearhouse_client.api.sdk_tokens import invitation_codes_create, invitation_codes_redeem
from wearhouse_client.api.summaries import summaries_activity
from wearhouse_client.api.sync import sync_runs_list
from wearhouse_client.api.users import exports_create, exports_get, users_create
from wearhouse_client.api.webhooks import webhook_endpoints_create
from wearhouse_client.models import (
    ApiKeyCreated,
    ApiKeyIn,
    ConnectLinkCreated,
    ConnectLinkIn,
    CursorPageActivityDay,
    CursorPageSampleOut,
    EndpointIn,
    EndpointOut,
    ExportOut,
    InvitationOut,
    LoginForm,
    LoginOut,
    RedeemIn,
    SdkPayload,
    TokenOut,
    UploadOut,
    UserIn,
    UserOut,
)
from wearhouse_client.types import UNSET

BASE = os.environ["WEARHOUSE_URL"]


def expect(cond, what):
    if not cond:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {what}")


def main():
    anonymous = Client(base_url=BASE)
    login = auth_login.sync(
        client=anonymous,
        body=LoginForm(username=os.environ["ADMIN_EMAIL"], password=os.environ["ADMIN_PASSWORD"]),
    )
    expect(isinstance(login, LoginOut), "log in as the developer")
    developer = AuthenticatedClient(base_url=BASE, token=login.access_token)

    created = api_keys_create.sync(client=developer, body=ApiKeyIn(name="python client"))
    expect(isinstance(created, ApiKeyCreated) and created.key, "create an API key")
    api = AuthenticatedClient(
        base_url=BASE, token=created.key, prefix="", auth_header_name="X-Service-API-Key"
    )

    user = users_create.sync(client=api, body=UserIn(external_user_id="py-1"))
    expect(isinstance(user, UserOut), "create a user")
    user_id = str(user.id)

    # The user's app onboards with an invitation code, redeemed without credentials.
    invitation = invitation_codes_create.sync(user_id, client=api)
    expect(isinstance(invitation, InvitationOut) and len(invitation.code) == 8, "make an invitation code")
    tokens = invitation_codes_redeem.sync(client=anonymous, body=RedeemIn(code=invitation.code))
    expect(isinstance(tokens, TokenOut) and str(tokens.user_id) == user_id, "redeem it for SDK tokens")

    # For cloud wearables: a connect link to send the user, to a page the service serves.
    link = connect_links_create.sync(user_id, client=api, body=ConnectLinkIn(expires_in_minutes=60))
    expect(isinstance(link, ConnectLinkCreated) and "/connect/" in link.url, "make a connect link")

    # An hour of heart rate every minute and the day's steps, as the iOS SDK sends them.
    source = {"name": "Apple Watch", "bundleIdentifier": "com.apple.health", "deviceModel": "Watch6,2"}
    records = [
        {"type": "HKQuantityTypeIdentifierHeartRate", "startDate": f"2026-03-14T10:{m:02d}:00Z",
         "zoneOffset": "+01:00", "value": 60 + m % 20, "unit": "count/min", "source": source}
        for m in range(60)
    ] + [
        {"type": "HKQuantityTypeIdentifierStepCount", "startDate": f"2026-03-14T{h:02d}:00:00Z",
         "zoneOffset": "+01:00", "value": 500, "unit": "count", "source": source}
        for h in range(8, 12)
    ]
    payload = SdkPayload.from_dict({
        "provider": "apple", "sdkVersion": "0.13.0", "syncTimestamp": "2026-03-14T12:00:00Z",
        "data": {"records": records, "sleep": [], "workouts": []},
    })
    accepted = sdk_sync_upload.sync(user_id, client=api, body=payload)
    expect(isinstance(accepted, UploadOut) and accepted.status_code == 202, "post an SDK batch")

    status = None
    for _ in range(300):
        runs = sync_runs_list.sync(user_id, client=api) or []
        run = next((r for r in runs if str(r.run_id) == str(accepted.task_id)), None)
        status = run.status if run else None
        if status in ("success", "partial", "failed"):
            break
        time.sleep(0.1)
    expect(status == "success", f"its sync run succeeds (status {status})")

    samples, cursor, pages = [], UNSET, 0
    while True:
        page = timeseries_list.sync(
            user_id, client=api, start_time="2026-03-14T00:00:00Z", end_time="2026-03-15T00:00:00Z",
            types=["heart_rate"], limit=25, cursor=cursor,
        )
        expect(isinstance(page, CursorPageSampleOut), f"timeseries page {pages + 1}")
        samples += page.data
        pages += 1
        if not page.pagination.has_more:
            break
        cursor = page.pagination.next_cursor
    expect(len(samples) == 60 and pages == 3, f"60 heart-rate samples over 3 pages ({len(samples)}, {pages})")

    days = summaries_activity.sync(user_id, client=api, start_date="2026-03-14", end_date="2026-03-14")
    expect(isinstance(days, CursorPageActivityDay) and len(days.data) == 1, "an activity summary day")
    steps = days.data[0].to_dict().get("steps")
    expect(steps == 2000, f"its steps are the day's total ({steps})")

    # A portability request answered with one call: the user's whole record, then its download.
    export = exports_create.sync(user_id, client=api)
    expect(isinstance(export, ExportOut) and export.status == "queued", "ask for an export")
    for _ in range(300):
        export = exports_get.sync(user_id, str(export.id), client=api)
        if export.status in ("done", "failed"):
            break
        time.sleep(0.1)
    expect(export.status == "done" and export.download_url, f"the export is done ({export.status})")
    archive = zipfile.ZipFile(io.BytesIO(urllib.request.urlopen(export.download_url).read()))
    lines = archive.read("samples.jsonl").decode().splitlines()
    expect(len(lines) == 64, f"it holds the 64 samples ({len(lines)})")

    # Webhook endpoints are the developer's to manage (an API key is not enough).
    endpoint = webhook_endpoints_create.sync(
        client=developer,
        body=EndpointIn(url="https://example.com/hooks/wearhouse", filter_types=["workout.created"]),
    )
    expect(isinstance(endpoint, EndpointOut), "register a webhook endpoint")


if __name__ == "__main__":
    main()
