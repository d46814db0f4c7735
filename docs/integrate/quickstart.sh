#!/usr/bin/env bash
# From a developer login to a webhook endpoint, with curl. Needs: WEARHOUSE_URL (e.g.
# http://127.0.0.1:8000), ADMIN_EMAIL, ADMIN_PASSWORD, and WEBHOOK_URL (where you receive).
set -euo pipefail
api="$WEARHOUSE_URL/api/v1"
field() { python3 -c "import json, sys; print(json.load(sys.stdin)$1)"; }

# 1. Log in (OAuth 2.0 password form) and create an API key for your backend.
token=$(curl -sf "$api/auth/login" -d "username=$ADMIN_EMAIL" -d "password=$ADMIN_PASSWORD" \
  | field '["access_token"]')
key=$(curl -sf "$api/developer/api-keys" -H "Authorization: Bearer $token" \
  -H 'content-type: application/json' -d '{"name": "my backend"}' | field '["key"]')

# 2. Register where webhooks go (a developer's call) and keep its signing secret.
endpoint=$(curl -sf "$api/webhooks/endpoints" -H "Authorization: Bearer $token" \
  -H 'content-type: application/json' -d "{\"url\": \"$WEBHOOK_URL\"}" | field '["id"]')
secret=$(curl -sf "$api/webhooks/endpoints/$endpoint/secret" -H "Authorization: Bearer $token" \
  | field '["key"]')

# 3. Create a user and an invitation code for their app, which redeems it (no credentials)
#    for the user's SDK token; then send what the mobile SDK would (a minute of heart rate).
user=$(curl -sf "$api/users" -H "X-Service-API-Key: $key" -H 'content-type: application/json' \
  -d '{"external_user_id": "user-42"}' | field '["id"]')
code=$(curl -sf -X POST "$api/users/$user/invitation-code" -H "X-Service-API-Key: $key" \
  | field '["code"]')
sdk_token=$(curl -sf "$api/invitation-code/redeem" -H 'content-type: application/json' \
  -d "{\"code\": \"$code\"}" | field '["access_token"]')
task=$(curl -sf "$api/sdk/users/$user/sync" -H "Authorization: Bearer $sdk_token" \
  -H 'content-type: application/json' -d '{
    "provider": "apple", "sdkVersion": "0.13.0", "syncTimestamp": "2026-03-14T12:00:00Z",
    "data": {"records": [{"type": "HKQuantityTypeIdentifierHeartRate", "value": 72,
      "unit": "count/min", "startDate": "2026-03-14T10:00:00Z", "zoneOffset": "+01:00",
      "source": {"name": "Apple Watch", "deviceModel": "Watch6,2"}}], "sleep": [], "workouts": []}}' \
  | field '["task_id"]')

# 4. Wait for its sync run, then read the samples back.
for _ in $(seq 1 100); do
  status=$(curl -sf "$api/users/$user/sync/runs" -H "X-Service-API-Key: $key" | python3 -c \
    "import json, sys; print(next((r['status'] for r in json.load(sys.stdin) if r['run_id'] == '$task'), ''))")
  [ "$status" = success ] && break
  sleep 0.2
done
curl -sf "$api/users/$user/timeseries?start_time=2026-03-14&end_time=2026-03-15&types=heart_rate" \
  -H "X-Service-API-Key: $key"
echo

# 5. For cloud wearables (Oura, Garmin, Whoop, ...), make a connect link and send it to the user
#    (a message, an e-mail): the page it opens, served here, connects their accounts. No page
#    of yours needed; it works in the first browser that opens it, for 30 minutes.
link=$(curl -sf "$api/users/$user/connect-links" -H "X-Service-API-Key: $key" \
  -H 'content-type: application/json' -d '{}' | field '["url"]')
echo "CONNECT_LINK=$link"
echo "USER=$user"
echo "WEBHOOK_SECRET=$secret"
