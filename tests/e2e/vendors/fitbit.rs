//! The Fitbit Web API (`docs/vendors/fitbit.md`): Basic client authentication, PKCE, the user in
//! the token answer, local times read at the profile's offset, the activity list paged by its
//! `next` link, the subscriber's verify code, HMAC-SHA1 signatures.

use base64::Engine;
use hmac::Mac;
use serde_json::json;

use super::mock::{CLIENT_SECRET, Page, VendorApi};
use super::{Case, Expected, Notification, conformance};

fn api() -> VendorApi {
    let pages = vec![
        Page::get("/1/user/-/profile.json", json!({"user": {"encodedId": "GGNJL9",
            "offsetFromUTCMillis": -28800000, "timezone": "America/Los_Angeles"}})),
        Page::get("/1.2/user/-/sleep/date/*", json!({"sleep": [{"logId": 26013218219_i64, "isMainSleep": true,
            "startTime": "2020-02-20T23:21:30.000", "endTime": "2020-02-21T07:03:30.000", "type": "stages",
            "levels": {"data": [{"dateTime": "2020-02-20T23:21:30.000", "level": "wake", "seconds": 630},
                                {"dateTime": "2020-02-20T23:32:00.000", "level": "light", "seconds": 2520}],
                       "shortData": [{"dateTime": "2020-02-21T00:10:30.000", "level": "wake", "seconds": 30}]}}]})),
        Page::get("/1/user/-/activities/list.json", json!({"activities": [{"logId": 19018673358_i64,
            "activityName": "Run", "startTime": "2019-01-03T12:08:42.000-08:00", "duration": 1536000,
            "calories": 295, "steps": 3790, "distance": 4.019, "distanceUnit": "Kilometer", "averageHeartRate": 151}],
            "pagination": {"next": "https://api.fitbit.com/1/user/-/activities/list.json?offset=1&limit=1&sort=asc&afterDate=2019-01-01"}}))
            .with("offset", "0"),
        Page::get("/1/user/-/activities/list.json", json!({"activities": [{"logId": 19018673359_i64,
            "activityName": "Walk", "startTime": "2019-01-04T08:00:00.000-08:00", "duration": 1800000,
            "calories": 120, "distance": 2.0, "distanceUnit": "Kilometer"}], "pagination": {"next": ""}}))
            .with("offset", "1"),
        Page::get("/1/user/-/activities/steps/date/*", json!({"activities-steps": [
            {"dateTime": "2019-01-01", "value": "1234"}, {"dateTime": "2019-01-02", "value": "0"}]})),
        Page::get("/1/user/-/activities/calories/date/*", json!({"activities-calories": [{"dateTime": "2019-01-01", "value": "2628"}]})),
        Page::get("/1/user/-/activities/distance/date/*", json!({"activities-distance": [{"dateTime": "2019-01-01", "value": "1.26"}]})),
        Page::get("/1/user/-/activities/heart/date/*", json!({"activities-heart": [{"dateTime": "2019-05-08",
            "value": {"restingHeartRate": 76, "heartRateZones": []}}]})),
        Page::get("/1/user/-/hrv/date/*", json!({"hrv": [{"dateTime": "2021-10-25", "value": {"dailyRmssd": 34.938}}]})),
        Page::get("/1/user/-/spo2/date/*", json!([{"dateTime": "2021-10-04", "value": {"avg": 97.5, "min": 94.0, "max": 100.0}}])),
        Page::get("/1/user/-/temp/skin/date/*", json!({"tempSkin": [{"dateTime": "2021-10-04", "value": {"nightlyRelative": -0.4}}]})),
        Page::get("/1/user/-/body/log/weight/date/*", json!({"weight": [{"logId": 1330991999000_i64,
            "date": "2019-03-01", "time": "23:59:59", "weight": 73.5, "bmi": 23.57, "source": "Aria"}]})),
        Page::post("/1/user/-/apiSubscriptions/*", json!({"collectionType": "user", "ownerId": "GGNJL9"})),
    ];
    let mut api = VendorApi::new("/oauth2/token", pages, "/1/user/-/profile.json");
    api.basic_auth = true;
    api.token_fields = json!({"user_id": "GGNJL9", "scope": "activity heartrate sleep"});
    api.open = vec!["/oauth2/revoke"];
    api
}

fn webhook(signed: bool) -> Notification {
    let body = json!([{"collectionType": "activities", "date": "2019-01-03", "ownerId": "GGNJL9",
        "ownerType": "user", "subscriptionId": "1"}]);
    let key = if signed { format!("{CLIENT_SECRET}&") } else { "guess&".into() };
    let mut mac = hmac::Hmac::<sha1::Sha1>::new_from_slice(key.as_bytes()).expect("key");
    mac.update(body.to_string().as_bytes());
    let signature = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    Notification::json(&body, vec![("x-fitbit-signature", signature)])
}

fn deregistration(n: u32) -> Notification {
    let date = format!("2019-01-{:02}", 3 + n);
    let body = json!([{"collectionType": "userRevokedAccess", "date": date, "ownerId": "GGNJL9",
        "ownerType": "user", "subscriptionId": "1"}]);
    let mut mac = hmac::Hmac::<sha1::Sha1>::new_from_slice(format!("{CLIENT_SECRET}&").as_bytes())
        .expect("key");
    mac.update(body.to_string().as_bytes());
    let signature = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    Notification::json(&body, vec![("x-fitbit-signature", signature)])
}

#[tokio::test]
async fn fitbit() {
    conformance(Case {
        slug: "fitbit",
        api: api(),
        api_prefix: "",
        vars: vec![("WEBHOOK_TOKEN", "fitbit-verify-code".into())],
        authorize: "https://www.fitbit.com/oauth2/authorize",
        scope: Some("activity heartrate sleep oxygen_saturation temperature weight profile"),
        pkce: true,
        vendor_user: "GGNJL9",
        connect_calls: vec!["POST /1/user/-/apiSubscriptions/"],
        revoke_calls: vec!["POST /oauth2/revoke [token=access-1]"],
        handshakes: vec![("verify=fitbit-verify-code", 204), ("verify=wrong", 404)],
        webhook: Some(webhook),
        deregistration: Some(deregistration),
        backfills: false,
        hook_query: "",
        expected: Expected {
            // A day of 0 steps is a day without data; distance in km → m.
            series: vec![
                ("steps", 1, 1234.0),
                ("total_energy", 1, 2628.0),
                ("distance_walking_running", 1, 1260.0),
                ("resting_heart_rate", 1, 76.0),
                ("heart_rate_variability_rmssd", 1, 34.938),
                ("oxygen_saturation", 1, 97.5),
                ("skin_temperature_deviation", 1, -0.4),
                ("weight", 1, 73.5),
                ("body_mass_index", 1, 23.57),
            ],
            // Both pages of the list: 25 min 36 s and 4.019 km; 30 min and 2 km.
            workouts: vec![
                ("running", 1536, Some(295.0), Some(4019.0)),
                ("walking", 1800, Some(120.0), Some(2000.0)),
            ],
            sleep_sessions: 1,
        },
    })
    .await;
}
