//! Issue 30: the vendors' documented example nights, pulled from local servers that answer them
//! as the vendors document them, and every figure the API answers (sleep summary, sleep events,
//! sleep score) compared with the values worked out by hand from the documented units
//! (`docs/vendors/audit/<vendor>.md` §4 shows the arithmetic).

use serde_json::{Value, json};

use crate::util::{Auth, Mode, TestApp};
use crate::vendor_pulls::{connect_to, pull_done};

/// A local vendor API answering `pages` (a part of the path and query → body), and `empty` for
/// any other call.
async fn vendor(pages: Vec<(&'static str, Value)>, empty: Value) -> String {
    let answer = move |uri: axum::http::Uri| {
        let asked = uri.to_string();
        let found = pages.iter().find(|(p, _)| asked.contains(p)).map(|(_, b)| b.clone());
        let empty = empty.clone();
        async move { axum::Json(found.unwrap_or(empty)) }
    };
    let api = axum::Router::new().fallback(answer);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, api).await });
    base
}

/// The service with `slug` configured against `api_url`, a user connected as `vendor_user`,
/// and the window pulled.
async fn pulled(
    slug: &str,
    api_url: String,
    vendor_user: &str,
    window: &str,
) -> (TestApp, Auth, String) {
    let prefix = slug.to_ascii_uppercase();
    let vars = [
        ("CLIENT_ID", "app".to_string()),
        ("CLIENT_SECRET", "secret".into()),
        ("API_URL", api_url),
        // Suunto's own setting; harmless for the others.
        ("SUBSCRIPTION_KEY", "key".into()),
    ];
    let vars = vars.into_iter().map(|(k, v)| (format!("{prefix}_{k}"), v)).collect();
    let app = TestApp::spawn_with(Mode::All, |s| s.vendor_variables = Some(vars)).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    connect_to(&app, &user, slug, "access", Some(vendor_user)).await;
    // The initial sync is not queued by a direct connection: this is the one pull.
    let r = app
        .post(&format!("/api/v1/providers/{slug}/users/{user}/sync?{window}"), &key, json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(pull_done(&app, &r.str("task_id")).await.0, "done");
    (app, key, user)
}

async fn sleep_day(app: &TestApp, key: &Auth, user: &str, day: &str) -> Value {
    let path = format!("/api/v1/users/{user}/summaries/sleep?start_date={day}&end_date={day}");
    let r = app.get(&path, key).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["data"][0].clone()
}

/// The events of the day's sessions, by start.
async fn sessions(app: &TestApp, key: &Auth, user: &str, window: &str) -> Vec<Value> {
    let r = app.get(&format!("/api/v1/users/{user}/events/sleep?{window}&limit=100"), key).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["data"].as_array().cloned().unwrap_or_default()
}

/// The samples of one series the timeseries route answers over `window`: local time and value.
async fn series(
    app: &TestApp,
    key: &Auth,
    user: &str,
    kind: &str,
    window: &str,
) -> Vec<(String, f64)> {
    let path = format!("/api/v1/users/{user}/timeseries?{window}&types={kind}&limit=100");
    let r = app.get(&path, key).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["timestamp"].as_str().unwrap_or("").to_string(),
                p["value"].as_f64().unwrap_or(f64::NAN),
            )
        })
        .collect()
}

/// The sleep events' (start, end, is_nap), by start.
async fn nights(
    app: &TestApp,
    key: &Auth,
    user: &str,
    window: &str,
) -> Vec<(String, String, bool)> {
    let mut all: Vec<(String, String, bool)> = sessions(app, key, user, window)
        .await
        .iter()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or("").to_string();
            (text("start_time"), text("end_time"), e["is_nap"].as_bool().unwrap_or(false))
        })
        .collect();
    all.sort();
    all
}

async fn sleep_score(app: &TestApp, key: &Auth, user: &str, window: &str) -> Option<f64> {
    let r =
        app.get(&format!("/api/v1/users/{user}/health-scores?{window}&category=sleep"), key).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["data"].as_array()?.iter().find(|s| s["category"] == "sleep")?["value"].as_f64()
}

/// WHOOP's own example night (stage totals, no timeline; −05:00 across local midnight), a nap
/// after it, and the recovery of the night (`docs/vendors/audit/whoop.md` §4).
#[tokio::test]
async fn whoops_documented_night_nap_and_recovery() {
    let sleep = json!({"records": [
        {"id": "ecfc6a15-4661-442f-a9a4-f160dd7afae8", "cycle_id": 93845, "user_id": 10129,
         "start": "2022-04-24T02:25:44.774Z", "end": "2022-04-24T10:25:44.774Z", "timezone_offset": "-05:00",
         "nap": false, "score_state": "SCORED",
         "score": {"stage_summary": {"total_in_bed_time_milli": 30272735, "total_awake_time_milli": 1403507,
             "total_no_data_time_milli": 0, "total_light_sleep_time_milli": 14905851,
             "total_slow_wave_sleep_time_milli": 6630370, "total_rem_sleep_time_milli": 5879573,
             "sleep_cycle_count": 3, "disturbance_count": 12},
             "respiratory_rate": 16.11328125, "sleep_efficiency_percentage": 91.69533848}},
        {"id": "nap-1", "cycle_id": 93846, "user_id": 10129,
         "start": "2022-04-24T12:00:00.000Z", "end": "2022-04-24T12:45:00.000Z", "timezone_offset": "-05:00",
         "nap": true, "score_state": "SCORED",
         "score": {"stage_summary": {"total_in_bed_time_milli": 2700000, "total_awake_time_milli": 300000,
             "total_light_sleep_time_milli": 1500000, "total_slow_wave_sleep_time_milli": 600000,
             "total_rem_sleep_time_milli": 300000}, "respiratory_rate": 15.5}}]});
    let recovery = json!({"records": [{"cycle_id": 93845, "sleep_id": "ecfc6a15-4661-442f-a9a4-f160dd7afae8",
        "user_id": 10129, "created_at": "2022-04-24T11:25:44.774Z", "score_state": "SCORED",
        "score": {"recovery_score": 44.0, "resting_heart_rate": 64.0, "hrv_rmssd_milli": 31.813562,
            "spo2_percentage": 95.6875, "skin_temp_celsius": 33.7}}]});
    let base = vendor(
        vec![("/v2/activity/sleep", sleep), ("/v2/recovery", recovery)],
        json!({"records": []}),
    )
    .await;
    let window = "summary_start_time=2022-04-23T00:00:00Z&summary_end_time=2022-04-25T00:00:00Z";
    let (app, key, user) = pulled("whoop", format!("{base}/developer"), "10129", window).await;

    let day = sleep_day(&app, &key, &user, "2022-04-24").await;
    // The documented bounds, at the record's offset.
    assert_eq!(day["start_time"], "2022-04-23T21:25:44.774-05:00", "{day}");
    assert_eq!(day["end_time"], "2022-04-24T05:25:44.774-05:00", "{day}");
    // Asleep 14,905,851 + 6,630,370 + 5,879,573 ms = 27,415 s = 456 min; the nap 2,400 s = 40.
    assert_eq!(day["duration_minutes"], 456, "{day}");
    assert_eq!(
        (day["nap_count"].clone(), day["nap_duration_minutes"].clone()),
        (json!(1), json!(40))
    );
    assert_eq!(day["total_duration_minutes"], 496);
    // The stage totals, ms / 1000 / 60.
    assert_eq!(day["stages"], json!({"awake": 23, "light": 248, "deep": 110, "rem": 97}), "{day}");
    // In bed: WHOOP's 30,272,735 ms, within the night's 8 h; 27,415 / 28,800 s.
    assert_eq!(
        (day["time_in_bed_minutes"].clone(), day["efficiency_percent"].clone()),
        (json!(480), json!(95.2))
    );
    assert_eq!(day["interruptions_count"], Value::Null, "totals alone: no timeline to count in");
    // The night's breathing rate, and the morning's HRV and SpO2 (the recovery of this sleep).
    assert_eq!(day["avg_respiratory_rate"], 16.1, "{day}");
    assert_eq!(day["avg_hrv_rmssd_ms"], 31.8, "{day}");
    assert_eq!(day["avg_spo2_percent"], 95.7, "{day}");

    let events = sessions(&app, &key, &user, "start_date=2022-04-23&end_date=2022-04-25").await;
    let night = events.iter().find(|e| e["is_nap"] == false).cloned().unwrap_or_default();
    assert_eq!(night["sleep_stage_intervals"], json!([]), "no stage order is made up");
    assert_eq!(night["time_in_bed_seconds"], 28800);
    assert_eq!(night["sleep_duration_seconds"], 27415);
    let nap = events.iter().find(|e| e["is_nap"] == true).cloned().unwrap_or_default();
    assert_eq!(
        (nap["start_time"].clone(), nap["end_time"].clone()),
        (json!("2022-04-24T07:00:00-05:00"), json!("2022-04-24T07:45:00-05:00"))
    );

    // Each night's figures at its middle, at its offset; the recovery's inside its night.
    let window_t = "start_time=2022-04-23T00:00:00Z&end_time=2022-04-25T00:00:00Z";
    assert_eq!(
        series(&app, &key, &user, "respiratory_rate", window_t).await,
        [
            ("2022-04-24T01:25:44.774-05:00".to_string(), 16.11328125),
            ("2022-04-24T07:22:30-05:00".to_string(), 15.5)
        ]
    );
    assert_eq!(
        series(&app, &key, &user, "heart_rate_variability_rmssd", window_t).await,
        [("2022-04-24T01:25:44.774-05:00".to_string(), 31.813562)]
    );
    // Duration 456/480 = 95.0; efficiency (95.2 − 60)/35 → 100; restoration (110 + 97)/456 over
    // 40 % → 100: 0.5 × 95 + 0.25 × 100 + 0.25 × 100 = 97.5 → 98.
    let window = "start_date=2022-04-24&end_date=2022-04-24";
    assert_eq!(sleep_score(&app, &key, &user, window).await, Some(98.0));
    // The recovery counts on the day one woke up, at its offset.
    let r = app.get(&format!("/api/v1/users/{user}/summaries/recovery?{window}"), &key).await;
    assert_eq!(r.body["data"][0]["date"], "2022-04-24", "{}", r.body);
    assert_eq!(r.body["data"][0]["resting_heart_rate_bpm"], 64.0, "{}", r.body);
}

/// Oura's own example period (−07:00: a hypnogram and documented totals, which win over the
/// 5-minute epochs), its SpO2, and a nap (`docs/vendors/audit/oura.md` §4).
#[tokio::test]
async fn ouras_documented_night_spo2_and_nap() {
    let hypnogram =
        format!("44{}{}{}{}", "1".repeat(14), "2".repeat(62), "3".repeat(8), "4".repeat(14));
    let sleep = json!({"data": [
        {"id": "8f9a5221-639e-4a85-81cb-4065ef23f979", "type": "long_sleep", "period": 0, "day": "2022-07-12",
         "bedtime_start": "2022-07-12T01:05:14-07:00", "bedtime_end": "2022-07-12T09:25:14-07:00",
         "time_in_bed": 30000, "total_sleep_duration": null, "awake_time": 4800, "latency": 540,
         "light_sleep_duration": 18750, "deep_sleep_duration": 4170, "rem_sleep_duration": 2280,
         "efficiency": 84, "average_breath": 12.625, "low_battery_alert": false,
         "heart_rate": {"interval": 300, "items": [null, 50, 46], "timestamp": "2022-07-12T01:05:14.000-07:00"},
         "hrv": {"interval": 300, "items": [null, 102, 122], "timestamp": "2022-07-12T01:05:14.000-07:00"},
         "sleep_phase_5_min": hypnogram},
        {"id": "nap-1", "type": "sleep", "period": 1, "day": "2022-07-12",
         "bedtime_start": "2022-07-12T14:10:00-07:00", "bedtime_end": "2022-07-12T14:55:00-07:00",
         "time_in_bed": 2700, "total_sleep_duration": 2400, "awake_time": 300, "light_sleep_duration": 1800,
         "deep_sleep_duration": 300, "rem_sleep_duration": 300, "average_breath": 13.0,
         "sleep_phase_5_min": "422221322", "low_battery_alert": false}], "next_token": null});
    let spo2 = json!({"data": [{"id": "s", "day": "2022-07-12", "spo2_percentage": {"average": 96.8}}],
        "next_token": null});
    let base = vendor(
        vec![("/v2/usercollection/sleep", sleep), ("/v2/usercollection/daily_spo2", spo2)],
        json!({"data": [], "next_token": null}),
    )
    .await;
    let window = "summary_start_time=2022-07-11T00:00:00Z&summary_end_time=2022-07-13T00:00:00Z";
    let (app, key, user) = pulled("oura", base, "oura-user", window).await;

    let day = sleep_day(&app, &key, &user, "2022-07-12").await;
    assert_eq!(day["start_time"], "2022-07-12T01:05:14-07:00", "{day}");
    assert_eq!(day["end_time"], "2022-07-12T09:25:14-07:00", "{day}");
    // Asleep: 18,750 + 4,170 + 2,280 s = 25,200 s = 420 min; the nap's documented 2,400 s = 40.
    assert_eq!(day["duration_minutes"], 420, "{day}");
    assert_eq!(
        (day["nap_count"].clone(), day["nap_duration_minutes"].clone()),
        (json!(1), json!(40))
    );
    // The documented durations, not the 5-minute epochs: light 312.5, deep 69.5, REM 38, awake 80.
    assert_eq!(day["stages"], json!({"awake": 80, "light": 312, "deep": 69, "rem": 38}), "{day}");
    assert_eq!(
        (day["time_in_bed_minutes"].clone(), day["efficiency_percent"].clone()),
        (json!(500), json!(84.0))
    );
    // The timeline is kept: awake at its start and at its end.
    assert_eq!(day["interruptions_count"], 2, "{day}");
    assert_eq!(day["avg_respiratory_rate"], 12.6, "{day}");
    assert_eq!(day["avg_spo2_percent"], 96.8, "{day}");
    // The 5-minute series inside the night: (50 + 46) / 2 and (102 + 122) / 2.
    assert_eq!(
        (day["avg_heart_rate_bpm"].clone(), day["avg_hrv_rmssd_ms"].clone()),
        (json!(48.0), json!(112.0))
    );
    assert_eq!(
        nights(&app, &key, &user, "start_date=2022-07-11&end_date=2022-07-13").await,
        [
            (
                "2022-07-12T01:05:14-07:00".to_string(),
                "2022-07-12T09:25:14-07:00".to_string(),
                false
            ),
            (
                "2022-07-12T14:10:00-07:00".to_string(),
                "2022-07-12T14:55:00-07:00".to_string(),
                true
            ),
        ]
    );
    let window_t = "start_time=2022-07-11T00:00:00Z&end_time=2022-07-13T00:00:00Z";
    assert_eq!(
        series(&app, &key, &user, "oxygen_saturation", window_t).await,
        [("2022-07-12T05:15:14-07:00".to_string(), 96.8)]
    );
    assert_eq!(
        series(&app, &key, &user, "respiratory_rate", window_t).await,
        [
            ("2022-07-12T05:15:14-07:00".to_string(), 12.625),
            ("2022-07-12T14:32:30-07:00".to_string(), 13.0)
        ]
    );
    // Duration 87.5; efficiency (84 − 60)/35 = 68.57; restoration (69 + 38)/420/0.40 = 63.69:
    // 43.75 + 17.14 + 15.92 = 76.82 → 77.
    let window = "start_date=2022-07-12&end_date=2022-07-12";
    assert_eq!(sleep_score(&app, &key, &user, window).await, Some(77.0));
}

/// Fitbit's own example log (`Get Sleep Log by Date`, −08:00, its elided levels filled in to
/// add up to its `levels.summary`), a nap (`isMainSleep: false`), and the main sleep's HRV and
/// SpO2, which Fitbit gives by day (`docs/vendors/audit/fitbit.md`).
#[tokio::test]
async fn fitbits_documented_log_nap_and_night_figures() {
    let level = |at: &str, level: &str, seconds: i64| json!({"dateTime": at, "level": level, "seconds": seconds});
    let sleep = json!({"sleep": [
        {"logId": 26013218219_i64, "dateOfSleep": "2020-02-21", "isMainSleep": true, "type": "stages",
         "startTime": "2020-02-20T23:21:30.000", "endTime": "2020-02-21T07:03:30.000", "duration": 27720000,
         "efficiency": 96, "minutesAsleep": 384, "minutesAwake": 78, "timeInBed": 462, "logType": "auto_detected",
         "levels": {"data": [level("2020-02-20T23:21:30.000", "wake", 630),
                             level("2020-02-20T23:32:00.000", "deep", 6240),
                             level("2020-02-21T01:16:00.000", "light", 12300),
                             level("2020-02-21T04:41:00.000", "rem", 4500),
                             level("2020-02-21T05:56:00.000", "wake", 4050)],
                    "summary": {"deep": {"count": 5, "minutes": 104}, "light": {"count": 32, "minutes": 205},
                                "rem": {"count": 11, "minutes": 75}, "wake": {"count": 30, "minutes": 78}}}},
        {"logId": 26013218220_i64, "dateOfSleep": "2020-02-21", "isMainSleep": false, "type": "classic",
         "startTime": "2020-02-21T14:10:00.000", "endTime": "2020-02-21T14:55:00.000", "duration": 2700000,
         "minutesAsleep": 40, "minutesAwake": 5, "timeInBed": 45,
         "levels": {"data": [level("2020-02-21T14:10:00.000", "asleep", 2400),
                             level("2020-02-21T14:50:00.000", "awake", 300)],
                    "summary": {"asleep": {"count": 1, "minutes": 40}, "awake": {"count": 1, "minutes": 5}}}}]});
    let base = vendor(
        vec![
            ("/profile.json", json!({"user": {"timezone": "America/Los_Angeles", "offsetFromUTCMillis": -28800000}})),
            ("/sleep/date/", sleep),
            ("/hrv/date/", json!({"hrv": [{"dateTime": "2020-02-21", "value": {"dailyRmssd": 34.938, "deepRmssd": 31.567}}]})),
            ("/spo2/date/", json!([{"dateTime": "2020-02-21", "value": {"avg": 97.5, "min": 94.0, "max": 100.0}}])),
        ],
        json!({}),
    )
    .await;
    let window = "summary_start_time=2020-02-20T00:00:00Z&summary_end_time=2020-02-22T00:00:00Z";
    let (app, key, user) = pulled("fitbit", base, "GGNJL9", window).await;

    let day = sleep_day(&app, &key, &user, "2020-02-21").await;
    assert_eq!(day["start_time"], "2020-02-20T23:21:30-08:00", "{day}");
    assert_eq!(day["end_time"], "2020-02-21T07:03:30-08:00", "{day}");
    // `minutesAsleep` 384 = deep 104 + light 205 + REM 75; in bed 462.
    assert_eq!(day["duration_minutes"], 384, "{day}");
    assert_eq!(day["stages"], json!({"awake": 78, "light": 205, "deep": 104, "rem": 75}), "{day}");
    assert_eq!(
        (day["time_in_bed_minutes"].clone(), day["efficiency_percent"].clone()),
        (json!(462), json!(83.1))
    );
    assert_eq!(day["interruptions_count"], 2, "{day}");
    // The log that is not the main sleep: a nap, 40 min asleep.
    assert_eq!(
        (day["nap_count"].clone(), day["nap_duration_minutes"].clone()),
        (json!(1), json!(40))
    );
    assert_eq!(day["total_duration_minutes"], 424);
    // The main sleep's HRV and SpO2, given by day, inside the night.
    assert_eq!(
        (day["avg_hrv_rmssd_ms"].clone(), day["avg_spo2_percent"].clone()),
        (json!(34.9), json!(97.5))
    );
    assert_eq!(
        nights(&app, &key, &user, "start_date=2020-02-20&end_date=2020-02-22").await,
        [
            (
                "2020-02-20T23:21:30-08:00".to_string(),
                "2020-02-21T07:03:30-08:00".to_string(),
                false
            ),
            (
                "2020-02-21T14:10:00-08:00".to_string(),
                "2020-02-21T14:55:00-08:00".to_string(),
                true
            ),
        ]
    );
    // The main sleep's HRV, given by day, at the night's middle.
    let window_t = "start_time=2020-02-20T00:00:00Z&end_time=2020-02-22T00:00:00Z";
    assert_eq!(
        series(&app, &key, &user, "heart_rate_variability_rmssd", window_t).await,
        [("2020-02-21T03:12:30-08:00".to_string(), 34.938)]
    );
    // Duration 384/480 = 80.0; efficiency (83.1 − 60)/35 = 66.0; restoration (104 + 75)/384
    // over 40 % → 100: 40 + 16.5 + 25 = 81.5 → 82.
    let window = "start_date=2020-02-21&end_date=2020-02-21";
    assert_eq!(sleep_score(&app, &key, &user, window).await, Some(82.0));
}

/// Suunto's captured night (+02:00; stage totals in seconds, no timeline), its HRV, and a night
/// across midnight with no stage totals (`docs/vendors/audit/suunto.md`).
#[tokio::test]
async fn suuntos_documented_nights() {
    let sleep = json!({"samples": [
        {"timestamp": "2026-05-17T02:13:00.000+02:00",
         "entryData": {"BedtimeStart": "2026-05-17T02:13:00.000+02:00", "BedtimeEnd": "2026-05-17T09:19:00.000+02:00",
            "Duration": 25560.0, "DeepSleepDuration": 5610.0, "LightSleepDuration": 17970.0,
            "REMSleepDuration": 1710.0, "HRAvg": 67.0, "HRMin": 52.0, "SleepQualityScore": 75, "IsNap": false,
            "SleepId": 1778976780, "AvgHRV": 41.0}},
        {"timestamp": "2026-05-13T23:40:00.000+02:00",
         "entryData": {"BedtimeStart": "2026-05-13T23:40:00.000+02:00", "BedtimeEnd": "2026-05-14T06:12:00.000+02:00",
            "Duration": 23520.0}}]});
    let base = vendor(vec![("/247samples/sleep", sleep)], json!({"samples": []})).await;
    let window = "summary_start_time=2026-05-13T00:00:00Z&summary_end_time=2026-05-18T00:00:00Z";
    let (app, key, user) = pulled("suunto", base, "suunto-user", window).await;

    let day = sleep_day(&app, &key, &user, "2026-05-17").await;
    assert_eq!(
        (day["start_time"].clone(), day["end_time"].clone()),
        (json!("2026-05-17T02:13:00+02:00"), json!("2026-05-17T09:19:00+02:00")),
        "{day}"
    );
    // Asleep 5,610 + 17,970 + 1,710 = 25,290 s = 421 min; in bed `Duration` 426; awake 270 s.
    assert_eq!(day["duration_minutes"], 421, "{day}");
    assert_eq!(day["stages"], json!({"awake": 4, "light": 299, "deep": 93, "rem": 28}), "{day}");
    assert_eq!(
        (day["time_in_bed_minutes"].clone(), day["efficiency_percent"].clone()),
        (json!(426), json!(98.9))
    );
    assert_eq!(day["avg_hrv_rmssd_ms"], 41.0, "{day}");
    let window_t = "start_time=2026-05-13T00:00:00Z&end_time=2026-05-18T00:00:00Z";
    assert_eq!(
        series(&app, &key, &user, "heart_rate_variability_rmssd", window_t).await,
        [("2026-05-17T05:46:00+02:00".to_string(), 41.0)]
    );
    assert_eq!(
        nights(&app, &key, &user, "start_date=2026-05-13&end_date=2026-05-18").await,
        [
            (
                "2026-05-13T23:40:00+02:00".to_string(),
                "2026-05-14T06:12:00+02:00".to_string(),
                false
            ),
            (
                "2026-05-17T02:13:00+02:00".to_string(),
                "2026-05-17T09:19:00+02:00".to_string(),
                false
            ),
        ]
    );
    // Duration 421/480 = 87.7; efficiency (98.9 − 60)/35 → 100; restoration (93 + 28)/421 =
    // 28.7 % → 71.9: 43.85 + 25 + 17.96 = 86.8 → 87.
    let score = sleep_score(&app, &key, &user, "start_date=2026-05-17&end_date=2026-05-17").await;
    assert_eq!(score, Some(87.0));

    // No stage totals: in bed the whole night, no stage known (not zeros).
    let day = sleep_day(&app, &key, &user, "2026-05-14").await;
    assert_eq!(
        (day["start_time"].clone(), day["end_time"].clone()),
        (json!("2026-05-13T23:40:00+02:00"), json!("2026-05-14T06:12:00+02:00")),
        "{day}"
    );
    assert_eq!(
        (day["time_in_bed_minutes"].clone(), day["stages"].clone()),
        (json!(392), Value::Null),
        "{day}"
    );

    // Pulled again: each night once, the one without a `SleepId` too (known by its bounds).
    let again = format!("/api/v1/providers/suunto/users/{user}/sync?{window}");
    let r = app.post(&again, &key, json!({})).await;
    assert_eq!(pull_done(&app, &r.str("task_id")).await.0, "done");
    assert_eq!(app.count("select count(*) from sleep_sessions").await, 2);
}

/// A Polar night across local midnight (+02:00) in the documented schema (hypnogram, stage
/// totals with unrecognised time, Nightly Recharge samples by clock time), pulled with an
/// exercise at +03:00 days later, whose offset must not move the night's samples
/// (`docs/vendors/audit/polar.md` §4b–4c).
#[tokio::test]
async fn polars_documented_night_and_recharge() {
    let night = json!({"nights": [{"polar_user": "u", "date": "2020-01-02",
        "sleep_start_time": "2020-01-01T23:40:00+02:00", "sleep_end_time": "2020-01-02T07:10:00+02:00",
        "light_sleep": 13500, "deep_sleep": 4800, "rem_sleep": 7200, "unrecognized_sleep_stage": 600,
        "total_interruption_duration": 900, "sleep_score": 82,
        "hypnogram": {"23:40": 2, "23:55": 3, "00:40": 4, "01:30": 3, "02:10": 1, "02:40": 0, "02:55": 3,
            "03:30": 4, "04:00": 3, "04:50": 1, "05:30": 5, "05:40": 3, "06:20": 1},
        "heart_rate_samples": {"23:45": 62, "23:50": 60, "23:55": 58}}]});
    let recharge = json!({"recharges": [{"polar_user": "u", "date": "2020-01-02", "heart_rate_avg": 60,
        "heart_rate_variability_avg": 34, "breathing_rate_avg": 13.8,
        "hrv_samples": {"23:45": 30, "23:50": 34, "23:55": 38},
        "breathing_samples": {"23:40": 13.6, "23:45": 13.8, "23:50": 14.0}}]});
    let exercises = json!([{"id": "e1", "start_time": "2020-01-05T18:00:00", "start_time_utc_offset": 180,
        "duration": "PT1H", "sport": "RUNNING", "calories": 500}]);
    let base = vendor(
        vec![
            ("/v3/users/sleep", night),
            ("/v3/users/nightly-recharge", recharge),
            ("/v3/exercises", exercises),
        ],
        json!({}),
    )
    .await;
    let window = "summary_start_time=2020-01-01T00:00:00Z&summary_end_time=2020-01-06T00:00:00Z";
    let (app, key, user) = pulled("polar", base, "polar-user", window).await;

    let day = sleep_day(&app, &key, &user, "2020-01-02").await;
    assert_eq!(
        (day["start_time"].clone(), day["end_time"].clone()),
        (json!("2020-01-01T23:40:00+02:00"), json!("2020-01-02T07:10:00+02:00")),
        "{day}"
    );
    // Asleep 13,500 + 4,800 + 7,200 + 600 (unrecognised) = 26,100 s = 435 min; in bed 450.
    assert_eq!(day["duration_minutes"], 435, "{day}");
    assert_eq!(day["stages"], json!({"awake": 15, "light": 225, "deep": 80, "rem": 120}), "{day}");
    assert_eq!(
        (day["time_in_bed_minutes"].clone(), day["efficiency_percent"].clone()),
        (json!(450), json!(96.7))
    );
    assert_eq!(day["interruptions_count"], 1, "{day}");
    // The night's samples at the night's own offset: (62 + 60 + 58)/3, (30 + 34 + 38)/3,
    // (13.6 + 13.8 + 14.0)/3.
    assert_eq!(day["avg_heart_rate_bpm"], 60.0, "{day}");
    assert_eq!(day["avg_hrv_rmssd_ms"], 34.0, "{day}");
    assert_eq!(day["avg_respiratory_rate"], 13.8, "{day}");
    let window_t = "start_time=2020-01-01T00:00:00Z&end_time=2020-01-03T00:00:00Z";
    let breathing: Vec<String> = series(&app, &key, &user, "respiratory_rate", window_t)
        .await
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    assert_eq!(
        breathing,
        ["2020-01-01T23:40:00+02:00", "2020-01-01T23:45:00+02:00", "2020-01-01T23:50:00+02:00"]
    );
    assert_eq!(
        nights(&app, &key, &user, "start_date=2020-01-01&end_date=2020-01-03").await,
        [("2020-01-01T23:40:00+02:00".to_string(), "2020-01-02T07:10:00+02:00".to_string(), false)]
    );
    // Duration 435/480 = 90.6; efficiency and restoration 100: 45.3 + 25 + 25 = 95.3 → 95.
    let score = sleep_score(&app, &key, &user, "start_date=2020-01-02&end_date=2020-01-02").await;
    assert_eq!(score, Some(95.0));
}

/// A Garmin night across midnight (+01:00) in the documented summary shapes, pushed as Garmin
/// pushes it: levels, stage totals, SpO2 and breathing offsets, a nap in `naps`, and the night's
/// 5-minute HRV (`docs/vendors/audit/garmin.md`).
#[tokio::test]
async fn garmins_documented_night_nap_and_hrv_pushed() {
    let vars = [
        ("GARMIN_CLIENT_ID", "garmin-app"),
        ("GARMIN_CLIENT_SECRET", "secret"),
        ("GARMIN_WEBHOOK_TOKEN", "url-token"),
    ];
    let vars = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let app = TestApp::spawn_with(Mode::All, |s| s.vendor_variables = Some(vars)).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    connect_to(&app, &user, "garmin", "access", Some("u1")).await;
    let span = |a: i64, b: i64| json!({"startTimeInSeconds": a, "endTimeInSeconds": b});
    let sleeps = json!({"sleeps": [{"userId": "u1", "summaryId": "sleep_123", "calendarDate": "2024-01-15",
        "startTimeInSeconds": 1705269600, "startTimeOffsetInSeconds": 3600, "durationInSeconds": 27000,
        "deepSleepDurationInSeconds": 7200, "lightSleepDurationInSeconds": 14400,
        "remSleepInSeconds": 5400, "awakeDurationInSeconds": 1800, "validation": "ENHANCED_FINAL",
        "sleepLevelsMap": {
            "light": [span(1705269600, 1705275000), span(1705283100, 1705292100)],
            "deep": [span(1705275000, 1705278600), span(1705292100, 1705295700)],
            "rem": [span(1705279500, 1705283100), span(1705295700, 1705297500)],
            "awake": [span(1705278600, 1705279500), span(1705297500, 1705298400)]},
        "timeOffsetSleepSpo2": {"0": 95, "3600": 96, "28740": 97},
        "timeOffsetSleepRespiration": {"0": 14.0, "14400": 13.0, "28740": 15.0},
        "overallSleepScore": {"value": 82, "qualifierKey": "GOOD"},
        "naps": [{"napStartTimeInSeconds": 1705330800, "napDurationInSeconds": 1800,
                  "napValidation": "DEVICE", "napOffsetInSeconds": 3600}]}]});
    let hrv = json!({"hrv": [{"userId": "u1", "summaryId": "hrv_1", "calendarDate": "2024-01-15",
        "startTimeInSeconds": 1705269600, "startTimeOffsetInSeconds": 3600, "durationInSeconds": 28800,
        "lastNightAvg": 44, "lastNight5MinHigh": 60, "hrvValues": {"300": 40, "14400": 46, "28500": 48}}]});
    for push in [sleeps, hrv] {
        let r = app
            .http
            .post(app.url("/api/v1/providers/garmin/webhooks?token=url-token"))
            .header("garmin-client-id", "garmin-app")
            .json(&push)
            .send()
            .await
            .expect("push");
        assert_eq!(r.status(), 200);
    }
    for _ in 0..400 {
        if app.count("select count(*) from vendor_pulls where status = 'queued'").await == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    let day = sleep_day(&app, &key, &user, "2024-01-15").await;
    assert_eq!(
        (day["start_time"].clone(), day["end_time"].clone()),
        (json!("2024-01-14T23:00:00+01:00"), json!("2024-01-15T07:00:00+01:00")),
        "{day}"
    );
    // Asleep 240 + 120 + 90 = 450 min (`durationInSeconds`); in bed to the last level, 480.
    assert_eq!(day["duration_minutes"], 450, "{day}");
    assert_eq!(day["stages"], json!({"awake": 30, "light": 240, "deep": 120, "rem": 90}), "{day}");
    assert_eq!(
        (day["time_in_bed_minutes"].clone(), day["efficiency_percent"].clone()),
        (json!(480), json!(93.8))
    );
    assert_eq!(day["interruptions_count"], 2, "{day}");
    // The nap in `naps`: a session of its own.
    assert_eq!(
        (day["nap_count"].clone(), day["nap_duration_minutes"].clone()),
        (json!(1), json!(30))
    );
    assert_eq!(day["total_duration_minutes"], 480);
    // (95 + 96 + 97)/3, (14 + 13 + 15)/3, and the 5-minute HRV (40 + 46 + 48)/3.
    assert_eq!(day["avg_spo2_percent"], 96.0, "{day}");
    assert_eq!(day["avg_respiratory_rate"], 14.0, "{day}");
    assert_eq!(day["avg_hrv_rmssd_ms"], 44.7, "{day}");
    assert_eq!(
        nights(&app, &key, &user, "start_date=2024-01-14&end_date=2024-01-16").await,
        [
            (
                "2024-01-14T23:00:00+01:00".to_string(),
                "2024-01-15T07:00:00+01:00".to_string(),
                false
            ),
            (
                "2024-01-15T16:00:00+01:00".to_string(),
                "2024-01-15T16:30:00+01:00".to_string(),
                true
            ),
        ]
    );
    // Duration 93.75; efficiency (93.8 − 60)/35 = 96.6; restoration 100: 96.0 → 96.
    let score = sleep_score(&app, &key, &user, "start_date=2024-01-15&end_date=2024-01-15").await;
    assert_eq!(score, Some(96.0));
}

/// Ultrahuman's night as the reference system captured it (stage totals, no hypnogram), for a
/// user in Los Angeles (`docs/vendors/audit/ultrahuman.md`).
#[tokio::test]
async fn ultrahumans_documented_night() {
    let page = json!({"data": {"latest_time_zone": "America/Los_Angeles", "metric_data": [{"type": "Sleep",
        "object": {"date": "2024-01-15", "bedtime_start": 1705309200, "bedtime_end": 1705334400,
            "quick_metrics": [{"type": "time_in_bed", "value": 25200}, {"type": "sleep_efic", "value": 90.5}],
            "sleep_stages": [{"type": "deep_sleep", "stage_time": 3600}, {"type": "light_sleep", "stage_time": 16200},
                             {"type": "rem_sleep", "stage_time": 3600}, {"type": "awake", "stage_time": 1800}]}}]}});
    let base = vendor(vec![("/user_data/metrics", page)], json!({"data": {}})).await;
    let window = "summary_start_time=2024-01-15T00:00:00Z&summary_end_time=2024-01-16T00:00:00Z";
    let (app, key, user) = pulled("ultrahuman", base, "uh-user", window).await;

    let day = sleep_day(&app, &key, &user, "2024-01-15").await;
    // 09:00Z-16:00Z at −08:00.
    assert_eq!(
        (day["start_time"].clone(), day["end_time"].clone()),
        (json!("2024-01-15T01:00:00-08:00"), json!("2024-01-15T08:00:00-08:00")),
        "{day}"
    );
    // Asleep 3,600 + 16,200 + 3,600 s = 390 min; awake 30; in bed 420.
    assert_eq!(day["duration_minutes"], 390, "{day}");
    assert_eq!(day["stages"], json!({"awake": 30, "light": 270, "deep": 60, "rem": 60}), "{day}");
    assert_eq!(
        (day["time_in_bed_minutes"].clone(), day["efficiency_percent"].clone()),
        (json!(420), json!(92.9))
    );
    assert_eq!(day["interruptions_count"], Value::Null, "no hypnogram");
    assert_eq!(
        nights(&app, &key, &user, "start_date=2024-01-14&end_date=2024-01-16").await,
        [("2024-01-15T01:00:00-08:00".to_string(), "2024-01-15T08:00:00-08:00".to_string(), false)],
        "pulled a day a call, the night once"
    );
    // Duration 81.25; efficiency (92.9 − 60)/35 = 94.0; restoration 120/390 over 40 % = 76.9:
    // 40.63 + 23.5 + 19.23 = 83.4 → 83.
    let score = sleep_score(&app, &key, &user, "start_date=2024-01-15&end_date=2024-01-15").await;
    assert_eq!(score, Some(83.0));
}

/// A Withings night across local midnight in Paris, as Sleep v2 Getsummary documents it (bounds,
/// zone, stage totals) with its stage segments and their per-minute heart rate, breathing and
/// HRV, and a nap that has no summary (`docs/vendors/audit/withings.md`).
#[tokio::test]
async fn withings_documented_night_and_segments() {
    let ok = |body: Value| json!({"status": 0, "body": body});
    let seg = |a: i64, b: i64, state: i64| json!({"startdate": a, "enddate": b, "state": state, "model_id": 63});
    let mut segments = vec![
        seg(1594242000, 1594242900, 0),
        json!({"startdate": 1594242900, "enddate": 1594248300, "state": 1, "model_id": 63,
            "hr": {"1594242900": 56, "1594246500": 52}, "rr": {"1594242900": 14, "1594246500": 13},
            "rmssd": {"1594242900": 41, "1594246500": 47}}),
        seg(1594248300, 1594251900, 2),
        seg(1594251900, 1594254600, 3),
        seg(1594254600, 1594255200, 0),
        seg(1594255200, 1594263600, 1),
        seg(1594263600, 1594266000, 2),
        seg(1594266000, 1594269600, 3),
        json!({"startdate": 1594269600, "enddate": 1594270800, "state": 0, "model_id": 63,
            "hr": {"1594270740": 64}, "rr": {"1594270740": 16}}),
    ];
    segments
        .push(json!({"startdate": 1594297800, "enddate": 1594300200, "state": 1, "model_id": 93}));
    let summary = ok(
        json!({"more": false, "offset": 0, "series": [{"id": 987654321, "timezone": "Europe/Paris",
        "model": 32, "model_id": 63, "startdate": 1594242000, "enddate": 1594270800, "date": "2020-07-09",
        "data": {"total_timeinbed": 28800, "total_sleep_time": 26100, "lightsleepduration": 13800,
            "deepsleepduration": 6000, "remsleepduration": 6300, "wakeupduration": 2700,
            "sleep_efficiency": 0.91, "hr_average": 57, "rr_average": 14, "sleep_score": 80}}]}),
    );
    // Withings answers the segments of the call's window only.
    let answer = move |q: axum::extract::Query<std::collections::HashMap<String, String>>| {
        let (summary, segments) = (summary.clone(), segments.clone());
        async move {
            let n = |k: &str| q.get(k).and_then(|v| v.parse::<i64>().ok()).unwrap_or_default();
            axum::Json(match q.get("action").map(String::as_str) {
                Some("getsummary") => summary,
                Some("get") => {
                    let within: Vec<&Value> = segments
                        .iter()
                        .filter(|s| {
                            s["startdate"].as_i64() < Some(n("enddate"))
                                && s["enddate"].as_i64() > Some(n("startdate"))
                        })
                        .collect();
                    ok(json!({"series": within}))
                }
                _ => ok(json!({})),
            })
        }
    };
    let api = axum::Router::new().fallback(answer);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, api).await });
    // One call of stage segments (at most 24 hours each).
    let window = "summary_start_time=2020-07-08T20:00:00Z&summary_end_time=2020-07-09T16:00:00Z";
    let (app, key, user) = pulled("withings", base, "363", window).await;

    let day = sleep_day(&app, &key, &user, "2020-07-09").await;
    assert_eq!(
        (day["start_time"].clone(), day["end_time"].clone()),
        (json!("2020-07-08T23:00:00+02:00"), json!("2020-07-09T07:00:00+02:00")),
        "{day}"
    );
    // Asleep `total_sleep_time` 26,100 s = 435 min; in bed 480.
    assert_eq!(day["duration_minutes"], 435, "{day}");
    assert_eq!(day["stages"], json!({"awake": 45, "light": 230, "deep": 100, "rem": 105}), "{day}");
    assert_eq!(
        (day["time_in_bed_minutes"].clone(), day["efficiency_percent"].clone()),
        (json!(480), json!(90.6))
    );
    assert_eq!(day["interruptions_count"], 3, "{day}");
    // The segments' per-minute figures: (56 + 52 + 64)/3, (14 + 13 + 16)/3, (41 + 47)/2.
    assert_eq!(day["avg_heart_rate_bpm"], 57.3, "{day}");
    assert_eq!(day["avg_respiratory_rate"], 14.3, "{day}");
    assert_eq!(day["avg_hrv_rmssd_ms"], 44.0, "{day}");
    // The afternoon's 40 minutes with no summary: a nap of its own.
    assert_eq!(
        (day["nap_count"].clone(), day["nap_duration_minutes"].clone()),
        (json!(1), json!(40))
    );
    assert_eq!(day["total_duration_minutes"], 475);
    assert_eq!(
        nights(&app, &key, &user, "start_date=2020-07-08&end_date=2020-07-10").await,
        [
            (
                "2020-07-08T23:00:00+02:00".to_string(),
                "2020-07-09T07:00:00+02:00".to_string(),
                false
            ),
            (
                "2020-07-09T14:30:00+02:00".to_string(),
                "2020-07-09T15:10:00+02:00".to_string(),
                true
            ),
        ]
    );
    // Duration 90.625; efficiency (90.6 − 60)/35 = 87.4; restoration 100: 92.17 → 92.
    let score = sleep_score(&app, &key, &user, "start_date=2020-07-09&end_date=2020-07-09").await;
    assert_eq!(score, Some(92.0));

    // A weigh-in's notification pulls two hours: the night's summary comes again, its segments
    // do not; the stored timeline stays.
    let narrow = "summary_start_time=2020-07-09T07:00:00Z&summary_end_time=2020-07-09T09:00:00Z";
    let r = app
        .post(&format!("/api/v1/providers/withings/users/{user}/sync?{narrow}"), &key, json!({}))
        .await;
    assert_eq!(pull_done(&app, &r.str("task_id")).await.0, "done");
    let again = sleep_day(&app, &key, &user, "2020-07-09").await;
    assert_eq!(again, day, "the night as it was");
}
