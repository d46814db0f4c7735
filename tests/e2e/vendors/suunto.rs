//! The Suunto Cloud API (`docs/vendors/suunto.md`): Basic client authentication, the API
//! subscription key on every call, the username in the token answer, webhooks that carry the
//! data itself, signed with the notification secret.

use serde_json::{Value, json};

use super::mock::{Page, VendorApi};
use super::{Case, Expected, Notification, conformance, hex_hmac};

const SECRET: &str = "suunto-notification-secret";

fn workout() -> Value {
    json!({"workoutKey": "67604889401b942184624cb8", "activityId": 1, "startTime": 1702729200000_i64,
        "totalTime": 3600, "energyConsumption": 500, "stepCount": 8500, "totalAscent": 120.5,
        "totalDistance": 10000, "hrdata": {"workoutAvgHR": 145, "workoutMaxHR": 175}, "avgSpeed": 2.78,
        "maxSpeed": 6, "timeOffsetInMinutes": 120})
}

fn api() -> VendorApi {
    let pages = vec![
        Page::get("/v3/workouts", json!({"error": null, "payload": [workout()], "metadata": {}})),
        Page::get(
            "/247samples/sleep",
            json!([{"timestamp": "2026-05-17T02:13:00.000+02:00",
            "entryData": {"BedtimeStart": "2026-05-17T02:13:00.000+02:00", "BedtimeEnd": "2026-05-17T09:19:00.000+02:00",
                "DeepSleepDuration": 5610.0, "LightSleepDuration": 17970.0, "REMSleepDuration": 1710.0,
                "SleepId": 1778976780, "AvgHRV": 41.0}}]),
        ),
        Page::get(
            "/247samples/activity",
            json!([{"timestamp": "2026-05-17T12:00:00.000+02:00",
            "entryData": {"HR": 62, "StepCount": 15, "SpO2": 0.97, "EnergyConsumption": 5230.0}}]),
        ),
        Page::get(
            "/247samples/recovery",
            // The morning after the night: its first reading stands for the recovery.
            json!([{"timestamp": "2026-05-17T10:00:00.000+02:00",
            "entryData": {"Balance": 0.5, "StressState": 1}}]),
        ),
        Page::get(
            "/247/daily-activity-statistics",
            json!([
            {"Name": "energyconsumption", "Sources": [{"Samples": [{"TimeISO8601": "2019-02-11T02:00:00.000", "Value": null},
                {"TimeISO8601": "2019-02-12T02:00:00.000", "Value": 640580.3985}]}]},
            {"Name": "stepcount", "Sources": [{"Samples": [{"TimeISO8601": "2019-02-12T02:00:00.000", "Value": 4617}]}]}]),
        ),
    ];
    let mut api = VendorApi::new("/oauth/token", pages, "/247samples/sleep");
    api.basic_auth = true;
    api.token_fields = json!({"user": "johndoe123"});
    api.key_header = Some(("ocp-apim-subscription-key", "apim-key"));
    api.open = vec!["/oauth/deauthorize"];
    api
}

/// The same workout the API has, pushed: stored once.
fn webhook(signed: bool) -> Notification {
    let body = json!({"type": "WORKOUT_CREATED", "username": "johndoe123", "workout": workout(),
        "gear": {"manufacturer": "Suunto", "name": "Suunto Vertical", "productType": "SPORT_WATCH"}});
    let signature = hex_hmac(if signed { SECRET } else { "guess" }, body.to_string().as_bytes());
    Notification::json(&body, vec![("x-hmac-sha256-signature", signature)])
}

#[tokio::test]
async fn suunto() {
    conformance(Case {
        slug: "suunto",
        api: api(),
        api_prefix: "",
        vars: vec![("SUBSCRIPTION_KEY", "apim-key".into()), ("WEBHOOK_SECRET", SECRET.into())],
        authorize: "https://cloudapi-oauth.suunto.com/oauth/authorize",
        scope: None,
        pkce: false,
        vendor_user: "johndoe123",
        connect_calls: Vec::new(),
        revoke_calls: vec!["GET /oauth/deauthorize?client_id=test-app auth=Bearer access-1"],
        handshakes: Vec::new(),
        webhook: Some(webhook),
        deregistration: None,
        backfills: false,
        hook_query: "",
        expected: Expected {
            // Steps: a 24/7 sample (15) and a day's total (4,617); energy 5,230 J and
            // 640,580.3985 J in kcal; SpO2 0.97 as percent; balance 0.5 as 50.
            series: vec![
                ("heart_rate", 1, 62.0),
                ("steps", 2, 4632.0),
                ("oxygen_saturation", 1, 97.0),
                ("total_energy", 2, 1.25 + 640580.3985 / 4184.0),
                ("recovery_score", 1, 50.0),
                ("heart_rate_variability_rmssd", 1, 41.0),
            ],
            workouts: vec![("running", 3600, Some(500.0), Some(10000.0))],
            sleep_sessions: 1,
        },
    })
    .await;
}
