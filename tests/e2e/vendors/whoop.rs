//! WHOOP's API v2 (`docs/vendors/whoop.md`): credentials in the form, `records` pages with
//! `next_token`, kilojoules, base64 signatures over the timestamp and the body.

use base64::Engine;
use hmac::Mac;
use serde_json::json;

use super::mock::{CLIENT_SECRET, Page, VendorApi};
use super::{Case, Expected, Notification, conformance};

fn api() -> VendorApi {
    let pages = vec![
        Page::get("/developer/v2/user/profile/basic", json!({"user_id": 10129})),
        Page::get("/developer/v2/activity/sleep", json!({"records": [{"id": "s-0", "start": "2026-03-09T13:00:00.000Z",
            "end": "2026-03-09T13:40:00.000Z", "timezone_offset": "+01:00", "nap": true, "score_state": "SCORED",
            "score": {"stage_summary": {"total_light_sleep_time_milli": 2400000}}}]}))
        .with("nextToken", "more"),
        Page::get("/developer/v2/activity/sleep", json!({"records": [{"id": "s-1", "start": "2026-03-09T23:00:00.000Z",
            "end": "2026-03-10T07:00:00.000Z", "timezone_offset": "+01:00", "nap": false, "score_state": "SCORED",
            "score": {"stage_summary": {"total_light_sleep_time_milli": 14400000, "total_slow_wave_sleep_time_milli": 5400000,
                "total_rem_sleep_time_milli": 5400000}, "respiratory_rate": 15.5}}], "next_token": "more"})),
        Page::get("/developer/v2/activity/workout", json!({"records": [{"id": "w-1", "start": "2026-03-10T17:00:00.000Z",
            "end": "2026-03-10T17:45:00.000Z", "timezone_offset": "+01:00", "sport_name": "cycling", "score_state": "SCORED",
            "score": {"kilojoule": 2092.0, "average_heart_rate": 140, "max_heart_rate": 171, "distance_meter": 20000.0}}]})),
        Page::get("/developer/v2/cycle", json!({"records": [{"id": 7, "start": "2026-03-09T23:00:00.000Z",
            "end": "2026-03-10T23:00:00.000Z", "timezone_offset": "+01:00", "score_state": "SCORED", "score": {"kilojoule": 10460.0}}]})),
        Page::get("/developer/v2/recovery", json!({"records": [{"cycle_id": 7, "created_at": "2026-03-10T07:05:00.000Z",
            "score_state": "SCORED", "score": {"recovery_score": 71.0, "resting_heart_rate": 52.0, "hrv_rmssd_milli": 64.5,
            "spo2_percentage": 96.0, "skin_temp_celsius": 33.9}}]})),
    ];
    let mut api = VendorApi::new("/oauth/oauth2/token", pages, "/developer/v2/cycle");
    api.default_page = json!({"records": []});
    api.pages.push(Page::delete("/developer/v2/user/access"));
    api
}

fn webhook(signed: bool) -> Notification {
    let body = json!({"user_id": 10129, "id": "s-1", "type": "sleep.updated", "trace_id": "t"});
    let timestamp = chrono::Utc::now().timestamp_millis().to_string();
    let key = if signed { CLIENT_SECRET } else { "guess" };
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key.as_bytes()).expect("key");
    mac.update(timestamp.as_bytes());
    mac.update(body.to_string().as_bytes());
    let signature = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    Notification::json(
        &body,
        vec![("x-whoop-signature", signature), ("x-whoop-signature-timestamp", timestamp)],
    )
}

#[tokio::test]
async fn whoop() {
    conformance(Case {
        slug: "whoop",
        api: api(),
        api_prefix: "/developer",
        vars: Vec::new(),
        authorize: "https://api.prod.whoop.com/oauth/oauth2/auth",
        scope: Some("offline read:recovery read:cycles read:workout read:sleep read:profile read:body_measurement"),
        pkce: false,
        vendor_user: "10129",
        connect_calls: vec!["GET /developer/v2/user/profile/basic"],
        revoke_calls: vec!["DELETE /developer/v2/user/access auth=Bearer access-1"],
        handshakes: Vec::new(),
        webhook: Some(webhook),
        deregistration: None,
        backfills: false,
        hook_query: "",
        expected: Expected {
            // 10,460 kJ = 2,500 kcal for the day; the night's breathing rate.
            series: vec![
                ("total_energy", 1, 2500.0),
                ("recovery_score", 1, 71.0),
                ("resting_heart_rate", 1, 52.0),
                ("heart_rate_variability_rmssd", 1, 64.5),
                ("oxygen_saturation", 1, 96.0),
                ("skin_temperature", 1, 33.9),
                ("respiratory_rate", 1, 15.5),
            ],
            // 2,092 kJ = 500 kcal.
            workouts: vec![("cycling", 2700, Some(500.0), Some(20000.0))],
            sleep_sessions: 2,
        },
    })
    .await;
}
