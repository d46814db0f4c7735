//! Summaries against a small fixed data set whose answers are worked out by hand, in the
//! users' own time zones.

use chrono::{Duration, Utc};
use serde_json::{Value, json};

use crate::fixtures::{at, body, phone, rec, ring, sleep, watch};
use crate::util::{Auth, TestApp};

async fn get(app: &TestApp, key: &Auth, user: &str, path: &str) -> Value {
    let r = app.get(&format!("/api/v1/users/{user}/summaries/{path}"), key).await;
    assert_eq!(r.status, 200, "{path}: {}", r.body);
    r.body
}

/// A user in Los Angeles (-08:00): local 2026-03-10 spans two UTC days.
async fn seed_activity(app: &TestApp, key: &Auth, user: &str) {
    let la = Some("-08:00");
    let step = |start: &str, end: &str, v: f64, src: &Value| {
        rec("StepCount", start, end, v, "count", la, src)
    };
    let records = vec![
        // Local 03-10, 09:00 and 20:00: the phone counts 500 + 1000, the watch 600 + 600.
        step("2026-03-10T17:00:00Z", "2026-03-10T17:30:00Z", 500.0, &phone()),
        step("2026-03-11T04:00:00Z", "2026-03-11T04:30:00Z", 1000.0, &phone()),
        step("2026-03-10T17:05:00Z", "2026-03-10T17:35:00Z", 600.0, &watch()),
        step("2026-03-11T04:05:00Z", "2026-03-11T04:35:00Z", 600.0, &watch()),
        // Only the phone measured distance.
        rec(
            "DistanceWalkingRunning",
            "2026-03-10T17:00:00Z",
            "2026-03-10T17:30:00Z",
            1000.0,
            "m",
            la,
            &phone(),
        ),
        rec(
            "ActiveEnergyBurned",
            "2026-03-10T17:00:00Z",
            "2026-03-10T18:00:00Z",
            300.0,
            "kcal",
            la,
            &watch(),
        ),
        rec(
            "BasalEnergyBurned",
            "2026-03-10T17:00:00Z",
            "2026-03-11T07:00:00Z",
            1500.0,
            "kcal",
            la,
            &watch(),
        ),
        at("HeartRate", "2026-03-10T18:00:00Z", 60.0, "bpm", la, &watch()),
        at("HeartRate", "2026-03-10T19:00:00Z", 80.0, "bpm", la, &watch()),
        // Local 03-11 (UTC 03-11 20:00): only the phone; it is not dropped.
        step("2026-03-11T20:00:00Z", "2026-03-11T20:30:00Z", 700.0, &phone()),
        // Local 03-09 (UTC 03-10 06:00): a day before the window.
        step("2026-03-10T06:00:00Z", "2026-03-10T06:30:00Z", 999.0, &phone()),
    ];
    app.sync_and_wait(user, key, &body(records, vec![], vec![])).await;
}

#[tokio::test]
async fn activity_per_local_day_one_source_per_metric() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    seed_activity(&app, &key, &user).await;

    let p = get(&app, &key, &user, "activity?start_date=2026-03-10&end_date=2026-03-10").await;
    let day = &p["data"][0];
    assert_eq!(p["data"].as_array().map(Vec::len), Some(1), "{p}");
    assert_eq!(day["date"], "2026-03-10");
    // The watch outranks the phone: its 1,200 steps, not 1,500, and never 2,700.
    assert_eq!(day["steps"], 1200);
    assert_eq!(day["source"]["device_type"], "watch");
    assert_eq!(day["distance_meters"], 1000.0);
    assert_eq!(day["metric_sources"]["distance_meters"]["device_type"], "phone");
    assert_eq!(day["active_calories_kcal"], 300.0);
    assert_eq!(day["basal_calories_kcal"], 1500.0);
    assert_eq!(day["total_calories_kcal"], 1800.0);
    assert_eq!(day["heart_rate"], json!({"avg_bpm": 70, "max_bpm": 80, "min_bpm": 60}));

    // Two days, one per page.
    let p =
        get(&app, &key, &user, "activity?start_date=2026-03-10&end_date=2026-03-11&limit=1").await;
    assert_eq!(p["data"][0]["date"], "2026-03-10");
    let next = p["pagination"]["next_cursor"].as_str().expect("next cursor").to_string();
    let p = get(
        &app,
        &key,
        &user,
        &format!("activity?start_date=2026-03-10&end_date=2026-03-11&limit=1&cursor={next}"),
    )
    .await;
    assert_eq!(p["data"][0]["date"], "2026-03-11");
    assert_eq!(p["data"][0]["steps"], 700);
    assert_eq!(p["data"][0]["source"]["device_type"], "phone");
    assert_eq!(p["data"][0]["total_calories_kcal"], Value::Null);
    assert_eq!(p["pagination"]["has_more"], false);
    // An end with a time at midnight excludes that day.
    let p = get(&app, &key, &user, "activity?start_date=2026-03-10&end_date=2026-03-11T00:00:00Z")
        .await;
    assert_eq!(p["data"].as_array().map(Vec::len), Some(1));

    // A user's priority puts the phone first: its steps now.
    let sources = app.get(&format!("/api/v1/users/{user}/data-sources"), &key).await;
    let phone_id = sources.body["items"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["device_type"] == "phone"))
        .map(|s| s["id"].clone())
        .expect("phone source");
    let r = app
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/users/{user}/priorities"),
            &key,
            Some(json!({"data_sources": [phone_id]})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let p = get(&app, &key, &user, "activity?start_date=2026-03-10&end_date=2026-03-10").await;
    assert_eq!(p["data"][0]["steps"], 1500);

    // Validation.
    let r = app
        .get(&format!("/api/v1/users/{user}/summaries/activity?start_date=2026-03-10"), &key)
        .await;
    r.assert_invalid(&["query", "end_date"], "missing");
}

/// A user in Tokyo (+09:00): the night of 03-10 ends on local 03-11 but UTC 03-10.
pub fn tokyo_night() -> Vec<Value> {
    let mut items = sleep(
        &[
            ("light", "2026-03-10T14:00:00Z", "2026-03-10T17:00:00Z"),
            ("deep", "2026-03-10T17:00:00Z", "2026-03-10T18:00:00Z"),
            ("awake", "2026-03-10T18:00:00Z", "2026-03-10T18:10:00Z"),
            ("rem", "2026-03-10T18:10:00Z", "2026-03-10T19:10:00Z"),
            ("light", "2026-03-10T19:10:00Z", "2026-03-10T22:00:00Z"),
        ],
        "+09:00",
        &watch(),
    );
    // The ring records the same night, and a nap after lunch that the watch missed.
    items.extend(sleep(
        &[("light", "2026-03-10T14:05:00Z", "2026-03-10T21:55:00Z")],
        "+09:00",
        &ring(),
    ));
    items.extend(sleep(
        &[("light", "2026-03-11T04:00:00Z", "2026-03-11T04:30:00Z")],
        "+09:00",
        &ring(),
    ));
    items
}

#[tokio::test]
async fn sleep_by_wake_up_day_and_recovery_computed_from_stored_data() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let tokyo = Some("+09:00");
    let mut records = vec![
        // Heart rate in the night (50, 54) and after it (90).
        at("HeartRate", "2026-03-10T15:00:00Z", 50.0, "bpm", tokyo, &watch()),
        at("HeartRate", "2026-03-10T20:00:00Z", 54.0, "bpm", tokyo, &watch()),
        at("HeartRate", "2026-03-11T01:00:00Z", 90.0, "bpm", tokyo, &watch()),
        at("OxygenSaturation", "2026-03-10T16:00:00Z", 97.0, "%", tokyo, &watch()),
    ];
    // Ten days of baseline: HRV 40/60 (mean 50, sd 10), resting heart rate 57/63 (mean 60, sd 3).
    for d in 1..=10 {
        let t = format!("2026-03-{d:02}T00:00:00Z");
        let (hrv, rhr) = if d % 2 == 0 { (60.0, 57.0) } else { (40.0, 63.0) };
        records.push(at("HeartRateVariabilitySDNN", &t, hrv, "ms", tokyo, &watch()));
        records.push(at("RestingHeartRate", &t, rhr, "bpm", tokyo, &watch()));
    }
    // The morning after: HRV one sd up, resting heart rate one sd down.
    records.push(at(
        "HeartRateVariabilitySDNN",
        "2026-03-10T23:00:00Z",
        60.0,
        "ms",
        tokyo,
        &watch(),
    ));
    records.push(at("RestingHeartRate", "2026-03-10T23:00:00Z", 57.0, "bpm", tokyo, &watch()));
    app.sync_and_wait(&user, &key, &body(records, vec![], tokyo_night())).await;

    let p = get(&app, &key, &user, "sleep?start_date=2026-03-11&end_date=2026-03-11").await;
    assert_eq!(p["data"].as_array().map(Vec::len), Some(1), "{p}");
    let d = &p["data"][0];
    assert_eq!(d["date"], "2026-03-11");
    assert_eq!(d["source"]["device_type"], "watch");
    assert_eq!(d["start_time"], "2026-03-10T23:00:00+09:00");
    assert_eq!(d["end_time"], "2026-03-11T07:00:00+09:00");
    assert_eq!(d["zone_offset"], "+09:00");
    // 180 + 60 + 60 + 170 asleep; in bed 480; the ring's copy of the night is not added.
    assert_eq!(d["duration_minutes"], 470);
    assert_eq!(d["time_in_bed_minutes"], 480);
    assert_eq!(d["efficiency_percent"], 97.9);
    assert_eq!(d["stages"], json!({"awake": 10, "light": 350, "deep": 60, "rem": 60}));
    assert_eq!(d["interruptions_count"], 1);
    // The ring's nap counts.
    assert_eq!(d["nap_count"], 1);
    assert_eq!(d["nap_duration_minutes"], 30);
    assert_eq!(d["total_duration_minutes"], 500);
    assert_eq!(d["sessions"].as_array().map(Vec::len), Some(2));
    assert_eq!(d["avg_heart_rate_bpm"], 52.0);
    assert_eq!(d["avg_spo2_percent"], 97.0);
    // By UTC date the night would be on 03-10: nothing there.
    let p = get(&app, &key, &user, "sleep?start_date=2026-03-10&end_date=2026-03-10").await;
    assert_eq!(p["data"], json!([]));

    // Recovery on 03-11: HRV 70, resting heart rate 70, sleep 0.7·(470/480·100) + 0.3·97.9,
    // SpO2 87.5 → 0.4·70 + 0.25·70 + 0.25·97.91 + 0.1·87.5 = 78.7.
    let p = get(&app, &key, &user, "recovery?start_date=2026-03-11&end_date=2026-03-11").await;
    let r = &p["data"][0];
    assert_eq!(r["date"], "2026-03-11", "{p}");
    assert_eq!(r["recovery_score"], 79);
    assert_eq!(r["score_method"], "computed");
    assert_eq!(r["source"]["provider"], "internal");
    assert_eq!(r["sleep_duration_seconds"], 470 * 60);
    assert_eq!(r["sleep_efficiency_percent"], 97.9);
    assert_eq!(r["resting_heart_rate_bpm"], 57.0);
    assert_eq!(r["avg_hrv_sdnn_ms"], 60.0);
    assert_eq!(r["avg_spo2_percent"], 97.0);
    assert_eq!(p["pagination"]["total_count"], 1);
    // Early days have too little baseline for a score, but their data is there.
    let p = get(&app, &key, &user, "recovery?start_date=2026-03-01&end_date=2026-03-11&limit=100")
        .await;
    assert_eq!(p["pagination"]["total_count"], 11);
    assert_eq!(p["data"][0]["recovery_score"], Value::Null);
    assert_eq!(p["data"][0]["resting_heart_rate_bpm"], 63.0);
    assert!(p["data"][8]["recovery_score"].is_i64(), "{}", p["data"][8]);
    let r = app.get(&format!("/api/v1/users/{user}/summaries/recovery?start_date=2026-03-01&end_date=2026-03-11&limit=0"), &key).await;
    r.assert_invalid(&["query", "limit"], "greater_than_equal");

    // Deleting the watch's night: the ring's copy takes its place.
    assert_eq!(crate::fixtures::delete_night(&app, &key, &user, "2026-03-10").await, "watch");
    let p = get(&app, &key, &user, "sleep?start_date=2026-03-11&end_date=2026-03-11").await;
    assert_eq!(p["data"][0]["source"]["device_type"], "ring");
    assert_eq!(p["data"][0]["duration_minutes"], 470);
    assert_eq!(p["data"][0]["stages"]["deep"], 0);
}

/// The duplicate rule's boundary, as the summaries and the lists apply it (one rule, in SQL):
/// a session of another source overlapping the night by less than half of the shorter one is
/// another session; by half or more, a copy.
#[tokio::test]
async fn a_session_overlapping_the_night_by_less_than_half_counts_beside_it() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let utc = "+00:00";
    let mut items =
        sleep(&[("light", "2026-03-10T23:00:00Z", "2026-03-11T07:00:00Z")], utc, &watch());
    // One hour of three inside the night: counts.
    items.extend(sleep(&[("light", "2026-03-11T06:00:00Z", "2026-03-11T09:00:00Z")], utc, &ring()));
    // Half of its length inside the night: a copy, left out.
    items.extend(sleep(&[("light", "2026-03-10T21:00:00Z", "2026-03-11T01:00:00Z")], utc, &ring()));
    app.sync_and_wait(&user, &key, &body(vec![], vec![], items)).await;

    let p = get(&app, &key, &user, "sleep?start_date=2026-03-11&end_date=2026-03-11").await;
    let starts: Vec<&Value> = p["data"][0]["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| &s["start_time"])
        .collect();
    assert_eq!(starts, [&json!("2026-03-10T23:00:00+00:00"), &json!("2026-03-11T06:00:00+00:00")]);
    let r = app
        .get(
            &format!("/api/v1/users/{user}/events/sleep?start_date=2026-03-10&end_date=2026-03-12"),
            &key,
        )
        .await;
    assert_eq!(r.body["pagination"]["total_count"], 2, "{}", r.body);
}

#[tokio::test]
async fn body_takes_the_latest_value_and_names_each_source() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    assert_eq!(get(&app, &key, &user, "body").await, Value::Null);

    let now = Utc::now();
    let iso = |t: chrono::DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let z = Some("+00:00");
    let records = vec![
        at("BodyMass", "2026-03-05T08:00:00Z", 80.0, "kg", z, &phone()),
        // Two sources weighed in on the latest day: the ring outranks the phone.
        at("BodyMass", "2026-03-09T08:00:00Z", 79.7, "kg", z, &phone()),
        at("BodyMass", "2026-03-09T08:00:00Z", 79.5, "kg", z, &ring()),
        at("Height", "2026-01-01T08:00:00Z", 1.75, "m", z, &phone()),
        at("RestingHeartRate", &iso(now - Duration::days(1)), 58.0, "bpm", z, &watch()),
        at("RestingHeartRate", &iso(now - Duration::days(2)), 62.0, "bpm", z, &watch()),
        at("BodyTemperature", &iso(now - Duration::hours(1)), 36.6, "degC", z, &watch()),
        at("BloodPressureSystolic", &iso(now - Duration::hours(2)), 120.0, "mmHg", z, &phone()),
        at("BloodPressureDiastolic", &iso(now - Duration::hours(2)), 80.0, "mmHg", z, &phone()),
    ];
    app.sync_and_wait(&user, &key, &body(records, vec![], vec![])).await;

    let b = get(&app, &key, &user, "body").await;
    assert_eq!(b["slow_changing"]["weight_kg"], 79.5, "{b}");
    assert_eq!(b["metric_sources"]["weight_kg"]["device_type"], "ring");
    assert_eq!(b["source"]["device_type"], "ring");
    assert_eq!(b["slow_changing"]["height_cm"], 175.0);
    assert_eq!(b["metric_sources"]["height_cm"]["device_type"], "phone");
    // 79.5 / 1.75² = 25.96.
    assert_eq!(b["slow_changing"]["bmi"], 26.0);
    assert_eq!(b["averaged"]["period_days"], 7);
    assert_eq!(b["averaged"]["resting_heart_rate_bpm"], 60.0);
    assert_eq!(b["latest"]["body_temperature_celsius"], 36.6);
    assert_eq!(b["latest"]["blood_pressure"]["avg_systolic_mmhg"], 120.0);
    assert_eq!(b["latest"]["blood_pressure"]["avg_diastolic_mmhg"], 80.0);
    // A one-hour window no longer holds the blood pressure.
    let b = get(&app, &key, &user, "body?latest_window_hours=1&average_period=1").await;
    assert_eq!(b["latest"]["blood_pressure"], Value::Null);
    assert_eq!(b["averaged"]["period_days"], 1);
    let r = app.get(&format!("/api/v1/users/{user}/summaries/body?average_period=8"), &key).await;
    r.assert_invalid(&["query", "average_period"], "less_than_equal");
}

#[tokio::test]
async fn data_counts_with_and_without_a_window() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let other = app.user(&key, json!({})).await;
    seed_activity(&app, &key, &user).await;
    seed_activity(&app, &key, &other).await;
    let workouts = vec![crate::fixtures::workout(
        "W1",
        "running",
        "2026-03-10T17:00:00Z",
        "2026-03-10T17:30:00Z",
        200.0,
        5000.0,
        "-08:00",
        &watch(),
    )];
    app.sync_and_wait(&user, &key, &body(vec![], workouts, tokyo_night())).await;

    let d = get(&app, &key, &user, "data").await;
    // 11 records; the workout adds no samples of its own here.
    assert_eq!(d["total_data_points"], 11, "{d}");
    assert_eq!(d["series_type_counts"]["steps"], 6);
    assert_eq!(d["series_type_counts"]["heart_rate"], 2);
    assert_eq!(d["total_workouts"], 1);
    assert_eq!(d["workout_type_counts"]["running"], 1);
    // Stored sessions are counted per source: the watch's night, the ring's night and nap.
    assert_eq!(d["total_sleep_events"], 3);
    assert_eq!(d["by_provider"][0]["provider"], "phonehealth");
    assert_eq!(d["by_provider"][0]["data_points"], 11);
    assert_eq!(d["has_womens_health_data"], false);
    assert_eq!(d["user_id"], user.as_str());

    // Samples by their time: 03-10 UTC holds the four of 17:00–19:00 and the 06:00 one, plus
    // distance, energy: steps 17:00, 17:05, 06:00; distance; active; basal; heart rates 18:00, 19:00.
    let d = get(
        &app,
        &key,
        &user,
        "data?start_date=2026-03-10T00:00:00Z&end_date=2026-03-11T00:00:00Z",
    )
    .await;
    assert_eq!(d["series_type_counts"]["steps"], 3, "{d}");
    assert_eq!(d["total_data_points"], 8);
    assert_eq!(d["total_workouts"], 1);
    // Sessions by their start: the night starts 03-10 14:00Z; the nap on 03-11.
    assert_eq!(d["total_sleep_events"], 2);
    let d = get(&app, &key, &user, "data?start_date=2026-03-12").await;
    assert_eq!(d["total_data_points"], 0);
}

/// Dates far outside any health data, and summary windows longer than a year, are 422 (a
/// far-future end used to overflow while computing the window and drop the connection).
#[tokio::test]
async fn far_dates_and_overlong_windows_are_refused() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let base = format!("/api/v1/users/{user}");
    let far = "%2B262142-12-31";
    let r = app
        .get(&format!("{base}/summaries/activity?start_date=2026-01-01&end_date={far}"), &key)
        .await;
    r.assert_invalid(&["query", "end_date"], "value_error");
    let r = app
        .get(
            &format!("{base}/timeseries?start_time=2026-01-01&end_time={far}&types=heart_rate"),
            &key,
        )
        .await;
    r.assert_invalid(&["query", "end_time"], "value_error");
    let r = app
        .get(&format!("{base}/events/sleep?start_date=1000-01-01&end_date=2026-01-01"), &key)
        .await;
    r.assert_invalid(&["query", "start_date"], "value_error");

    for what in ["activity", "sleep", "recovery"] {
        let r = app
            .get(
                &format!("{base}/summaries/{what}?start_date=2025-01-01&end_date=2026-01-01"),
                &key,
            )
            .await;
        assert_eq!(r.status, 200, "{what}: a year and a day: {}", r.body);
        let r = app
            .get(
                &format!("{base}/summaries/{what}?start_date=2025-01-01&end_date=2026-01-02"),
                &key,
            )
            .await;
        r.assert_invalid(&["query", "end_date"], "value_error");
    }
}

/// The dates of each page, following `next_cursor` from the first page of `path`.
async fn pages(app: &TestApp, key: &Auth, user: &str, path: &str) -> (Vec<Vec<String>>, Value) {
    let mut out = Vec::new();
    let mut p = get(app, key, user, path).await;
    loop {
        let dates = p["data"].as_array().map(|d| d.iter().map(|i| i["date"].to_string()));
        out.push(
            dates.map(|d| d.map(|s| s.trim_matches('"').to_string()).collect()).unwrap_or_default(),
        );
        let Some(next) = p["pagination"]["next_cursor"].as_str().map(str::to_string) else {
            return (out, p);
        };
        assert!(out.len() < 10, "pages do not end: {p}");
        p = get(app, key, user, &format!("{path}&cursor={next}")).await;
    }
}

/// A page reads only its own days (the first `limit + 1` with data past the cursor), whatever
/// the window: the pages of a year hold every day with data once, in order, both ways.
#[tokio::test]
async fn summaries_page_a_year_by_limit() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let utc = Some("+00:00");
    let steps = |day: &str| {
        let (a, b) = (format!("{day}T10:00:00Z"), format!("{day}T10:30:00Z"));
        rec("StepCount", &a, &b, 100.0, "count", utc, &phone())
    };
    let mut records: Vec<Value> =
        ["2026-01-05", "2026-03-01", "2026-06-15", "2026-09-30", "2026-12-20"].map(steps).into();
    records.push(at("RestingHeartRate", "2026-02-10T08:00:00Z", 55.0, "bpm", utc, &watch()));
    // A night waking up on 04-04 in Berlin summer time, and a nap on 05-05.
    let mut nights =
        sleep(&[("light", "2026-04-03T21:00:00Z", "2026-04-04T05:00:00Z")], "+02:00", &watch());
    // 30 minutes after lunch: a nap.
    let nap = [("light", "2026-05-05T12:00:00Z", "2026-05-05T12:30:00Z")];
    nights.extend(sleep(&nap, "+02:00", &watch()));
    app.sync_and_wait(&user, &key, &body(records, vec![], nights)).await;

    let year = "start_date=2026-01-01&end_date=2026-12-31";
    let (activity, last) = pages(&app, &key, &user, &format!("activity?{year}&limit=2")).await;
    assert_eq!(
        activity,
        [vec!["2026-01-05", "2026-03-01"], vec!["2026-06-15", "2026-09-30"], vec!["2026-12-20"]]
    );
    assert_eq!(last["pagination"]["has_more"], false);
    // Back from the last page.
    let prev = last["pagination"]["previous_cursor"].as_str().expect("previous cursor");
    let p = get(&app, &key, &user, &format!("activity?{year}&limit=2&cursor={prev}")).await;
    let dates: Vec<&str> =
        p["data"].as_array().into_iter().flatten().filter_map(|d| d["date"].as_str()).collect();
    assert_eq!(dates, ["2026-06-15", "2026-09-30"], "{p}");

    let (sleep_pages, _) = pages(&app, &key, &user, &format!("sleep?{year}&limit=1")).await;
    assert_eq!(sleep_pages, [vec!["2026-04-04"], vec!["2026-05-05"]]);

    // Recovery's days: its series' rollups and nights, naps aside; the count is the window's.
    let (recovery, last) = pages(&app, &key, &user, &format!("recovery?{year}&limit=1")).await;
    assert_eq!(recovery, [vec!["2026-02-10"], vec!["2026-04-04"]]);
    assert_eq!(last["pagination"]["total_count"], 2);
}
