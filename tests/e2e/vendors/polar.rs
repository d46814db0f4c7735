//! Polar AccessLink v3 (`docs/vendors/polar.md`): Basic client authentication, no refresh
//! token, the user registered after OAuth, hex-signed webhooks.

use serde_json::json;

use super::mock::{Page, VendorApi};
use super::{Case, Expected, Notification, conformance, hex_hmac};

const SECRET: &str = "polar-signature-secret";

fn api() -> VendorApi {
    let pages = vec![
        Page::get(
            "/v3/users/sleep",
            json!({"nights": [{"date": "2020-01-01",
            "sleep_start_time": "2020-01-01T00:39:07+03:00", "sleep_end_time": "2020-01-01T09:19:37+03:00",
            "hypnogram": {"00:39": 2, "00:50": 3, "01:23": 5},
            "heart_rate_samples": {"00:41": 76, "00:46": 77, "00:51": 76}}]}),
        ),
        Page::get(
            "/v3/exercises",
            json!([{"id": "2AC312F", "device": "Polar M400",
            "start_time": "2008-10-13T10:40:02", "start_time_utc_offset": 180, "duration": "PT2H44M",
            "calories": 530, "distance": 1600, "heart_rate": {"average": 129, "maximum": 147}, "sport": "RUNNING"}]),
        ),
        Page::get(
            "/v3/users/activities",
            json!([{"start_time": "2025-08-13T08:15:30",
            "end_time": "2025-08-13T23:59:59", "calories": 2500, "active_calories": 1500, "steps": 8823,
            "distance_from_steps": 4590.53}]),
        ),
        Page::get(
            "/v3/users/continuous-heart-rate",
            json!({"date": "2022-09-12", "heart_rate_samples": [
            {"heart_rate": 63, "sample_time": "00:02:08"}, {"heart_rate": 62, "sample_time": "00:07:08"}]}),
        ),
        Page::get(
            "/v3/users/nightly-recharge",
            json!({"recharges": [{"date": "2020-01-01",
            "heart_rate_variability_avg": 28, "hrv_samples": {"23:56": 12, "00:41": 14},
            "breathing_samples": {"00:39": 13.4}}]}),
        ),
        Page::get(
            "/v3/users/biosensing/spo2",
            json!([{"test_time": 1697787256, "time_zone_offset": 180,
            "test_status": "SPO2_TEST_PASSED", "blood_oxygen_percent": 95}]),
        ),
        Page::get(
            "/v3/users/biosensing/skintemperature",
            json!([{"sleep_date": "2023-10-20",
            "sleep_time_skin_temperature_celsius": 36.5, "deviation_from_baseline_celsius": 0.5}]),
        ),
        Page::post("/v3/users", json!({"polar-user-id": 475, "member-id": "x"})),
        Page::delete("/v3/users/475"),
    ];
    let mut api = VendorApi::new("/v2/oauth2/token", pages, "/v3/users/activities");
    api.basic_auth = true;
    api.refreshes = false;
    api.token_fields = json!({"x_user_id": 475});
    api
}

fn webhook(signed: bool) -> Notification {
    let body = json!({"event": "SLEEP", "user_id": 475, "date": "2020-01-01",
        "timestamp": "2020-01-01T07:00:00Z", "url": "https://www.polaraccesslink.com/v3/users/sleep/2020-01-01"});
    let key = if signed { SECRET } else { "a-guess" };
    let signature = hex_hmac(key, body.to_string().as_bytes());
    Notification::json(
        &body,
        vec![("polar-webhook-signature", signature), ("polar-webhook-event", "SLEEP".into())],
    )
}

#[tokio::test]
async fn polar() {
    conformance(Case {
        slug: "polar",
        api: api(),
        api_prefix: "",
        vars: vec![("WEBHOOK_SECRET", SECRET.into())],
        authorize: "https://flow.polar.com/oauth2/authorization",
        scope: Some("accesslink.read_all"),
        pkce: false,
        vendor_user: "475",
        connect_calls: vec!["POST /v3/users "],
        revoke_calls: vec!["DELETE /v3/users/475"],
        handshakes: Vec::new(),
        webhook: Some(webhook),
        deregistration: None,
        backfills: false,
        hook_query: "",
        expected: Expected {
            // Heart rate: the night's three samples (76, 77, 76) and the day's two (63, 62).
            series: vec![
                ("heart_rate", 5, 354.0),
                ("steps", 1, 8823.0),
                ("energy", 1, 1500.0),
                ("total_energy", 1, 2500.0),
                ("distance_walking_running", 1, 4590.53),
                ("heart_rate_variability_rmssd", 2, 26.0),
                ("respiratory_rate", 1, 13.4),
                ("oxygen_saturation", 1, 95.0),
                ("skin_temperature", 1, 36.5),
                ("skin_temperature_deviation", 1, 0.5),
            ],
            // 2 h 44 min; kcal and metres as sent.
            workouts: vec![("running", 9840, Some(530.0), Some(1600.0))],
            sleep_sessions: 1,
        },
    })
    .await;
}
