//! `GET /users/{id}/timeseries`: windows in every date form, cursor walks, limits, isolation,
//! downsampling and source priority.

use chrono::{DateTime, Duration, Utc};
use serde_json::Value;

use crate::fixtures::{at, phone, push, watch};
use crate::util::{Auth, TestApp};

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|d| d.with_timezone(&Utc)).expect("time")
}

fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Heart rate every minute 10:00–10:59Z on 2026-03-10 (value 60 + minute % 10), from the watch,
/// in +02:00; steps every 10 minutes from the phone (100 each, from :00) and the watch (80 each,
/// from :05); one heart rate late on the 11th and one at midnight of the 12th.
async fn seed(app: &TestApp, key: &Auth, user: &str) {
    let base = t("2026-03-10T10:00:00Z");
    let mut records: Vec<Value> = (0..60)
        .map(|m| {
            let ts = iso(base + Duration::minutes(m));
            at("HeartRate", &ts, (60 + m % 10) as f64, "bpm", Some("+02:00"), &watch())
        })
        .collect();
    for i in 0..6 {
        let p = base + Duration::minutes(10 * i);
        let w = p + Duration::minutes(5);
        let step = |start: DateTime<Utc>, v: f64, src: &Value| {
            let (a, b) = (iso(start), iso(start + Duration::minutes(1)));
            crate::fixtures::rec("StepCount", &a, &b, v, "count", Some("+02:00"), src)
        };
        records.push(step(p, 100.0, &phone()));
        records.push(step(w, 80.0, &watch()));
    }
    records.push(at("HeartRate", "2026-03-11T23:30:00Z", 55.0, "bpm", Some("+02:00"), &watch()));
    records.push(at("HeartRate", "2026-03-12T00:00:00Z", 56.0, "bpm", Some("+02:00"), &watch()));
    push(app, user, key, records).await;
}

async fn page(app: &TestApp, key: &Auth, user: &str, query: &str) -> Value {
    let r = app.get(&format!("/api/v1/users/{user}/timeseries?{query}"), key).await;
    assert_eq!(r.status, 200, "{query}: {}", r.body);
    r.body
}

fn values(page: &Value) -> Vec<f64> {
    page["data"]
        .as_array()
        .map(|d| d.iter().filter_map(|s| s["value"].as_f64()).collect())
        .unwrap_or_default()
}

fn count(page: &Value) -> usize {
    page["data"].as_array().map(Vec::len).unwrap_or(0)
}

#[tokio::test]
async fn windows_in_every_date_form_and_the_end_of_day_rule() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, serde_json::json!({})).await;
    seed(&app, &key, &user).await;

    let hr = "types=heart_rate&limit=100";
    // The same instant written four ways.
    let unix = t("2026-03-10T10:30:00Z").timestamp();
    for start in ["2026-03-10T10:30:00Z", "2026-03-10T12:30:00%2B02:00", &unix.to_string()] {
        let p = page(
            &app,
            &key,
            &user,
            &format!("{hr}&start_time={start}&end_time=2026-03-10T11:00:00Z"),
        )
        .await;
        assert_eq!(count(&p), 30, "{start}");
        assert_eq!(p["data"][0]["timestamp"], "2026-03-10T12:30:00+02:00");
        assert_eq!(p["data"][0]["zone_offset"], "+02:00");
        assert_eq!(p["data"][0]["type"], "heart_rate");
        assert_eq!(p["data"][0]["unit"], "bpm");
        assert_eq!(p["data"][0]["source"]["provider"], "phonehealth");
        assert_eq!(p["data"][0]["source"]["device_type"], "watch");
        assert_eq!(p["data"][0]["source"]["device"], "Watch6,2");
        assert_eq!(p["data"][0]["is_daily_total"], Value::Null);
        assert_eq!(p["metadata"]["resolution"], "raw");
        assert_eq!(p["metadata"]["sample_count"], 30);
    }
    // A date-only start is midnight UTC; a date-only end includes that whole day.
    let p =
        page(&app, &key, &user, &format!("{hr}&start_time=2026-03-11&end_time=2026-03-11")).await;
    assert_eq!(values(&p), vec![55.0]);
    assert_eq!(p["metadata"]["end_time"], "2026-03-12T00:00:00Z");
    // An end with a time is exclusive, midnight included.
    let p = page(
        &app,
        &key,
        &user,
        &format!("{hr}&start_time=2026-03-11&end_time=2026-03-12T00:00:00Z"),
    )
    .await;
    assert_eq!(values(&p), vec![55.0]);
    let p = page(
        &app,
        &key,
        &user,
        &format!("{hr}&start_time=2026-03-11&end_time=2026-03-12T00:00:01Z"),
    )
    .await;
    assert_eq!(values(&p), vec![55.0, 56.0]);
    // Both types, interleaved by time.
    let p =
        page(&app, &key, &user, "start_time=2026-03-10T10:00:00Z&end_time=2026-03-10T10:06:00Z")
            .await;
    let kinds: Vec<&str> = p["data"]
        .as_array()
        .map(|d| d.iter().filter_map(|s| s["type"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        kinds,
        [
            "heart_rate",
            "steps",
            "heart_rate",
            "heart_rate",
            "heart_rate",
            "heart_rate",
            "heart_rate",
            "steps"
        ]
    );
    assert_eq!(p["data"][1]["is_daily_total"], false);
}

#[tokio::test]
async fn bad_input_gets_the_contract_errors() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, serde_json::json!({})).await;
    let path = |q: &str| format!("/api/v1/users/{user}/timeseries?{q}");
    let window = "start_time=2026-03-10&end_time=2026-03-11";

    app.get(&path("end_time=2026-03-11"), &key)
        .await
        .assert_invalid(&["query", "start_time"], "missing");
    app.get(&path("start_time=2026-03-11"), &key)
        .await
        .assert_invalid(&["query", "end_time"], "missing");
    app.get(&path("start_time=soon&end_time=2026-03-11"), &key)
        .await
        .assert_invalid(&["query", "start_time"], "datetime_parsing");
    app.get(&path("start_time=2026-03-11T00:00:00Z&end_time=2026-03-10T00:00:00Z"), &key)
        .await
        .assert_invalid(&["query", "end_time"], "value_error");
    for limit in ["0", "101", "x"] {
        let r = app.get(&path(&format!("{window}&limit={limit}")), &key).await;
        assert_eq!(r.status, 422, "limit={limit}: {}", r.body);
    }
    assert_eq!(app.get(&path(&format!("{window}&limit=100")), &key).await.status, 200);
    assert_eq!(app.get(&path(&format!("{window}&limit=1")), &key).await.status, 200);
    app.get(&path(&format!("{window}&types=heart_rate&types=pulse")), &key)
        .await
        .assert_invalid(&["query", "types"], "enum");
    app.get(&path(&format!("{window}&resolution=2min")), &key)
        .await
        .assert_invalid(&["query", "resolution"], "enum");
    let r = app.get(&path(&format!("{window}&cursor=nonsense")), &key).await;
    r.assert_error(400, "Invalid cursor format: 'nonsense'. Expected 'timestamp|id'.");
    let unknown = uuid::Uuid::now_v7();
    app.get(&format!("/api/v1/users/{unknown}/timeseries?{window}"), &key)
        .await
        .assert_error(404, &format!("User with ID: {unknown} not found."));
    let r = app.get(&path(window), &Auth::None).await;
    assert_eq!(r.status, 401);
    // Nothing stored yet: an empty page.
    let p = page(&app, &key, &user, window).await;
    assert_eq!(p["data"], serde_json::json!([]));
    assert_eq!(p["pagination"]["has_more"], false);
    assert_eq!(p["pagination"]["next_cursor"], Value::Null);
}

/// Walks a window page by page while samples arrive both behind and ahead of the cursor: no
/// sample is returned twice, none is skipped, and those ahead are picked up.
#[tokio::test]
async fn cursor_walks_have_no_duplicate_and_no_gap_while_samples_arrive() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, serde_json::json!({})).await;
    let other = app.user(&key, serde_json::json!({})).await;
    seed(&app, &key, &user).await;
    // Another user with samples at the very same instants: never seen in the walk.
    let theirs: Vec<Value> = (0..60)
        .map(|m| {
            let ts = iso(t("2026-03-10T10:00:00Z") + Duration::minutes(m));
            at("HeartRate", &ts, 200.0, "bpm", None, &watch())
        })
        .collect();
    push(&app, &other, &key, theirs).await;

    let window = "start_time=2026-03-10T00:00:00Z&end_time=2026-03-11T00:00:00Z&limit=7";
    let mut seen: Vec<(String, String, String)> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    let mut first_page = Vec::new();
    let mut second_page: Option<Value> = None;
    loop {
        let q = match &cursor {
            Some(c) => format!("{window}&cursor={c}"),
            None => window.to_string(),
        };
        let p = page(&app, &key, &user, &q).await;
        pages += 1;
        for s in p["data"].as_array().into_iter().flatten() {
            assert_ne!(s["value"], 200.0, "another user's sample");
            seen.push((
                s["timestamp"].as_str().unwrap_or("").to_string(),
                s["type"].as_str().unwrap_or("").to_string(),
                s["source"]["device"].as_str().unwrap_or("").to_string(),
            ));
        }
        if pages == 1 {
            first_page = values(&p);
        }
        if pages == 2 {
            second_page = Some(p.clone());
        }
        if pages == 3 {
            // Samples arrive: one behind the cursor (before 10:00), three ahead of it.
            let new = vec![
                at("HeartRate", "2026-03-10T09:00:00Z", 70.0, "bpm", Some("+02:00"), &watch()),
                at("HeartRate", "2026-03-10T10:59:30Z", 71.0, "bpm", Some("+02:00"), &watch()),
                at("HeartRate", "2026-03-10T11:30:00Z", 72.0, "bpm", Some("+02:00"), &phone()),
                at("HeartRate", "2026-03-10T23:59:59Z", 73.0, "bpm", Some("+02:00"), &watch()),
            ];
            push(&app, &user, &key, new).await;
        }
        assert_eq!(p["pagination"]["has_more"], p["pagination"]["next_cursor"].is_string());
        match p["pagination"]["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
        assert!(pages < 100, "the walk does not end");
    }
    // 60 heart rates + 12 steps seeded, plus the three that arrived ahead of the cursor.
    assert_eq!(seen.len(), 75, "{seen:?}");
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), seen.len(), "a sample came twice");
    assert!(
        !seen.iter().any(|s| s.0 == "2026-03-10T11:00:00+02:00"),
        "the sample behind the cursor"
    );

    // The second page's previous cursor leads back to the first page.
    let Some(second) = second_page else { panic!("no second page") };
    let prev = second["pagination"]["previous_cursor"].as_str().expect("previous cursor");
    let back = page(&app, &key, &user, &format!("{window}&cursor={prev}")).await;
    assert_eq!(values(&back), first_page);
    // The sample that arrived behind the walk is before it: more to go back to.
    assert_eq!(back["pagination"]["has_more"], true);
    let first = page(&app, &key, &user, window).await;
    assert_eq!(values(&first)[0], 70.0);
    assert!(back["pagination"]["next_cursor"].is_string());
}

#[tokio::test]
async fn downsampling_and_source_priority() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, serde_json::json!({})).await;
    seed(&app, &key, &user).await;
    let window = "start_time=2026-03-10&end_time=2026-03-10";

    // Hourly: steps are summed per source, heart rate averaged (60..69 six times: 64.5).
    let p = page(&app, &key, &user, &format!("{window}&resolution=1hour")).await;
    let rows: Vec<(String, String, f64)> = p["data"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["type"].as_str().unwrap_or("").into(),
                s["source"]["device_type"].as_str().unwrap_or("").into(),
                s["value"].as_f64().unwrap_or(f64::NAN),
            )
        })
        .collect();
    let mut rows = rows;
    rows.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    assert_eq!(
        rows,
        vec![
            ("heart_rate".into(), "watch".into(), 64.5),
            ("steps".into(), "phone".into(), 600.0),
            ("steps".into(), "watch".into(), 480.0),
        ]
    );
    assert_eq!(p["metadata"]["resolution"], "1hour");
    assert_eq!(p["data"][0]["timestamp"], "2026-03-10T12:00:00+02:00");

    // With priority, the watch wins the hour both counted steps in.
    let p = page(
        &app,
        &key,
        &user,
        &format!("{window}&types=steps&resolution=1hour&filter_by_priority=true"),
    )
    .await;
    assert_eq!(values(&p), vec![480.0]);
    assert_eq!(p["data"][0]["source"]["device_type"], "watch");
    let p = page(&app, &key, &user, &format!("{window}&types=steps&filter_by_priority=true")).await;
    assert_eq!(values(&p), vec![80.0; 6]);
    let p = page(&app, &key, &user, &format!("{window}&types=steps")).await;
    assert_eq!(count(&p), 12);

    // Daily and 15-minute buckets page like raw samples.
    let p = page(&app, &key, &user, &format!("{window}&types=heart_rate&resolution=1day")).await;
    assert_eq!(values(&p), vec![64.5]);
    let mut all = Vec::new();
    let mut cursor = String::new();
    loop {
        let p = page(
            &app,
            &key,
            &user,
            &format!("{window}&types=heart_rate&resolution=15min&limit=3{cursor}"),
        )
        .await;
        all.extend(values(&p));
        match p["pagination"]["next_cursor"].as_str() {
            Some(c) => cursor = format!("&cursor={c}"),
            None => break,
        }
    }
    // Minutes 0–14 of 60..69: (60+…+69) + (60+…+64) = 645 + 310 over 15.
    let q = (645.0 + 310.0) / 15.0;
    assert_eq!(all.len(), 4);
    assert!((all[0] - q).abs() < 1e-9, "{all:?}");
}
