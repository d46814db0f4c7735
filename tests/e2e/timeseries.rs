//! `GET /users/{id}/timeseries`: windows in every date form, cursor walks, limits, isolation,
//! downsampling and source priority.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

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

/// A sample as stored, for the reference answer.
#[derive(Debug, Clone)]
struct Stored {
    series: i16,
    source: uuid::Uuid,
    ts: DateTime<Utc>,
    value: f64,
    zone: Option<i16>,
    total: Option<bool>,
}

/// A row of a page: (instant, series, source, value, zone offset, is_daily_total).
type Row = (DateTime<Utc>, i16, uuid::Uuid, f64, Option<i16>, Option<bool>);

fn floor_to(ts: DateTime<Utc>, secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(ts.timestamp().div_euclid(secs) * secs, 0).unwrap_or(ts)
}

/// What a page walk must give, computed here from the raw samples by the documented rules:
/// buckets in UTC, additive series summed (intraday samples, else daily totals), levels
/// averaged, maxima maximal; with `resolve`, a source is left out of an hour (or a wider
/// bucket) where a better-ranked source has samples of the series.
fn reference(
    samples: &[Stored],
    (start, end): (DateTime<Utc>, DateTime<Utc>),
    width: Option<i64>,
    resolve: bool,
    rank: &std::collections::HashMap<uuid::Uuid, i32>,
) -> Vec<Row> {
    use schema::catalogue::series_types::{Aggregation, by_id};
    let window = width.unwrap_or(3600).max(3600);
    let better_has = |s: &Stored, at: DateTime<Utc>| {
        samples.iter().any(|o| {
            o.series == s.series
                && rank[&o.source] < rank[&s.source]
                && floor_to(o.ts, window) == floor_to(at, window)
        })
    };
    let inside: Vec<&Stored> = samples.iter().filter(|s| s.ts >= start && s.ts < end).collect();
    let mut rows: Vec<Row> = match width {
        None => inside
            .iter()
            .filter(|s| !(resolve && better_has(s, s.ts)))
            .map(|s| (s.ts, s.series, s.source, s.value, s.zone, s.total))
            .collect(),
        Some(w) => {
            let mut buckets: std::collections::BTreeMap<
                (DateTime<Utc>, i16, uuid::Uuid),
                Vec<&Stored>,
            > = Default::default();
            for s in inside {
                buckets.entry((floor_to(s.ts, w), s.series, s.source)).or_default().push(s);
            }
            buckets
                .into_iter()
                .filter(|((at, _, _), group)| !(resolve && better_has(group[0], *at)))
                .map(|((at, series, source), group)| {
                    let agg = by_id(schema::ids::SeriesId(series))
                        .map(|t| t.aggregation)
                        .unwrap_or(Aggregation::Avg);
                    let all: Vec<f64> = group.iter().map(|s| s.value).collect();
                    let intraday: Vec<f64> =
                        group.iter().filter(|s| s.total != Some(true)).map(|s| s.value).collect();
                    let value = match agg {
                        Aggregation::Sum if !intraday.is_empty() => intraday.iter().sum(),
                        Aggregation::Sum => all.iter().sum(),
                        Aggregation::Max => all.iter().cloned().fold(f64::MIN, f64::max),
                        Aggregation::Avg => all.iter().sum::<f64>() / all.len() as f64,
                    };
                    let zone = group.iter().filter_map(|s| s.zone).min();
                    let total = (agg == Aggregation::Sum).then_some(intraday.is_empty());
                    (at, series, source, value, zone, total)
                })
                .collect()
        }
    };
    rows.sort_by_key(|r| (r.0, r.1, r.2));
    rows
}

/// Every row of a window, walking it with the cursor `limit` rows a page; and, when `back`,
/// walking back from the last page with the previous cursors, which must give the same rows.
async fn walk(
    app: &TestApp,
    key: &Auth,
    user: &str,
    query: &str,
    limit: usize,
    back: bool,
) -> Vec<Value> {
    let mut pages: Vec<Value> = Vec::new();
    let mut cursor = String::new();
    loop {
        let p = page(app, key, user, &format!("{query}&limit={limit}{cursor}")).await;
        assert!(count(&p) <= limit);
        let next = p["pagination"]["next_cursor"].as_str().map(|c| format!("&cursor={c}"));
        pages.push(p);
        match next {
            Some(c) => cursor = c,
            None => break,
        }
        assert!(pages.len() < 2000, "{query}: the walk does not end");
    }
    let rows: Vec<Value> =
        pages.iter().flat_map(|p| p["data"].as_array().cloned().unwrap_or_default()).collect();
    if back && pages.len() > 1 {
        let mut back_pages = vec![pages[pages.len() - 1].clone()];
        while let Some(prev) =
            back_pages[back_pages.len() - 1]["pagination"]["previous_cursor"].as_str()
        {
            let p = page(app, key, user, &format!("{query}&limit={limit}&cursor={prev}")).await;
            back_pages.push(p);
            assert!(back_pages.len() <= pages.len(), "{query}: the walk back is longer");
        }
        let back_rows: Vec<Value> = back_pages
            .iter()
            .rev()
            .flat_map(|p| p["data"].as_array().cloned().unwrap_or_default())
            .collect();
        assert_eq!(back_rows, rows, "{query}: walking back gives other rows");
    }
    rows
}

/// Compares a walk's rows with the reference's.
fn same(
    query: &str,
    got: &[Value],
    want: &[Row],
    devices: &std::collections::HashMap<uuid::Uuid, String>,
) {
    use schema::catalogue::series_types::by_id;
    assert_eq!(got.len(), want.len(), "{query}: {} rows, want {}", got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let at = DateTime::parse_from_rfc3339(g["timestamp"].as_str().unwrap_or(""))
            .map(|d| d.with_timezone(&Utc))
            .ok();
        let slug = by_id(schema::ids::SeriesId(w.1)).map(|t| t.slug).unwrap_or("");
        let zone = w.4.map(schema::zone::format);
        let value = g["value"].as_f64().unwrap_or(f64::NAN);
        let ok = at == Some(w.0)
            && g["type"] == slug
            && g["source"]["device"] == devices[&w.2].as_str()
            && (value - w.3).abs() <= 1e-9 * w.3.abs().max(1.0)
            && g["zone_offset"].as_str().map(str::to_string) == zone
            && g["is_daily_total"].as_bool() == w.5;
        assert!(ok, "{query}: row {i}: {g}, want {w:?} ({slug})");
    }
}

/// Every resolution, over aligned, unaligned, narrow and long windows, in pages of every size,
/// with and without source priority, forward and back, gives what the raw samples give —
/// before and after samples are sent again with other values.
#[tokio::test]
async fn every_resolution_answers_what_raw_samples_give() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, serde_json::json!({})).await;
    let user_id: schema::ids::UserId = user.parse().expect("uuid");
    // A deterministic spread of samples over 2026-03-09..11: heart rate from the watch every
    // minute for three hours and every 37 minutes besides, and from the phone every 11 minutes
    // on the 10th; steps from the phone every 10 minutes in the daytime and from the watch
    // every 15 minutes around noon on the 10th; a few six-minute-walk distances (a maximum).
    let day0 = t("2026-03-09T00:00:00Z");
    let mut records = Vec::new();
    let mut n = 7u64;
    let mut rnd = |lo: f64, hi: f64| {
        n = n.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((n >> 33) as f64 / (1u64 << 31) as f64)
    };
    let zone = |i: i64| match i % 5 {
        0 => None,
        1 => Some("-05:00"),
        _ => Some("+02:00"),
    };
    for m in 0..180 {
        let ts = iso(day0 + Duration::hours(30) + Duration::minutes(m));
        records.push(at("HeartRate", &ts, rnd(50.0, 150.0).round(), "bpm", zone(m), &watch()));
    }
    for i in 0..(3 * 24 * 60 / 37) {
        let ts = iso(day0 + Duration::minutes(37 * i + 3));
        records.push(at("HeartRate", &ts, rnd(50.0, 100.0).round(), "bpm", zone(i), &watch()));
    }
    for i in 0..(24 * 60 / 11) {
        let ts = iso(day0 + Duration::days(1) + Duration::minutes(11 * i + 1));
        records.push(at("HeartRate", &ts, rnd(55.0, 110.0).round(), "bpm", zone(i), &phone()));
    }
    for d in 0..3 {
        for i in 0..(13 * 6) {
            let s = day0 + Duration::days(d) + Duration::hours(7) + Duration::minutes(10 * i);
            let (a, b) = (iso(s), iso(s + Duration::minutes(10)));
            let v = rnd(0.0, 300.0).round();
            records.push(crate::fixtures::rec("StepCount", &a, &b, v, "count", zone(i), &phone()));
        }
    }
    for i in 0..12 {
        let s = day0 + Duration::hours(35) + Duration::minutes(15 * i);
        let (a, b) = (iso(s), iso(s + Duration::minutes(15)));
        let v = rnd(0.0, 900.0).round();
        records.push(crate::fixtures::rec(
            "StepCount",
            &a,
            &b,
            v,
            "count",
            Some("+02:00"),
            &watch(),
        ));
    }
    for i in 0..6 {
        let ts = iso(day0 + Duration::hours(9 * i + 2) + Duration::minutes(7 * i));
        let v = rnd(400.0, 600.0).round();
        records.push(at("SixMinuteWalkTestDistance", &ts, v, "m", Some("+02:00"), &phone()));
    }
    push(&app, &user, &key, records).await;

    // Daily totals of steps from the phone: on the 11th beside its intraday samples (which win
    // in a day bucket), and on the 12th alone (which then stands); written by the storage path
    // the export and vendor pulls use.
    let db = schema::Db::connect(&app.settings.database_url, 2).await.expect("db");
    let phone_id: uuid::Uuid = app
        .db()
        .await
        .query_one(
            "select id from data_sources where user_id = $1 and device_model like 'iPhone%'",
            &[&user_id],
        )
        .await
        .expect("phone")
        .get(0);
    let totals = |value: f64, at: &str| schema::samples::SampleRow {
        series_type_id: schema::catalogue::series_types::by_slug("steps")
            .map(|t| t.id)
            .unwrap_or_default(),
        data_source_id: phone_id,
        ts: t(at),
        value,
        zone_offset: Some(120),
        is_daily_total: Some(true),
    };
    let store = |rows: Vec<schema::samples::SampleRow>| {
        let db = db.clone();
        async move {
            let mut client = db.client().await.expect("client");
            let tx = client.transaction().await.expect("tx");
            schema::samples::store(&tx, user_id, uuid::Uuid::now_v7(), "phonehealth", &rows, false)
                .await
                .expect("store");
            tx.commit().await.expect("commit");
        }
    };
    store(vec![totals(9000.0, "2026-03-10T22:00:00Z"), totals(7000.0, "2026-03-11T22:00:00Z")])
        .await;

    let devices: std::collections::HashMap<uuid::Uuid, String> = app
        .db()
        .await
        .query("select id, device_model from data_sources where user_id = $1", &[&user_id])
        .await
        .expect("sources")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    // The watch ranks before the phone (the default order of device types).
    let rank: std::collections::HashMap<uuid::Uuid, i32> = devices
        .iter()
        .map(|(id, model)| (*id, if model.starts_with("Watch") { 0 } else { 1 }))
        .collect();
    let windows = [
        ("2026-03-09T00:00:00Z", "2026-03-12T00:00:00Z"),
        ("2026-03-09T10:17:30Z", "2026-03-11T15:42:10Z"),
        ("2026-03-10T06:10:00Z", "2026-03-10T06:50:00Z"),
        ("2026-01-01T00:00:00Z", "2026-12-31T00:00:00Z"),
    ];
    let resolutions = [
        ("raw", None),
        ("1min", Some(60)),
        ("5min", Some(300)),
        ("15min", Some(900)),
        ("1hour", Some(3600)),
        ("1day", Some(86_400)),
    ];
    let check = |round: &'static str| {
        let (app, key, user, devices, rank) = (&app, &key, &user, &devices, &rank);
        async move {
            let samples: Vec<Stored> = app
                .db()
                .await
                .query(
                    "select series_type_id, data_source_id, ts, value, zone_offset, is_daily_total
                     from samples where user_id = $1",
                    &[&user_id],
                )
                .await
                .expect("samples")
                .iter()
                .map(|r| Stored {
                    series: r.get(0),
                    source: r.get(1),
                    ts: r.get(2),
                    value: r.get(3),
                    zone: r.get(4),
                    total: r.get(5),
                })
                .collect();
            for (start, end) in windows {
                for (resolution, width) in resolutions {
                    for resolve in [false, true] {
                        let want = reference(&samples, (t(start), t(end)), width, resolve, rank);
                        let query = format!(
                            "start_time={start}&end_time={end}&resolution={resolution}&filter_by_priority={resolve}"
                        )
                        .replace('+', "%2B");
                        // Small pages (and the walk back) where the window's edges fall
                        // inside buckets; pages of 100 everywhere.
                        let aligned = start.ends_with("T00:00:00Z") && end.ends_with("T00:00:00Z");
                        let limits: &[usize] = if aligned { &[100] } else { &[7, 100] };
                        for &limit in limits {
                            let back = limit == 7 && !resolve;
                            let got = walk(app, key, user, &query, limit, back).await;
                            same(&format!("{round}: {query}&limit={limit}"), &got, &want, devices);
                        }
                    }
                }
            }
        }
    };
    check("as sent").await;
    // The same samples again, a third of them with other values (and zones): the hours and days
    // they touch are recounted.
    let changed: Vec<schema::samples::SampleRow> = app
        .db()
        .await
        .query(
            "select series_type_id, data_source_id, ts, value, zone_offset, is_daily_total
             from samples where user_id = $1 order by ts",
            &[&user_id],
        )
        .await
        .expect("samples")
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let value: f64 = r.get(3);
            schema::samples::SampleRow {
                series_type_id: r.get(0),
                data_source_id: r.get(1),
                ts: r.get(2),
                value: if i % 3 == 0 { value + 7.0 } else { value },
                zone_offset: if i % 6 == 0 { Some(-300) } else { r.get(4) },
                is_daily_total: r.get(5),
            }
        })
        .collect();
    store(changed).await;
    let (differing, _) = crate::sdk_sync::rollups_against_samples(&app, &user).await;
    assert_eq!(differing, 0, "rollups differ from a recount after values changed");
    check("after changes").await;
}

/// Where a user's samples lie, per series, without reading a sample: what the portal opens its
/// charts on.
#[tokio::test]
async fn data_coverage_says_where_the_samples_lie() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let path = format!("/api/v1/users/{user}/data-coverage");
    let r = app.get(&path, &key).await;
    assert_eq!(r.body, json!({"first_day": null, "last_day": null, "series": []}), "{}", r.body);
    seed(&app, &key, &user).await;
    let r = app.get(&path, &key).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        (r.body["first_day"].clone(), r.body["last_day"].clone()),
        (json!("2026-03-10"), json!("2026-03-12"))
    );
    let series = |name: &str| {
        let list = r.body["series"].as_array().cloned().unwrap_or_default();
        list.into_iter().find(|s| s["type"] == name).unwrap_or(Value::Null)
    };
    let hr = series("heart_rate");
    assert_eq!(
        (hr["first_day"].clone(), hr["last_day"].clone(), hr["samples"].clone()),
        (json!("2026-03-10"), json!("2026-03-12"), json!(62)),
        "{hr}"
    );
    assert_eq!(hr["unit"], "bpm");
    let steps = series("steps");
    assert_eq!(steps["samples"], 12, "{steps}");
    // Per source, the most samples first: the phone's steps and the watch's, six each.
    let sources = steps["sources"].as_array().cloned().unwrap_or_default();
    assert_eq!(sources.len(), 2, "{steps}");
    assert!(sources.iter().all(|s| s["samples"] == 6 && s["last_day"] == "2026-03-10"), "{steps}");
    assert!(
        sources.iter().all(|s| s["display_name"].as_str().is_some_and(|n| !n.is_empty())),
        "{steps}"
    );
    assert_eq!(hr["sources"].as_array().map(Vec::len), Some(1), "{hr}");
    assert_eq!(hr["sources"][0]["samples"], 62);
    // Sealed, the days' rollup rows are gone: the blocks say the same.
    let before = app.get(&path, &key).await.body;
    assert!(crate::sealing::seal_all(&app).await.days > 0);
    assert_eq!(app.count("select count(*) from utc_day_rollups where not sealed").await, 0);
    assert_eq!(app.get(&path, &key).await.body, before);
    assert_eq!(app.get(&path, &Auth::None).await.status, 401);
    let nobody = uuid::Uuid::new_v4();
    let r = app.get(&format!("/api/v1/users/{nobody}/data-coverage"), &key).await;
    r.assert_error(404, &format!("User with ID: {nobody} not found."));
}
