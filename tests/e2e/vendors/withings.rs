//! The Withings Public Health Data API (`docs/vendors/withings.md`): `action=requesttoken` and
//! the `{status, body}` envelope (a refused grant is a status in a 200, so is the rate limit),
//! measures as value × 10^unit, form notifications, subscriptions, the nonce-signed revocation.

use serde_json::{Value, json};

use super::mock::{Page, VendorApi};
use super::{Case, Expected, Notification, conformance};

fn ok(body: Value) -> Value {
    json!({"status": 0, "body": body})
}

fn api() -> VendorApi {
    let pages = vec![
        Page::get("/measure", ok(json!({"timezone": "Europe/Paris", "more": 0, "offset": 0, "measuregrps": [
            {"grpid": 12, "attrib": 0, "date": 1594245600, "category": 1,
             "measures": [{"value": 65750, "type": 1, "unit": -3}, {"value": 180, "type": 6, "unit": -1},
                          {"value": 178, "type": 4, "unit": -2}]},
            {"grpid": 13, "attrib": 0, "date": 1594257200, "category": 1,
             "measures": [{"value": 120, "type": 10, "unit": 0}, {"value": 80, "type": 9, "unit": 0},
                          {"value": 61, "type": 11, "unit": 0}]}]})))
        .with("action", "getmeas"),
        Page::get("/v2/measure", ok(json!({"more": false, "offset": 0, "activities": [{"date": "2020-06-24",
            "timezone": "Europe/Paris", "steps": 6200, "distance": 3000, "elevation": 100, "calories": 1200,
            "totalcalories": 3500}]})))
        .with("action", "getactivity"),
        Page::get("/v2/measure", ok(json!({"more": false, "offset": 0, "series": [{"id": 12345, "category": 2,
            "timezone": "Europe/Paris", "startdate": 1594245600, "enddate": 1594257200,
            "data": {"calories": 350, "hr_average": 145, "hr_min": 98, "hr_max": 172, "pause_duration": 600,
                     "steps": 9800, "distance": 10230}}]})))
        .with("action", "getworkouts"),
        Page::get("/v2/measure", ok(json!({"series": {
            "1594245600": {"heart_rate": 62, "duration": 60},
            "1594245660": {"heart_rate": 65, "spo2_auto": 97}}})))
        .with("action", "getintradayactivity"),
        Page::get("/v2/sleep", ok(json!({"series": [
            {"startdate": 1594159200, "enddate": 1594160100, "state": 1,
             "hr": {"1594159200": 54, "1594159260": 53}, "rr": {"1594159200": 14}, "rmssd": {"1594159200": 41}},
            {"startdate": 1594160100, "enddate": 1594161000, "state": 2}]})))
        .with("action", "get"),
        Page::post("/notify", ok(json!({}))).with("action", "subscribe"),
        Page::post("/v2/signature", ok(json!({"nonce": "nonce-1"}))).with("action", "getnonce"),
    ];
    let mut api = VendorApi::new("/v2/oauth2", pages, "/measure");
    api.envelope = true;
    api.default_page = ok(json!({}));
    api.token_fields =
        json!({"userid": 363, "scope": "user.info,user.metrics,user.activity,user.sleepevents"});
    api.open = vec!["/v2/signature"];
    api
}

fn webhook(real: bool) -> Notification {
    // Withings signs nothing: what is refused is a body that is no notification of its.
    let body: &[u8] = if real {
        b"userid=363&appli=1&startdate=1594245600&enddate=1594257200"
    } else {
        b"{\"userid\": 363}"
    };
    Notification {
        headers: Vec::new(),
        body: body.to_vec(),
        content_type: "application/x-www-form-urlencoded",
    }
}

fn deregistration(_: u32) -> Notification {
    let body = b"userid=363&appli=46&action=unlink".to_vec();
    Notification { headers: Vec::new(), body, content_type: "application/x-www-form-urlencoded" }
}

#[tokio::test]
async fn withings() {
    conformance(Case {
        slug: "withings",
        api: api(),
        api_prefix: "",
        vars: vec![("WEBHOOK_TOKEN", "withings-url-token".into())],
        authorize: "https://account.withings.com/oauth2_user/authorize2",
        scope: Some("user.info,user.metrics,user.activity,user.sleepevents"),
        pkce: false,
        vendor_user: "363",
        connect_calls: vec!["POST /notify [action=subscribe&callbackurl=http://127.0.0.1:8000/api/v1/providers/withings/webhooks?token=withings-url-token&appli=1]"],
        revoke_calls: vec!["POST /v2/signature [action=getnonce", "POST /v2/oauth2 [action=revoke&client_id=test-app&nonce=nonce-1"],
        handshakes: vec![("", 200)],
        webhook: Some(webhook),
        deregistration: Some(deregistration),
        backfills: false,
        hook_query: "token=withings-url-token",
        expected: Expected {
            // Heart rate: the reading's pulse (61), the night's two (54, 53), two intraday (62, 65).
            series: vec![
                ("weight", 1, 65.75),
                ("body_fat_percentage", 1, 18.0),
                ("height", 1, 178.0),
                ("blood_pressure_systolic", 1, 120.0),
                ("blood_pressure_diastolic", 1, 80.0),
                ("heart_rate", 5, 295.0),
                ("steps", 1, 6200.0),
                ("distance_walking_running", 1, 3000.0),
                ("flights_climbed", 1, 100.0),
                ("energy", 1, 1200.0),
                ("total_energy", 1, 3500.0),
                ("respiratory_rate", 1, 14.0),
                ("heart_rate_variability_rmssd", 1, 41.0),
                ("oxygen_saturation", 1, 97.0),
            ],
            // 11,600 s from start to end, 600 of them paused.
            workouts: vec![("running", 11_000, Some(350.0), Some(10230.0))],
            sleep_sessions: 1,
        },
    })
    .await;
}
