//! Garmin's Health API (`docs/vendors/garmin.md`): PKCE, credentials in the form, no scopes,
//! history asked for by backfill, summaries pushed (kept as pages) or pinged (pulled over the
//! upload window), notifications carrying the app's client id.

use serde_json::{Value, json};

use super::mock::{CLIENT_ID, Page, VendorApi};
use super::{Case, Expected, Notification, conformance};

fn api() -> VendorApi {
    let pages = vec![
        Page::get("/wellness-api/rest/user/id", json!({"userId": "garmin-user-1"})),
        Page::get(
            "/wellness-api/rest/sleeps",
            json!([{"userId": "garmin-user-1", "summaryId": "sleep_123",
            "calendarDate": "2024-01-15", "startTimeInSeconds": 1705273200, "startTimeOffsetInSeconds": 3600,
            "durationInSeconds": 28800,
            "sleepLevelsMap": {"light": [{"startTimeInSeconds": 1705273200, "endTimeInSeconds": 1705276800}],
                               "deep": [{"startTimeInSeconds": 1705276800, "endTimeInSeconds": 1705280400}]}}]),
        ),
        Page::get(
            "/wellness-api/rest/activities",
            json!([{"userId": "garmin-user-1", "summaryId": "21047282990",
            "activityType": "RUNNING", "startTimeInSeconds": 1763597760, "startTimeOffsetInSeconds": 3600,
            "durationInSeconds": 3600, "distanceInMeters": 5000, "activeKilocalories": 350}]),
        ),
        Page::get(
            "/wellness-api/rest/hrv",
            json!([{"userId": "garmin-user-1", "summaryId": "x5b70ccc-6966bceb",
            "startTimeInSeconds": 1768340715, "startTimeOffsetInSeconds": 3600, "hrvValues": {"265": 70, "565": 73}}]),
        ),
        Page::get("/wellness-api/rest/backfill/*", json!(null)).status(202),
        Page::delete("/wellness-api/rest/user/registration"),
    ];
    VendorApi::new("/di-oauth2-service/oauth/token", pages, "/wellness-api/rest/sleeps")
}

/// A push of a day's summary and a ping of sleeps, as one notification.
fn webhook(ours: bool) -> Notification {
    let body: Value = json!({
        "dailies": [{"userId": "garmin-user-1", "summaryId": "daily-123", "calendarDate": "2026-01-13",
            "startTimeInSeconds": 1768258800, "startTimeOffsetInSeconds": 3600, "durationInSeconds": 77040,
            "steps": 7694, "distanceInMeters": 6688.0, "activeKilocalories": 503, "bmrKilocalories": 1825,
            "floorsClimbed": 12, "restingHeartRateInBeatsPerMinute": 55,
            "timeOffsetHeartRateSamples": {"0": 60, "900": 65, "1800": 70}}],
        "sleeps": [{"userId": "garmin-user-1", "callbackURL":
            "https://apis.garmin.com/wellness-api/rest/sleeps?uploadStartTimeInSeconds=1705273200&uploadEndTimeInSeconds=1705300000&token=t"}]});
    let client = if ours { CLIENT_ID } else { "another-app" };
    Notification::json(&body, vec![("garmin-client-id", client.into())])
}

fn deregistration(_: u32) -> Notification {
    let body = json!({"deregistrations": [{"userId": "garmin-user-1"}]});
    Notification::json(&body, vec![("garmin-client-id", CLIENT_ID.into())])
}

#[tokio::test]
async fn garmin() {
    conformance(Case {
        slug: "garmin",
        api: api(),
        api_prefix: "",
        vars: vec![("WEBHOOK_TOKEN", "garmin-url-token".into())],
        authorize: "https://connect.garmin.com/oauth2Confirm",
        scope: None,
        pkce: true,
        vendor_user: "garmin-user-1",
        connect_calls: vec!["GET /wellness-api/rest/user/id"],
        revoke_calls: vec!["DELETE /wellness-api/rest/user/registration auth=Bearer access-1"],
        handshakes: Vec::new(),
        webhook: Some(webhook),
        deregistration: Some(deregistration),
        backfills: true,
        hook_query: "token=garmin-url-token",
        expected: Expected {
            // The pushed day (totals at its local noon, resting HR, three HR samples), the
            // pulled HRV samples.
            series: vec![
                ("steps", 1, 7694.0),
                ("distance_walking_running", 1, 6688.0),
                ("energy", 1, 503.0),
                ("basal_energy", 1, 1825.0),
                ("flights_climbed", 1, 12.0),
                ("resting_heart_rate", 1, 55.0),
                ("heart_rate", 3, 195.0),
                ("heart_rate_variability_rmssd", 2, 143.0),
            ],
            workouts: vec![("running", 3600, Some(350.0), Some(5000.0))],
            sleep_sessions: 1,
        },
    })
    .await;
}
