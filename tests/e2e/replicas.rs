//! Read replicas (`DATABASE_REPLICA_URLS`): the read routes answer from a streaming replica the
//! test starts (`pg_basebackup -R`) exactly as the primary would; a replica further behind than
//! `REPLICA_MAX_LAG` is skipped, and so is a stopped one, without a failed request; a read right
//! after a write finds what was written.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ingest::payloads::{Platform, Spec, payload};
use serde_json::{Value, json};

use crate::own_postgres::OwnPostgres;
use crate::util::{Auth, Mode, TestApp};

const MAX_LAG: Duration = Duration::from_millis(400);

/// Every read route of a user, and the developer overview.
pub(crate) fn read_paths(user: &str) -> Vec<String> {
    // The batches' days (from 2026-03-14).
    let window = "start_time=2026-03-01&end_time=2026-04-01";
    let days = "start_date=2026-03-01&end_date=2026-04-01";
    let mut paths = vec![
        format!("/api/v1/users/{user}/timeseries?{window}&limit=100"),
        format!("/api/v1/users/{user}/timeseries?{window}&resolution=1hour&limit=100"),
        format!("/api/v1/users/{user}/events/workouts?{days}"),
        format!("/api/v1/users/{user}/events/sleep?{days}"),
        format!("/api/v1/users/{user}/events/menstrual-cycles?{days}"),
        format!("/api/v1/users/{user}/health-scores?{days}"),
        "/api/v1/developer/overview".to_string(),
    ];
    for kind in ["activity", "sleep", "recovery", "body", "data"] {
        paths.push(format!("/api/v1/users/{user}/summaries/{kind}?{days}"));
    }
    paths
}

pub(crate) fn batch(day: i64) -> String {
    let mut s = Spec::new(Platform::Ios, 200);
    s.start += chrono::Duration::days(day);
    payload(&s).to_string()
}

/// The answers of `app` to every read route, by path (the overview's storage figures aside).
pub(crate) async fn answers(
    app: &TestApp,
    auth: &Auth,
    user: &str,
    admin: &Auth,
) -> Vec<(String, Value)> {
    let mut all = Vec::new();
    for path in read_paths(user) {
        let who = if path.contains("/developer/") { admin } else { auth };
        let r = app.get(&path, who).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        let mut body = r.body;
        // Sizes on disk differ between a primary and its replica, and are measured per call.
        if let Some(o) = body.as_object_mut() {
            o.remove("storage");
        }
        all.push((path, body));
    }
    all
}

pub(crate) fn same(got: Vec<(String, Value)>, expected: &[(String, Value)], when: &str) {
    assert_eq!(got.len(), expected.len());
    for ((path, body), (_, want)) in got.iter().zip(expected) {
        assert_eq!(body, want, "{when}: {path}");
    }
}

/// `wearhouse_reads_total` by database, from the app's /metrics (this process's counters).
async fn reads_from(app: &TestApp, database: &str) -> u64 {
    let text =
        reqwest::get(app.url("/metrics")).await.expect("metrics").text().await.expect("text");
    let needle = format!("wearhouse_reads_total{{database=\"{database}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&needle))
        .map_or(0, |n| n.trim().parse::<f64>().expect("a number") as u64)
}

/// Waits until the replica has replayed everything the primary has committed now.
async fn caught_up(primary: &OwnPostgres, replica: &OwnPostgres) {
    let p = crate::util::connect(&primary.url("wearhouse")).await;
    let r = crate::util::connect(&replica.url("wearhouse")).await;
    let lsn: String =
        p.query_one("select pg_current_wal_lsn()::text", &[]).await.expect("lsn").get(0);
    for _ in 0..500 {
        let done: bool = r
            .query_one("select pg_last_wal_replay_lsn() >= $1::text::pg_lsn", &[&lsn])
            .await
            .expect("replay lsn")
            .get(0);
        if done {
            // And the app's probe has seen it.
            tokio::time::sleep(MAX_LAG).await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the replica did not catch up");
}

#[tokio::test]
async fn reads_answer_from_a_replica_as_from_the_primary_and_skip_one_behind_or_stopped() {
    let primary = OwnPostgres::start().await;
    let replica = primary.replica().await;
    let (primary_url, replica_url) = (primary.url("wearhouse"), replica.url("wearhouse"));
    let app = TestApp::spawn_with(Mode::All, |s| {
        s.database_url = primary_url.clone();
        s.database_replica_urls = vec![replica_url];
        s.replica_max_lag = MAX_LAG;
    })
    .await;
    // The same database without replicas: the answers to compare with.
    let reference = TestApp::spawn_with(Mode::ApiOnly, |s| s.database_url = primary_url).await;
    let key = app.api_key().await;
    let admin = app.admin().await;
    let user = app.user(&key, json!({})).await;
    // A read right after the user is created finds them (the replica may not have them yet).
    let fresh = app
        .get(
            &format!("/api/v1/users/{user}/timeseries?start_time=2020-01-01&end_time=2030-01-01"),
            &key,
        )
        .await;
    assert_eq!(fresh.status, 200, "{}", fresh.body);
    let token = app.post(&format!("/api/v1/users/{user}/token"), &key, json!({})).await;
    let sdk = Auth::Bearer(token.str("access_token"));
    for day in 0..3 {
        app.sync_and_wait(&user, &sdk, &batch(day)).await;
    }
    caught_up(&primary, &replica).await;

    // Within the lag: the replica answers, and its answers are the primary's.
    let before = reads_from(&app, "replica").await;
    let expected = answers(&reference, &key, &user, &admin).await;
    same(answers(&app, &key, &user, &admin).await, &expected, "on the replica");
    let served = reads_from(&app, "replica").await - before;
    assert!(
        served as usize >= read_paths(&user).len(),
        "the replica answered {served} of {} reads",
        read_paths(&user).len()
    );

    // Behind: replay paused while more data arrives; past the lag the primary answers, with the
    // new data.
    replica.execute("postgres", "select pg_wal_replay_pause()").await;
    app.sync_and_wait(&user, &sdk, &batch(5)).await;
    tokio::time::sleep(MAX_LAG * 3).await;
    let before = reads_from(&app, "replica").await;
    let expected = answers(&reference, &key, &user, &admin).await;
    same(answers(&app, &key, &user, &admin).await, &expected, "a replica behind is skipped");
    assert_eq!(reads_from(&app, "replica").await, before, "nothing was read from the replica");

    // Caught up again: asked again.
    replica.execute("postgres", "select pg_wal_replay_resume()").await;
    caught_up(&primary, &replica).await;
    let before = reads_from(&app, "replica").await;
    same(answers(&app, &key, &user, &admin).await, &expected, "caught up");
    assert!(reads_from(&app, "replica").await > before, "the replica is asked again");

    // Stopped: no request fails, before or after the probe notices.
    replica.kill().await;
    for _ in 0..3 {
        same(answers(&app, &key, &user, &admin).await, &expected, "a stopped replica");
    }
}

/// A receiver that, on each webhook, reads the user's workouts through `app` at once, as an
/// integrator does; what each read found.
async fn reading_receiver(
    base: String,
    key: Auth,
    user: String,
) -> (String, Arc<Mutex<Vec<usize>>>) {
    let found: Arc<Mutex<Vec<usize>>> = Arc::default();
    let seen = found.clone();
    let http = reqwest::Client::new();
    let handler = move || {
        let (seen, http, key) = (seen.clone(), http.clone(), key.clone());
        let url = format!(
            "{base}/api/v1/users/{user}/events/workouts?start_date=2026-03-01&end_date=2026-04-01"
        );
        async move {
            let r = key.apply(http.get(url)).send().await.expect("read");
            let body: Value = r.json().await.expect("json");
            let n = body["data"].as_array().map_or(0, Vec::len);
            seen.lock().expect("lock").push(n);
            axum::http::StatusCode::NO_CONTENT
        }
    };
    let router = axum::Router::new().route("/in", axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/in", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, found)
}

#[tokio::test]
async fn a_read_prompted_by_a_webhook_finds_what_it_announced_though_a_replica_lags() {
    let primary = OwnPostgres::start().await;
    let replica = primary.replica().await;
    let (primary_url, replica_url) = (primary.url("wearhouse"), replica.url("wearhouse"));
    let app = TestApp::spawn_with(Mode::All, |s| {
        s.database_url = primary_url;
        s.database_replica_urls = vec![replica_url];
        s.replica_max_lag = MAX_LAG;
    })
    .await;
    let (key, admin) = (app.api_key().await, app.admin().await);
    let user = app.user(&key, json!({})).await;
    let (url, found) = reading_receiver(app.url(""), key.clone(), user.clone()).await;
    let r = app
        .post(
            "/api/v1/webhooks/endpoints",
            &admin,
            json!({"url": url, "filter_types": ["workout.created"]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    caught_up(&primary, &replica).await;
    // The replica stops replaying: what the webhook announces is not there, and the replica
    // still looks current to the API until its lag grows past the limit.
    replica.execute("postgres", "select pg_wal_replay_pause()").await;
    let workout = crate::fixtures::workout(
        "W-1",
        "running",
        "2026-03-10T18:00:00Z",
        "2026-03-10T18:30:00Z",
        300.0,
        5000.0,
        "+02:00",
        &crate::fixtures::watch(),
    );
    app.sync_and_wait(&user, &key, &crate::fixtures::body(vec![], vec![workout], vec![])).await;
    for _ in 0..100 {
        if !found.lock().expect("lock").is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(*found.lock().expect("lock"), vec![1], "the read found the announced workout");
}
