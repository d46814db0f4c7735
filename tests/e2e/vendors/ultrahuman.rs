//! The Ultrahuman Partner API (`docs/vendors/ultrahuman.md`): credentials in the form, the user
//! asked of `/user_info`, a call per local day, no webhooks.

use serde_json::json;

use super::mock::{Page, VendorApi};
use super::{Case, Expected, conformance};

fn api() -> VendorApi {
    let pages = vec![
        Page::get(
            "/api/partners/v1/user_data/user_info",
            json!({"user_id": "uh-user-1", "email": "a@example.com"}),
        ),
        Page::get(
            "/api/partners/v1/user_data/metrics",
            json!({"status": 200, "error": null, "data": {
            "metrics": {"2024-01-15": [
                {"type": "hr", "object": {"day_start_timestamp": 1705276800, "unit": "bpm",
                    "values": [{"value": 70.0, "timestamp": 1705276800}, {"value": 72.5, "timestamp": 1705276900}]}},
                {"type": "steps", "object": {"day_start_timestamp": 1705276800, "total": 8500.0,
                    "values": [{"value": 100, "timestamp": 1705276800}, {"value": 200, "timestamp": 1705276900}]}},
                {"type": "night_rhr", "object": {"day_start_timestamp": 1705276800, "avg": 54.0, "values": []}},
                {"type": "recovery_index", "object": {"value": 81.0, "day_start_timestamp": 1705276800}},
                {"type": "Sleep", "object": {"bedtime_start": 1705309200, "bedtime_end": 1705334400,
                    "sleep_graph": {"data": [{"start": 1705309200, "end": 1705310100, "type": "light_sleep"},
                                             {"start": 1705310100, "end": 1705334400, "type": "deep_sleep"}]},
                    "temperature_deviation": {"celsius": -0.2}}}]},
            "latest_time_zone": "Europe/Berlin"}}),
        ),
    ];
    let mut api =
        VendorApi::new("/api/partners/oauth/token", pages, "/api/partners/v1/user_data/metrics");
    api.open = vec!["/api/partners/oauth/revoke"];
    api
}

#[tokio::test]
async fn ultrahuman() {
    conformance(Case {
        slug: "ultrahuman",
        api: api(),
        api_prefix: "/api/partners/v1",
        vars: Vec::new(),
        authorize: "https://auth.ultrahuman.com/authorise",
        scope: Some("ring_data cgm_data profile"),
        pkce: false,
        vendor_user: "uh-user-1",
        connect_calls: Vec::new(),
        revoke_calls: vec!["POST /api/partners/oauth/revoke [token=access-1&client_id=test-app&client_secret=test-app-secret]"],
        handshakes: Vec::new(),
        webhook: None,
        deregistration: None,
        backfills: false,
        hook_query: "",
        expected: Expected {
            // Steps: two intervals and the day's total.
            series: vec![
                ("heart_rate", 2, 142.5),
                ("steps", 3, 8800.0),
                ("resting_heart_rate", 1, 54.0),
                ("recovery_score", 1, 81.0),
                ("skin_temperature_deviation", 1, -0.2),
            ],
            workouts: Vec::new(),
            sleep_sessions: 1,
        },
    })
    .await;
}
