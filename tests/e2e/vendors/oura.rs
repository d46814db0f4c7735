//! Oura's API v2 (`docs/vendors/oura.md`): credentials in the form, the user asked of
//! `personal_info`, paged collections, the subscription handshake, hex signatures over the
//! timestamp and the body.

use hmac::Mac;
use serde_json::json;

use super::mock::{CLIENT_SECRET, Page, VendorApi};
use super::{Case, Expected, Notification, conformance};

pub(crate) fn api() -> VendorApi {
    let c = |name: &str| format!("/v2/usercollection/{name}");
    let pages = vec![
        Page::get(&c("personal_info"), json!({"id": "oura-user-7", "age": 31})),
        Page::get(&c("sleep"), json!({"data": [{"id": "night-1", "type": "long_sleep",
            "bedtime_start": "2026-03-09T23:00:00+01:00", "bedtime_end": "2026-03-10T07:00:00+01:00",
            "heart_rate": {"interval": 300, "items": [52, 50], "timestamp": "2026-03-09T23:00:00+01:00"},
            "sleep_phase_5_min": "2222111133334"}], "next_token": null})),
        Page::get(&c("workout"), json!({"data": [{"id": "wo-1", "activity": "running",
            "start_datetime": "2026-03-10T18:00:00+01:00", "end_datetime": "2026-03-10T18:45:00+01:00",
            "calories": 512.5, "distance": 8200.0}], "next_token": null})),
        Page::get(&c("daily_activity"), json!({"data": [{"id": "a", "day": "2026-03-10",
            "timestamp": "2026-03-10T04:00:00+01:00", "steps": 9876, "active_calories": 432, "total_calories": 2345}]})),
        Page::get(&c("heartrate"), json!({"data": [{"bpm": 63, "source": "awake", "timestamp": "2026-03-10T12:05:00+00:00"}],
            "next_token": null}))
        .with("next_token", "p2"),
        Page::get(&c("heartrate"), json!({"data": [{"bpm": 61, "source": "awake", "timestamp": "2026-03-10T12:00:00+00:00"}],
            "next_token": "p2"})),
        Page::get(&c("daily_readiness"), json!({"data": [{"id": "r", "day": "2026-03-10",
            "timestamp": "2026-03-10T00:00:00+01:00", "score": 81, "temperature_deviation": 0.3}]})),
        Page::get(&c("daily_spo2"), json!({"data": [{"id": "s", "day": "2026-03-10", "spo2_percentage": {"average": 97.1}}]})),
    ];
    let mut api = VendorApi::new("/oauth/token", pages, "/v2/usercollection/daily_activity");
    api.open = vec!["/oauth/revoke"];
    api
}

fn webhook(signed: bool) -> Notification {
    let body = json!({"event_type": "create", "data_type": "sleep", "object_id": "night-1",
        "event_time": "2026-03-10T07:30:00+00:00", "user_id": "oura-user-7"});
    let timestamp = chrono::Utc::now().timestamp().to_string();
    let key = if signed { CLIENT_SECRET } else { "guess" };
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key.as_bytes()).expect("key");
    mac.update(timestamp.as_bytes());
    mac.update(body.to_string().as_bytes());
    let signature = hex::encode_upper(mac.finalize().into_bytes());
    Notification::json(
        &body,
        vec![("x-oura-signature", signature), ("x-oura-timestamp", timestamp)],
    )
}

#[tokio::test]
async fn oura() {
    conformance(Case {
        slug: "oura",
        api: api(),
        api_prefix: "",
        vars: vec![("WEBHOOK_TOKEN", "verify-me".into())],
        authorize: "https://cloud.ouraring.com/oauth/authorize",
        scope: Some("personal daily heartrate workout session spo2Daily"),
        pkce: false,
        vendor_user: "oura-user-7",
        connect_calls: vec!["GET /v2/usercollection/personal_info"],
        revoke_calls: vec!["POST /oauth/revoke?access_token=access-1"],
        handshakes: vec![
            ("verification_token=verify-me&challenge=c", 200),
            ("verification_token=no&challenge=c", 401),
        ],
        webhook: Some(webhook),
        deregistration: None,
        backfills: false,
        hook_query: "",
        expected: Expected {
            // Heart rate: the night's two samples and both pages of the day's.
            series: vec![
                ("heart_rate", 4, 226.0),
                ("steps", 1, 9876.0),
                ("energy", 1, 432.0),
                ("total_energy", 1, 2345.0),
                ("recovery_score", 1, 81.0),
                ("skin_temperature_deviation", 1, 0.3),
                ("oxygen_saturation", 1, 97.1),
            ],
            workouts: vec![("running", 2700, Some(512.5), Some(8200.0))],
            sleep_sessions: 1,
        },
    })
    .await;
}
