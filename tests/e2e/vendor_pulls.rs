//! Pulls from a cloud vendor, against a local server answering as Oura's API v2 documents
//! (`docs/vendors/oura.md` §2): paged collections with `next_token`, a 429 with `Retry-After`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde_json::{Value, json};

use crate::util::{Mode, TestApp};

#[derive(Default)]
pub(crate) struct Oura {
    activity_calls: AtomicUsize,
    /// While set, the sleep collection never answers (a worker killed mid-pull).
    hang: std::sync::atomic::AtomicBool,
    sleep_calls: AtomicUsize,
}

async fn collection(
    State(oura): State<Arc<Oura>>,
    Path(name): Path<String>,
    Query(q): Query<std::collections::HashMap<String, String>>,
    headers: HeaderMap,
) -> axum::response::Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer oura-access-1") {
        return (StatusCode::UNAUTHORIZED, axum::Json(json!({"detail": "bad token"})))
            .into_response();
    }
    let page = |data: Value, next: Option<&str>| {
        axum::Json(json!({"data": data, "next_token": next})).into_response()
    };
    if name == "sleep" {
        oura.sleep_calls.fetch_add(1, Ordering::SeqCst);
        while oura.hang.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    match name.as_str() {
        "sleep" => page(
            json!([{"id": "night-1", "day": "2026-03-10", "type": "long_sleep", "period": 0,
                "bedtime_start": "2026-03-09T23:00:00+01:00", "bedtime_end": "2026-03-10T07:00:00+01:00",
                "time_in_bed": 28800, "low_battery_alert": false,
                "heart_rate": {"interval": 300, "items": [52, 50], "timestamp": "2026-03-09T23:00:00+01:00"},
                "sleep_phase_5_min": "2222111133334"}]),
            None,
        ),
        "workout" => page(
            json!([{"id": "wo-1", "activity": "running", "day": "2026-03-10",
                "start_datetime": "2026-03-10T18:00:00+01:00", "end_datetime": "2026-03-10T18:45:00+01:00",
                "calories": 512.5, "distance": 8200.0, "intensity": "hard", "source": "confirmed"}]),
            None,
        ),
        "daily_activity" => {
            // The first call is rate limited.
            if oura.activity_calls.fetch_add(1, Ordering::SeqCst) == 0 {
                return (StatusCode::TOO_MANY_REQUESTS, [("retry-after", "1")], "slow down")
                    .into_response();
            }
            page(
                json!([{"id": "a", "day": "2026-03-10", "timestamp": "2026-03-10T04:00:00+01:00",
                    "steps": 9876, "active_calories": 432, "total_calories": 2345}]),
                None,
            )
        }
        "heartrate" => match q.get("next_token").map(String::as_str) {
            None => page(
                json!([{"bpm": 61, "source": "awake", "timestamp": "2026-03-10T12:00:00+00:00"}]),
                Some("p2"),
            ),
            Some("p2") => page(
                json!([{"bpm": 63, "source": "awake", "timestamp": "2026-03-10T12:05:00+00:00"}]),
                None,
            ),
            Some(_) => (StatusCode::BAD_REQUEST, "bad token").into_response(),
        },
        "daily_readiness" => page(
            json!([{"id": "r", "day": "2026-03-10", "timestamp": "2026-03-10T00:00:00+01:00", "score": 81,
                "temperature_deviation": 0.3}]),
            None,
        ),
        "daily_spo2" => page(
            json!([{"id": "s", "day": "2026-03-10", "spo2_percentage": {"average": 97.1}}]),
            None,
        ),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

pub(crate) async fn pull_done(app: &TestApp, task: &str) -> (String, i32) {
    let id: uuid::Uuid = task.parse().expect("task id");
    for _ in 0..400 {
        let row = app
            .db()
            .await
            .query_one("select status::text, attempts from vendor_pulls where id = $1", &[&id])
            .await
            .expect("pull");
        let status: String = row.get(0);
        if status != "queued" {
            return (status, row.get(1));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the pull did not end in time");
}

/// A local Oura API, and the service configured to pull from it every `every` seconds.
pub(crate) async fn oura_and_app(every: u64) -> (Arc<Oura>, TestApp) {
    oura_and(Mode::All, every).await
}

async fn oura_and(mode: Mode, every: u64) -> (Arc<Oura>, TestApp) {
    let oura = Arc::new(Oura::default());
    let api = axum::Router::new()
        .route("/v2/usercollection/{name}", axum::routing::get(collection))
        .with_state(oura.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, api).await });
    let app = TestApp::spawn_with(mode, |s| {
        let vars = [
            ("OURA_CLIENT_ID", "oura-app".to_string()),
            ("OURA_CLIENT_SECRET", "oura-secret".to_string()),
            ("OURA_API_URL", base.clone()),
            ("OURA_WEBHOOK_TOKEN", "verify-me".to_string()),
        ];
        s.vendor_variables = Some(vars.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
        s.vendor_pull_interval_seconds = every;
    })
    .await;
    (oura, app)
}

/// Connects `user` to Oura with `access` as its (valid for a day) access token.
pub(crate) async fn connect(app: &TestApp, user: &str, access: &str) {
    connect_to(app, user, "oura", access, None).await;
}

/// The service with these vendor variables.
async fn app_with(vars: &[(&str, String)]) -> TestApp {
    let vars: std::collections::BTreeMap<String, String> =
        vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    TestApp::spawn_with(Mode::All, |s| s.vendor_variables = Some(vars)).await
}

/// Connects `user` to `provider` with `access` (valid for a day) as the vendor's `vendor_user`.
pub(crate) async fn connect_to(
    app: &TestApp,
    user: &str,
    provider: &str,
    access: &str,
    vendor_user: Option<&str>,
) {
    let db = schema::Db::connect(&app.settings.database_url, 2).await.expect("pool");
    let keys = schema::sealed::MasterKeys::new(crate::util::MASTER_KEY, None).expect("key");
    let grant = schema::connections::Grant {
        access_token: access,
        refresh_token: Some("oura-refresh-1"),
        expires_at: Some(chrono::Utc::now() + chrono::Duration::days(1)),
        scope: None,
        provider_user_id: vendor_user,
    };
    let user_id: schema::ids::UserId = user.parse().expect("uuid");
    schema::connections::connect(&db, &keys, user_id, provider, &grant, true)
        .await
        .expect("connect");
}

#[tokio::test]
async fn an_oura_pull_waits_out_a_429_stores_every_page_once_and_a_repull_stores_nothing_twice() {
    let (oura, app) = oura_and_app(3600).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let sync = |user: &str, provider: &str, q: &str| {
        format!("/api/v1/providers/{provider}/users/{user}/sync?{q}")
    };
    let window = "summary_start_time=2026-03-09T00:00:00Z&summary_end_time=2026-03-11T00:00:00Z";

    // Not connected yet; a phone provider; too long a window.
    app.post(&sync(&user, "oura", window), &key, json!({}))
        .await
        .assert_error(401, "User not connected to oura");
    app.post(&sync(&user, "phonehealth", window), &key, json!({}))
        .await
        .assert_error(401, "No access token available for phonehealth (SDK-based provider?)");
    // A vendor without credentials here: no worker would ever run its pull.
    app.post(&sync(&user, "whoop", window), &key, json!({}))
        .await
        .assert_error(400, "Provider 'whoop' is not enabled");
    let long = "summary_start_time=2026-01-01T00:00:00Z&summary_end_time=2026-03-11T00:00:00Z";
    app.post(&sync(&user, "oura", long), &key, json!({}))
        .await
        .assert_invalid(&["query", "summary_end_time"], "value_error");

    connect(&app, &user, "oura-access-1").await;

    let r = app.post(&sync(&user, "oura", window), &key, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!((r.body["success"].clone(), r.body["async"].clone()), (json!(true), json!(true)));
    assert_eq!(r.body["message"], "Sync task queued for oura. Check task status for results.");
    let task = r.str("task_id");
    let (status, attempts) = pull_done(&app, &task).await;
    assert_eq!(status, "done");
    assert_eq!(attempts, 0, "waiting out a 429 is no failed attempt");
    assert_eq!(oura.activity_calls.load(Ordering::SeqCst), 2);

    let per_user = |table: &str| format!("select count(*) from {table} where user_id = '{user}'");
    let samples = app.count(&per_user("samples")).await;
    // Sleep heart rate 2, heart rate pages 2, activity 3 totals, readiness 2, SpO2 1.
    assert_eq!(samples, 10);
    let steps = "select value from samples s join series_types t on t.id = s.series_type_id
                 where t.slug = 'steps' and s.is_daily_total";
    let rows = app.db().await.query(steps, &[]).await.expect("steps");
    assert_eq!(rows.iter().map(|r| r.get::<_, f64>(0)).collect::<Vec<_>>(), [9876.0]);
    assert_eq!(app.count(&per_user("sleep_sessions")).await, 1);
    assert_eq!(app.count(&per_user("workouts")).await, 1);
    // Every page kept as it came: six collections, heart rate in two pages.
    assert_eq!(app.count("select count(*) from vendor_pages").await, 7);
    let runs = app.get(&format!("/api/v1/users/{user}/sync/runs"), &key).await;
    let run = runs.body.as_array().into_iter().flatten().find(|r| r["run_id"] == task.as_str());
    assert_eq!(run.map(|r| r["status"].clone()), Some(json!("success")), "{}", runs.body);
    let connections = app.get(&format!("/api/v1/users/{user}/connections"), &key).await;
    assert!(connections.body[0]["last_synced_at"].is_string(), "{}", connections.body);

    // The same window again: everything read again, nothing stored twice.
    let again = app.post(&sync(&user, "oura", window), &key, json!({})).await.str("task_id");
    assert_eq!(pull_done(&app, &again).await.0, "done");
    assert_eq!(app.count(&per_user("samples")).await, samples);
    assert_eq!(app.count(&per_user("sleep_sessions")).await, 1);
    assert_eq!(app.count(&per_user("workouts")).await, 1);

    // History in windows of at most 31 days, oldest first.
    let historical = |provider: &str, q: &str| {
        format!("/api/v1/providers/{provider}/users/{user}/sync/historical?{q}")
    };
    let r = app.post(&historical("oura", "days=70"), &key, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!((r.body["method"].clone(), r.body["days"].clone()), (json!("pull_api"), json!(70)));
    let ids: Vec<uuid::Uuid> = r.body["task_ids"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str()?.parse().ok())
        .collect();
    let windows = app
        .db()
        .await
        .query(
            "select (extract(epoch from window_end - window_start) / 86400)::int8 from vendor_pulls
             where id = any($1) order by window_start",
            &[&ids],
        )
        .await
        .expect("windows");
    assert_eq!(windows.iter().map(|w| w.get::<_, i64>(0)).collect::<Vec<_>>(), [31, 31, 8]);
    assert_eq!(r.body["task_id"], r.body["task_ids"][0]);
    app.post(&historical("phonehealth", "days=7"), &key, json!({}))
        .await
        .assert_error(400, "Provider 'phonehealth' does not support historical sync.");
    app.post(&historical("oura", "days=0"), &key, json!({}))
        .await
        .assert_invalid(&["query", "days"], "greater_than_equal");
}

/// Connections of a pulling vendor are pulled on their own; one whose pulls fail says why and
/// when the next attempt is.
#[tokio::test]
async fn scheduled_pulls_keep_connections_fresh_and_a_failing_one_says_why() {
    let (_oura, app) = oura_and_app(1).await;
    let key = app.api_key().await;
    let (good, bad) = (app.user(&key, json!({})).await, app.user(&key, json!({})).await);
    connect(&app, &good, "oura-access-1").await;
    connect(&app, &bad, "revoked-at-oura").await;
    let connection = |user: String| {
        let (app, key) = (&app, &key);
        async move { app.get(&format!("/api/v1/users/{user}/connections"), key).await.body[0].clone() }
    };
    let mut seen = (Value::Null, Value::Null);
    for _ in 0..300 {
        seen = (connection(good.clone()).await, connection(bad.clone()).await);
        if seen.0["last_synced_at"].is_string() && seen.1["last_pull_error"].is_string() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (good, bad) = seen;
    assert!(
        good["last_synced_at"].is_string() && good["last_pull_success_at"].is_string(),
        "{good}"
    );
    assert_eq!(good["last_pull_error"], Value::Null);
    let error = bad["last_pull_error"].as_str().unwrap_or_default();
    assert!(error.contains("401"), "{bad}");
    assert!(bad["next_pull_at"].is_string(), "{bad}");
    assert_eq!(bad["last_synced_at"], Value::Null);
}

/// A worker killed in the middle of a pull loses nothing: another takes the pull over and it
/// is stored once.
#[tokio::test]
async fn a_worker_killed_mid_pull_loses_nothing() {
    let (oura, app) = oura_and(Mode::ApiOnly, 3600).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    connect(&app, &user, "oura-access-1").await;
    let base = app.settings.vendor_variables.as_ref().and_then(|v| v.get("OURA_API_URL").cloned());
    let worker = || {
        let mut cmd = app.binary(&["worker"]);
        cmd.env("OURA_CLIENT_ID", "oura-app")
            .env("OURA_CLIENT_SECRET", "oura-secret")
            .env("OURA_API_URL", base.clone().unwrap_or_default());
        cmd.spawn().expect("spawn a worker")
    };
    oura.hang.store(true, Ordering::SeqCst);
    let path = format!("/api/v1/providers/oura/users/{user}/sync");
    let task = app.post(&path, &key, json!({})).await.str("task_id");
    let mut first = worker();
    for _ in 0..300 {
        if oura.sleep_calls.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(oura.sleep_calls.load(Ordering::SeqCst) > 0, "the pull never started");
    first.kill().await.expect("kill the worker");
    oura.hang.store(false, Ordering::SeqCst);
    let mut second = worker();
    let (status, _) = pull_done(&app, &task).await;
    let _ = second.kill().await;
    assert_eq!(status, "done");
    let per_user = |table: &str| format!("select count(*) from {table} where user_id = '{user}'");
    assert_eq!(app.count(&per_user("samples")).await, 10);
    assert_eq!(app.count(&per_user("sleep_sessions")).await, 1);
    assert_eq!(app.count(&per_user("sync_runs")).await, 1);
    assert!(oura.sleep_calls.load(Ordering::SeqCst) >= 2, "read again by the second worker");
}

/// Oura's webhooks: the subscription handshake echoes the challenge for our token only; a
/// notification signed with the client secret queues a pull of the user's data around it, one
/// with a wrong signature is 401 and stores nothing.
#[tokio::test]
async fn oura_webhooks_verify_their_signature_and_queue_a_pull() {
    use hmac::Mac;
    let (_oura, app) = oura_and_app(3600).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    connect_to(&app, &user, "oura", "oura-access-1", Some("oura-user-7")).await;
    let hook = "/api/v1/providers/oura/webhooks";

    let r = app
        .get(
            &format!("{hook}?verification_token=verify-me&challenge=c-123"),
            &crate::util::Auth::None,
        )
        .await;
    assert_eq!((r.status, r.body.clone()), (200, json!({"challenge": "c-123"})));
    let r = app
        .get(&format!("{hook}?verification_token=guess&challenge=c-123"), &crate::util::Auth::None)
        .await;
    assert_eq!(r.status, 401);

    let send = |body: Value, secret: &'static str| {
        let body = body.to_string();
        let timestamp = chrono::Utc::now().timestamp().to_string();
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("key");
        mac.update(timestamp.as_bytes());
        mac.update(body.as_bytes());
        let signature = hex::encode_upper(mac.finalize().into_bytes());
        let request = app
            .http
            .post(app.url(hook))
            .header("x-oura-signature", signature)
            .header("x-oura-timestamp", &timestamp)
            .header("content-type", "application/json")
            .body(body);
        async move { request.send().await.expect("notify") }
    };
    let event = json!({"event_type": "create", "data_type": "sleep", "object_id": "night-1",
        "event_time": "2026-03-10T07:30:00+00:00", "user_id": "oura-user-7"});
    let r = send(event.clone(), "not-the-secret").await;
    assert_eq!(r.status(), 401);
    assert_eq!(app.count("select count(*) from vendor_pulls").await, 0, "nothing stored");

    let r = send(event, "oura-secret").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.expect("json"), json!({"received": true}));
    let task: uuid::Uuid =
        app.db().await.query_one("select id from vendor_pulls", &[]).await.expect("pull").get(0);
    assert_eq!(pull_done(&app, &task.to_string()).await.0, "done");
    let sessions = format!("select count(*) from sleep_sessions where user_id = '{user}'");
    assert_eq!(app.count(&sessions).await, 1);

    // A user Oura knows and we do not: acknowledged in the same words (the answer tells no one
    // who is connected here), nothing queued.
    let stranger = json!({"event_type": "update", "data_type": "workout", "object_id": "x",
        "event_time": "2026-03-10T07:30:00+00:00", "user_id": "someone-else"});
    let r = send(stranger, "oura-secret").await;
    assert_eq!(r.json::<Value>().await.expect("json"), json!({"received": true}));
    assert_eq!(app.count("select count(*) from vendor_pulls").await, 1);
}

/// WHOOP's API: `records` pages of at most 25 with `next_token`, the client asked with
/// `nextToken`.
async fn whoop(
    Path(path): Path<String>,
    Query(q): Query<std::collections::HashMap<String, String>>,
    headers: HeaderMap,
) -> axum::response::Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer whoop-access") {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let page = |records: Value, next: Option<&str>| {
        let mut body = json!({ "records": records });
        if let Some(n) = next {
            body["next_token"] = json!(n);
        }
        axum::Json(body).into_response()
    };
    match (path.as_str(), q.get("nextToken").map(String::as_str)) {
        ("v2/activity/sleep", None) => page(
            json!([{"id": "s-1", "start": "2026-03-09T23:00:00.000Z", "end": "2026-03-10T07:00:00.000Z",
                "timezone_offset": "+01:00", "nap": false, "score_state": "SCORED",
                "score": {"stage_summary": {"total_light_sleep_time_milli": 14400000,
                    "total_slow_wave_sleep_time_milli": 5400000, "total_rem_sleep_time_milli": 5400000},
                    "respiratory_rate": 15.5}}]),
            Some("more"),
        ),
        ("v2/activity/sleep", Some("more")) => page(
            json!([{"id": "s-0", "start": "2026-03-09T13:00:00.000Z", "end": "2026-03-09T13:40:00.000Z",
                "timezone_offset": "+01:00", "nap": true, "score_state": "SCORED",
                "score": {"stage_summary": {"total_light_sleep_time_milli": 2400000}}}]),
            None,
        ),
        ("v2/activity/workout", None) => page(
            json!([{"id": "w-1", "start": "2026-03-10T17:00:00.000Z", "end": "2026-03-10T17:45:00.000Z",
                "timezone_offset": "+01:00", "sport_name": "cycling", "score_state": "SCORED",
                "score": {"kilojoule": 2092.0, "average_heart_rate": 140, "max_heart_rate": 171, "distance_meter": 20000.0}}]),
            None,
        ),
        ("v2/cycle", None) => page(
            json!([{"id": 7, "start": "2026-03-09T23:00:00.000Z", "end": "2026-03-10T23:00:00.000Z",
                "timezone_offset": "+01:00", "score_state": "SCORED", "score": {"kilojoule": 10460.0}}]),
            None,
        ),
        ("v2/recovery", None) => page(
            json!([{"cycle_id": 7, "sleep_id": "s-1", "created_at": "2026-03-10T07:05:00.000Z",
                "score_state": "SCORED", "score": {"recovery_score": 71.0, "resting_heart_rate": 52.0,
                "hrv_rmssd_milli": 64.5, "spo2_percentage": 96.0, "skin_temp_celsius": 33.9}}]),
            None,
        ),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

#[tokio::test]
async fn a_whoop_pull_stores_nights_workouts_cycles_and_recoveries_in_their_units() {
    let api = axum::Router::new().route("/developer/{*path}", axum::routing::get(whoop));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}/developer", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, api).await });
    let app = app_with(&[
        ("WHOOP_CLIENT_ID", "whoop-app".into()),
        ("WHOOP_CLIENT_SECRET", "whoop-secret".into()),
        ("WHOOP_API_URL", base),
    ])
    .await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    connect_to(&app, &user, "whoop", "whoop-access", Some("10129")).await;

    let q = "summary_start_time=2026-03-09T00:00:00Z&summary_end_time=2026-03-11T00:00:00Z";
    let r =
        app.post(&format!("/api/v1/providers/whoop/users/{user}/sync?{q}"), &key, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(pull_done(&app, &r.str("task_id")).await.0, "done");

    let series = |slug: &str| {
        format!(
            "select coalesce(sum(s.value), 0)::float8 from samples s join series_types t on t.id = s.series_type_id
             where s.user_id = '{user}' and t.slug = '{slug}'"
        )
    };
    let value = |sql: String| {
        let app = &app;
        async move { app.db().await.query_one(&sql, &[]).await.expect("value").get::<_, f64>(0) }
    };
    // 10,460 kJ / 4.184 = 2,500 kcal for the day.
    assert_eq!(value(series("total_energy")).await, 2500.0);
    assert_eq!(value(series("recovery_score")).await, 71.0);
    assert_eq!(value(series("heart_rate_variability_rmssd")).await, 64.5);
    assert_eq!(value(series("skin_temperature")).await, 33.9);
    // Both pages of nights: the night and the nap.
    let nights = format!("select count(*) from sleep_sessions where user_id = '{user}'");
    assert_eq!(app.count(&nights).await, 2);
    let asleep = format!(
        "select sleep_seconds::int8 from sleep_sessions where user_id = '{user}' and not is_nap"
    );
    // 4 h light + 1.5 h deep + 1.5 h REM.
    assert_eq!(app.count(&asleep).await, 7 * 3600);
    let kcal = format!("select round(calories_kcal)::int8 from workouts where user_id = '{user}'");
    // 2,092 kJ = 500 kcal.
    assert_eq!(app.count(&kcal).await, 500);

    // After a mapping fix, `wearhouse reprocess` derives it all again from the kept pages,
    // without asking WHOOP: here the data lost is restored, once.
    let per_user = |table: &str| format!("select count(*) from {table} where user_id = '{user}'");
    let (samples, workouts) =
        (app.count(&per_user("samples")).await, app.count(&per_user("workouts")).await);
    app.db()
        .await
        .batch_execute(&format!("delete from samples where user_id = '{user}'; delete from workouts where user_id = '{user}'"))
        .await
        .expect("lose the data");
    let out = app.binary(&["reprocess", "--user", &user]).output().await.expect("reprocess");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(app.count(&per_user("samples")).await, samples);
    assert_eq!(app.count(&per_user("workouts")).await, workouts);
    assert_eq!(value(series("total_energy")).await, 2500.0);
    let rolled = format!(
        "select coalesce(sum(sample_count + total_count), 0)::int8 from daily_rollups where user_id = '{user}'"
    );
    assert_eq!(app.count(&rolled).await, samples);
}

/// Issue 30: a 429 costs what the vendor asked. The pull waits for its `Retry-After` (3 s) and
/// resumes then, woken from its row's time, not by the sweeper (here once a minute).
#[tokio::test]
async fn a_rate_limited_pull_resumes_when_the_vendor_said() {
    let asked = Arc::new(std::sync::Mutex::new(Vec::<std::time::Instant>::new()));
    let log = asked.clone();
    let api = axum::Router::new().route(
        "/v2/usercollection/{name}",
        axum::routing::get(move |Path(name): Path<String>| {
            let log = log.clone();
            async move {
                if name == "daily_activity" {
                    let first = log.lock().map(|mut l| {
                        l.push(std::time::Instant::now());
                        l.len() == 1
                    });
                    if first.unwrap_or(false) {
                        return (StatusCode::TOO_MANY_REQUESTS, [("retry-after", "3")], "wait")
                            .into_response();
                    }
                }
                axum::Json(json!({"data": [], "next_token": null})).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, api).await });
    let app = TestApp::spawn_with(Mode::All, |s| {
        let vars = [
            ("OURA_CLIENT_ID", "oura-app".to_string()),
            ("OURA_CLIENT_SECRET", "oura-secret".to_string()),
            ("OURA_API_URL", base.clone()),
        ];
        s.vendor_variables = Some(vars.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
        s.worker_sweep_interval_seconds = 60;
    })
    .await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    connect(&app, &user, "oura-access-1").await;
    let r = app.post(&format!("/api/v1/providers/oura/users/{user}/sync"), &key, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(pull_done(&app, &r.str("task_id")).await, ("done".to_string(), 0));
    let times = asked.lock().map(|l| l.clone()).unwrap_or_default();
    assert_eq!(times.len(), 2, "asked again once");
    let waited = times[1] - times[0];
    assert!(
        waited >= Duration::from_secs(3) && waited < Duration::from_secs(5),
        "resumed {waited:?} after a 429 that asked for 3 s"
    );
}
