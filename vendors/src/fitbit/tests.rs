//! The mapping against the examples of Fitbit's Web API reference (`docs/vendors/fitbit.md`
//! §2–3), the expected rows worked out by hand.

use ingest::{Normalised, Stage};
use serde_json::json;

use super::*;
use crate::normal::{at, values};

/// A batch that read the profile of a user at UTC−8.
fn los_angeles() -> Normalised {
    let mut out = Normalised { provider: "fitbit", ..Normalised::default() };
    let profile = json!({"user": {"encodedId": "GGNJL9", "offsetFromUTCMillis": -28800000,
        "timezone": "America/Los_Angeles", "distanceUnit": "METRIC"}});
    Fitbit.map_page(PROFILE, &profile, &mut out);
    assert_eq!(Fitbit.user_id(&profile).as_deref(), Some("GGNJL9"));
    out
}

#[test]
fn a_sleep_log_is_its_levels_with_the_short_wakes_cut_in_at_the_users_offset() {
    let mut out = los_angeles();
    let page = json!({"sleep": [{"logId": 26013218219_i64, "dateOfSleep": "2020-02-21", "isMainSleep": true,
        "startTime": "2020-02-20T23:21:30.000", "endTime": "2020-02-21T07:03:30.000", "duration": 27720000,
        "efficiency": 96, "type": "stages", "levels": {
            "data": [{"dateTime": "2020-02-20T23:21:30.000", "level": "wake", "seconds": 630},
                     {"dateTime": "2020-02-20T23:32:00.000", "level": "light", "seconds": 2520}],
            "shortData": [{"dateTime": "2020-02-21T00:10:30.000", "level": "wake", "seconds": 30}]}}]});
    Fitbit.map_page(SLEEP, &page, &mut out);
    let s = &out.sleep[0];
    assert_eq!((s.zone_offset, s.external_id.as_deref()), (Some(-480), Some("26013218219")));
    let spans: Vec<_> = s.intervals.iter().map(|i| (i.stage, i.start, i.end)).collect();
    assert_eq!(
        spans,
        [
            (Stage::Awake, at("2020-02-21T07:21:30Z"), at("2020-02-21T07:32:00Z")),
            (Stage::Light, at("2020-02-21T07:32:00Z"), at("2020-02-21T08:10:30Z")),
            (Stage::Awake, at("2020-02-21T08:10:30Z"), at("2020-02-21T08:11:00Z")),
            (Stage::Light, at("2020-02-21T08:11:00Z"), at("2020-02-21T08:14:00Z")),
        ]
    );
}

#[test]
fn activities_and_days_in_metric_units() {
    let mut out = los_angeles();
    let list = json!({"activities": [{"logId": 19018673358_i64, "activityName": "Run", "activityTypeId": 90009,
        "logType": "auto_detected", "startTime": "2019-01-03T12:08:42.000-08:00", "duration": 1536000,
        "activeDuration": 1536000, "calories": 295, "steps": 3790, "distance": 4.019, "distanceUnit": "Kilometer",
        "averageHeartRate": 151, "elevationGain": 12.2}],
        "pagination": {"afterDate": "2019-01-01", "limit": 1, "offset": 0, "sort": "asc", "previous": "",
            "next": "https://api.fitbit.com/1/user/-/activities/list.json?offset=1&limit=1&sort=asc&afterDate=2019-01-01"}});
    Fitbit.map_page(ACTIVITIES, &list, &mut out);
    let w = &out.workouts[0].row;
    assert_eq!(
        (w.figures.start_time, w.figures.end_time),
        (at("2019-01-03T20:08:42Z"), at("2019-01-03T20:34:18Z"))
    );
    assert_eq!(
        (w.figures.kind.as_deref(), w.figures.zone_offset, w.figures.duration_seconds),
        (Some("running"), Some(-480), 1536)
    );
    assert_eq!(w.figures.distance_meters.map(|d| d.round()), Some(4019.0));
    assert_eq!(
        (w.figures.calories_kcal, w.figures.steps, w.figures.avg_heart_rate_bpm),
        (Some(295.0), Some(3790), Some(151.0))
    );
    // The next page is asked of the configured API, not of the host the link names.
    let next = Fitbit.next_page(&list, None, crate::normal::any_window());
    assert_eq!(
        next.as_deref(),
        Some("/1/user/-/activities/list.json?offset=1&limit=1&sort=asc&afterDate=2019-01-01")
    );
    let window = (at("2019-01-02T00:00:00Z"), at("2019-01-03T00:00:00Z"));
    let url = Fitbit.page_url("http://127.0.0.1:9", ACTIVITIES, window, next.as_deref());
    assert_eq!(url.map(|u| u.host_str().map(str::to_string)), Ok(Some("127.0.0.1".into())));
    assert_eq!(
        Fitbit.next_page(
            &json!({"activities": [], "pagination": {"next": ""}}),
            None,
            crate::normal::any_window()
        ),
        None
    );

    let steps = json!({"activities-steps": [{"dateTime": "2019-01-01", "value": "1234"},
        {"dateTime": "2019-01-02", "value": "0"}]});
    Fitbit.map_page(STEPS, &steps, &mut out);
    let noon = at("2019-01-01T20:00:00Z");
    assert_eq!(
        values(&out, STEP_COUNT),
        [(noon, 1234.0, Some(-480))],
        "a day of 0 is a day without data"
    );
    Fitbit.map_page(
        DISTANCE,
        &json!({"activities-distance": [{"dateTime": "2019-01-01", "value": "1.26"}]}),
        &mut out,
    );
    assert_eq!(values(&out, WALKED), [(noon, 1260.0, Some(-480))]);
    Fitbit.map_page(
        CALORIES,
        &json!({"activities-calories": [{"dateTime": "2019-01-01", "value": "2628"}]}),
        &mut out,
    );
    assert_eq!(values(&out, TOTAL_ENERGY), [(noon, 2628.0, Some(-480))]);

    let heart = json!({"activities-heart": [{"dateTime": "2019-05-08", "value": {"customHeartRateZones": [],
        "restingHeartRate": 76, "heartRateZones": []}}]});
    Fitbit.map_page(HEART, &heart, &mut out);
    // In May Los Angeles is at UTC−7: each day at its own offset.
    assert_eq!(values(&out, RESTING_HR), [(at("2019-05-08T19:00:00Z"), 76.0, Some(-420))]);
    Fitbit.map_page(HRV, &json!({"hrv": [{"dateTime": "2021-10-25", "value": {"dailyRmssd": 34.938, "deepRmssd": 31.567}}]}), &mut out);
    assert_eq!(values(&out, HRV_RMSSD), [(at("2021-10-25T19:00:00Z"), 34.938, Some(-420))]);
    Fitbit.map_page(
        SPO2,
        &json!([{"dateTime": "2021-10-04", "value": {"avg": 97.5, "min": 94.0, "max": 100.0}}]),
        &mut out,
    );
    Fitbit.map_page(SPO2, &json!({"dateTime": "2021-10-05", "value": {"avg": 96.0}}), &mut out);
    assert_eq!(
        values(&out, OXYGEN),
        [
            (at("2021-10-04T19:00:00Z"), 97.5, Some(-420)),
            (at("2021-10-05T19:00:00Z"), 96.0, Some(-420))
        ]
    );
    Fitbit.map_page(SKIN, &json!({"tempSkin": [{"dateTime": "2021-10-04", "value": {"nightlyRelative": -0.4}, "logType": "dedicated_temp_sensor"}]}), &mut out);
    assert_eq!(values(&out, SKIN_DEVIATION), [(at("2021-10-04T19:00:00Z"), -0.4, Some(-420))]);
    Fitbit.map_page(
        WEIGHT,
        &json!({"weight": [{"logId": 1330991999000_i64, "date": "2019-03-01", "time": "23:59:59",
        "weight": 73.5, "bmi": 23.57, "source": "Aria"}]}),
        &mut out,
    );
    assert_eq!(values(&out, BODY_WEIGHT), [(at("2019-03-02T07:59:59Z"), 73.5, Some(-480))]);
    assert_eq!(values(&out, BMI), [(at("2019-03-02T07:59:59Z"), 23.57, Some(-480))]);
    assert_eq!(out.report.dropped_count(), 0);
}

#[test]
fn the_subscriber_check_and_signed_notifications() {
    use base64::Engine;
    use hmac::{Hmac, Mac};
    let ends = Endpoints {
        client_secret: "fitbit-secret".into(),
        webhook_token: Some("verify-code".into()),
        ..Endpoints::default()
    };
    let q = |code: &'static str| move |name: &str| (name == "verify").then(|| code.to_string());
    assert_eq!(Fitbit.webhook_challenge(&ends, &q("verify-code")), Handshake::Status(204));
    assert_eq!(Fitbit.webhook_challenge(&ends, &q("wrong")), Handshake::Status(404));
    let body = br#"[{"collectionType":"activities","date":"2023-10-25","ownerId":"228S74","ownerType":"user","subscriptionId":"1234"},{"collectionType":"userRevokedAccess","date":"2023-10-25","ownerId":"9XY","ownerType":"user","subscriptionId":"1"}]"#;
    let mut mac =
        Hmac::<sha1::Sha1>::new_from_slice(b"fitbit-secret&").unwrap_or_else(|_| panic!("key"));
    mac.update(body);
    let sig = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    let header =
        |sig: String| move |name: &str| (name == "x-fitbit-signature").then(|| sig.clone());
    assert!(Fitbit.webhook_verified(&ends, &header(sig.clone()), body));
    assert!(!Fitbit.webhook_verified(&ends, &header(sig), &body[..body.len() - 1]));
    let value: Value = serde_json::from_slice(body).unwrap_or_default();
    assert_eq!(
        Fitbit.webhook_notices(&value),
        [
            Notice::Pull("228S74".into(), (at("2023-10-24T00:00:00Z"), at("2023-10-27T00:00:00Z"))),
            Notice::Deregistered("9XY".into()),
        ]
    );
    let token = json!({"access_token": "a", "expires_in": 28800, "user_id": "GGNJL9"});
    assert_eq!(Fitbit.token_user_id(&token).as_deref(), Some("GGNJL9"));
}

/// Records read as leniently as `.get` read them: numbers as numeric strings where they were
/// (days, sleep totals, weights) and not where they were not (the activity list's figures), a
/// field of another type as none, a level list that does not read whole as no timeline; a record
/// that does not read is dropped alone; an unknown collection reads as nothing.
#[test]
fn records_read_leniently_one_by_one() {
    let mut out = los_angeles();
    let page = json!({"sleep": [{"logId": "s-1", "isMainSleep": "yes", "minutesAsleep": "420",
        "startTime": "2020-02-20T23:00:00.000", "endTime": "2020-02-21T07:00:00.000",
        "levels": {"data": [{"dateTime": "2020-02-20T23:00:00.000", "level": "light", "seconds": 600},
                            {"dateTime": "2020-02-20T23:10:00.000", "level": "deep", "seconds": "600"}],
                   "summary": {"deep": {"minutes": "90"}, "rem": [60], "light": 5}}},
        {"startTime": "2020-02-20T23:00:00.000", "endTime": "2020-02-21T07:00:00.000"}, "junk"]});
    Fitbit.map_page(SLEEP, &page, &mut out);
    let s = &out.sleep[0];
    assert!(s.intervals.is_empty(), "a level that does not read costs the list, as before");
    let night = s.vendor.unwrap_or_else(|| panic!("the night"));
    assert_eq!(
        (night.totals.asleep, night.totals.deep, night.totals.rem),
        (Some(25200), Some(5400), None)
    );
    assert_eq!((night.is_nap, s.external_id.as_deref()), (None, Some("s-1")));
    assert_eq!(out.report.dropped_count(), 2, "no logId, not an object");

    let mut out = los_angeles();
    let list = json!({"activities": [{"logId": 7, "startTime": "2019-01-03T12:08:42.000-08:00",
        "duration": 600000, "calories": "295", "steps": 3790.0, "activityName": 5, "logType": null},
        {"startTime": "2019-01-03T12:08:42.000-08:00", "duration": "600000"}]});
    Fitbit.map_page(ACTIVITIES, &list, &mut out);
    let w = &out.workouts[0].row;
    assert_eq!(
        (w.external_id.as_deref(), w.figures.calories_kcal, w.figures.steps),
        (Some("7"), None, Some(3790))
    );
    assert_eq!((w.figures.kind.as_deref(), w.statistics["logType"].clone()), (None, Value::Null));
    assert_eq!(out.report.dropped_count(), 1, "a duration that is no whole number");

    let mut out = los_angeles();
    let steps = json!({"activities-steps": [{"dateTime": "2019-01-03", "value": "1234"},
        {"dateTime": "2019-01-04", "value": true}, {"dateTime": 20190105, "value": 5}]});
    Fitbit.map_page(STEPS, &steps, &mut out);
    assert_eq!(values(&out, STEP_COUNT), [(at("2019-01-03T20:00:00Z"), 1234.0, Some(-480))]);
    assert_eq!(out.report.dropped_count(), 2);
    let heart = json!({"activities-heart": [{"dateTime": "2019-01-03", "value": {"restingHeartRate": "61"}},
        {"dateTime": "2019-01-04", "value": [61]}]});
    Fitbit.map_page(HEART, &heart, &mut out);
    assert_eq!(values(&out, RESTING_HR), [(at("2019-01-03T20:00:00Z"), 61.0, Some(-480))]);
    let weight =
        json!({"weight": [{"date": "2019-01-03", "time": 5, "weight": "70.5", "bmi": {}}]});
    Fitbit.map_page(WEIGHT, &weight, &mut out);
    assert_eq!(values(&out, BODY_WEIGHT), [(at("2019-01-04T07:59:59Z"), 70.5, Some(-480))]);
    assert!(values(&out, BMI).is_empty());
    assert_eq!(out.report.dropped_count(), 2);

    let mut out = los_angeles();
    Fitbit.map_page("foods", &weight, &mut out);
    assert!(out.samples.is_empty() && out.report.dropped_count() == 0);
    let window = crate::normal::any_window();
    let url =
        Fitbit.page_url("https://api.fitbit.com", "foods", window, None).map(|u| u.to_string());
    assert_eq!(
        url.as_deref(),
        Ok("https://api.fitbit.com/1/user/-/body/log/weight/date/2026-03-08/2026-03-11.json")
    );
    assert_eq!(Fitbit.window_step("foods"), Some(Duration::days(STEP_DAYS)));
    assert_eq!(Fitbit.window_step(PROFILE), None);
}
