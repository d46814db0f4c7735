//! Several processes on one database and Redis, as a deployment runs them: two `serve` and two
//! `worker` processes of the real binary. A fleet of phones (through both APIs) and an export
//! import at once; one worker killed midway. Every batch is stored once, the import ends, no
//! job is left behind, and each webhook message reaches the receiver (once, but for one that
//! may have been on the wire when its sender was killed: delivery is at least once).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use reqwest::multipart::{Form, Part};
use serde_json::json;

use crate::own_postgres::free_port;
use crate::replicas::batch;
use crate::util::{Auth, Mode, Resp, TestApp};

const USERS: usize = 6;
const BATCHES: i64 = 4;

/// A `wearhouse serve` process on a port of its own; its base URL once it answers.
async fn serve(app: &TestApp) -> (tokio::process::Child, String) {
    let port = free_port();
    let child = app
        .binary(&["serve"])
        .env("BIND", format!("127.0.0.1:{port}"))
        .spawn()
        .expect("spawn serve");
    let base = format!("http://127.0.0.1:{port}");
    for _ in 0..600 {
        if reqwest::get(format!("{base}/health")).await.is_ok_and(|r| r.status().is_success()) {
            return (child, base);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("serve on {port} did not come up");
}

async fn call(http: &reqwest::Client, base: &str, path: String, auth: &Auth, body: String) -> Resp {
    let req = auth
        .apply(http.post(format!("{base}{path}")))
        .header("content-type", "application/json")
        .body(body);
    Resp::read(req.send().await.expect("request")).await
}

/// Webhook messages received, by `webhook-id`: how many times each.
type Received = Arc<Mutex<HashMap<String, usize>>>;

async fn receiver() -> (String, Received) {
    let received: Received = Arc::default();
    let seen = received.clone();
    let app = axum::Router::new().route(
        "/in",
        axum::routing::post(move |headers: HeaderMap| {
            let seen = seen.clone();
            async move {
                let id = headers.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or("");
                if let Ok(mut s) = seen.lock() {
                    *s.entry(id.to_string()).or_default() += 1;
                }
                StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/in", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, received)
}

#[tokio::test]
async fn two_apis_and_two_workers_store_each_batch_once_with_one_worker_killed() {
    // The in-process API only creates the database and what the test needs; the traffic goes
    // to the binaries.
    let app = TestApp::spawn_with(Mode::ApiOnly, |s| s.database_pool_size = 2).await;
    let (admin, key) = (app.admin().await, app.api_key().await);
    let (url, received) = receiver().await;
    let r = app.post("/api/v1/webhooks/endpoints", &admin, json!({"url": url})).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let endpoint = r.str("id");

    let (_api_a, a) = serve(&app).await;
    let (_api_b, b) = serve(&app).await;
    let mut doomed = app.binary(&["worker"]).spawn().expect("spawn worker 1");
    let _survivor = app.binary(&["worker"]).spawn().expect("spawn worker 2");

    let mut users = Vec::new();
    for _ in 0..USERS {
        let user = app.user(&key, json!({})).await;
        let token = app.post(&format!("/api/v1/users/{user}/token"), &key, json!({})).await;
        users.push((user, Auth::Bearer(token.str("access_token"))));
    }
    let importer = app.user(&key, json!({})).await;
    let http = reqwest::Client::new();

    // The import, through API b.
    let export = crate::import::zipped(&crate::import::export(20));
    let form = Form::new().part("file", Part::bytes(export).file_name("export.zip"));
    let path = format!("{b}/api/v1/users/{importer}/import/phonehealth/xml/direct");
    let r =
        Resp::read(key.apply(http.post(path)).multipart(form).send().await.expect("upload")).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let import = r.str("task_id");

    // The fleet: each phone sends its batches, alternating between the two APIs; worker 1 is
    // killed once a third of them are in.
    let mut accepted = Vec::new();
    for day in 0..BATCHES {
        let sends = users.iter().enumerate().map(|(i, (user, auth))| {
            let base = if i % 2 == 0 { &a } else { &b };
            let path = format!("/api/v1/sdk/users/{user}/sync");
            call(&http, base, path, auth, batch(day))
        });
        for r in futures::future::join_all(sends).await {
            assert_eq!(r.status, 202, "{}", r.body);
            accepted.push(r.str("task_id"));
        }
        if day == 1 {
            doomed.start_kill().expect("kill worker 1");
        }
    }
    let _ = doomed.wait().await;

    // Every accepted batch processed, and the import done, by the worker left.
    for task in &accepted {
        assert_eq!(app.wait_batch(task).await, "done", "batch {task}");
    }
    let (status, run) = crate::import::wait_import(&app, &key, &importer, &import).await;
    assert_eq!(status, "done", "{run}");

    // Stored once: each phone's samples are its batches' samples, and the same for all phones.
    let mut counts = Vec::new();
    for (user, _) in &users {
        counts.push(
            app.count(&format!("select count(*) from samples where user_id = '{user}'")).await,
        );
    }
    assert!(counts.iter().all(|c| *c == counts[0] && *c > 0), "{counts:?}");
    let reference = app.user(&key, json!({})).await;
    for day in 0..BATCHES {
        app.sync_and_wait(&reference, &key, &batch(day)).await;
    }
    let alone =
        app.count(&format!("select count(*) from samples where user_id = '{reference}'")).await;
    assert_eq!(counts[0], alone, "a phone's batches stored as when sent alone");
    let doubled = app
        .count(&format!(
            "select count(*) from (select 1 from samples where user_id = '{importer}'
             group by series_type_id, data_source_id, ts having count(*) > 1) d"
        ))
        .await;
    assert_eq!(doubled, 0, "no sample of the import stored twice");
    let left = app
        .count("select count(*) from sdk_batches where status::text not in ('done', 'failed')")
        .await;
    assert_eq!(left, 0, "no batch left behind");

    // Each message to the endpoint reached the receiver: once every event is dispatched and
    // no delivery is pending, what arrived is what was sent.
    crate::webhook_dispatch::wait_dispatched(&app).await;
    let sql = format!("select message_id from webhook_deliveries where endpoint_id = '{endpoint}'");
    let pending = format!(
        "select count(*) from webhook_deliveries where endpoint_id = '{endpoint}' and status <> 0"
    );
    let (mut sent, mut got) = (Vec::new(), HashMap::new());
    for _ in 0..300 {
        let rows = app.db().await.query(&sql, &[]).await.expect("deliveries");
        sent = rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>();
        got = received.lock().map(|r| r.clone()).unwrap_or_default();
        if app.count(&pending).await == 0 && !sent.is_empty() && got.len() == sent.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!sent.is_empty(), "messages were made");
    let mut twice = 0;
    for id in &sent {
        let times = got.get(id).copied().unwrap_or(0);
        assert!(times >= 1, "message {id} never arrived");
        twice += usize::from(times > 1);
    }
    assert!(twice <= 1, "{twice} messages arrived more than once");
    assert_eq!(got.len(), sent.len(), "nothing arrived that was not sent");
}
