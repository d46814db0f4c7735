//! Faults of the real parts while batches are accepted and processed: PostgreSQL restarted,
//! Redis restarted, Redis flushed. Each test runs its own PostgreSQL or Redis server (so the
//! shared ones stay up for the tests beside it). A phone keeps sending as the SDKs do (a 5xx is
//! sent again later); the accept path answers 202 only for what it stored and 5xx otherwise,
//! never a 4xx the iOS SDK would drop data on; it recovers by itself; and in the end every
//! accepted sample is stored exactly once, and counted once in the daily rollups.

use std::process::Stdio;
use std::time::Duration;

use ingest::payloads::{Platform, Spec, payload};
use serde_json::json;
use tokio::process::Command;

use crate::own_postgres::{OwnPostgres, free_port};
use crate::util::{Auth, Mode, TestApp};

/// A Redis server of the test's own (it keeps nothing on disk, like the machines' Redis).
struct OwnRedis {
    port: u16,
    child: Option<tokio::process::Child>,
}

impl OwnRedis {
    async fn start() -> OwnRedis {
        let mut r = OwnRedis { port: free_port(), child: None };
        r.spawn().await;
        r
    }

    async fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("redis-server did not start");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Killed and started again, empty.
    async fn restart(&mut self, down: Duration) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
        tokio::time::sleep(down).await;
        self.spawn().await;
    }

    async fn flush(&self) {
        let client = redis::Client::open(self.url()).expect("url");
        let mut conn = client.get_multiplexed_async_connection().await.expect("connect");
        let () = redis::cmd("FLUSHALL").query_async(&mut conn).await.expect("flushall");
    }
}

fn batch(day: i64) -> String {
    let mut s = Spec::new(Platform::Ios, 300);
    s.sleep = false;
    s.workout = false;
    s.start += chrono::Duration::days(day);
    payload(&s).to_string()
}

/// Sends batches `1..=n` one after another as a phone would (a 5xx is sent again a little
/// later); returns the task id of each accepted batch and the statuses of the refusals. Any
/// answer but 202 or 5xx fails.
async fn send_all(app: &TestApp, user: &str, auth: &Auth, n: i64) -> (Vec<String>, Vec<u16>) {
    let mut tasks = Vec::new();
    let mut refused = Vec::new();
    for day in 1..=n {
        let body = batch(day);
        let mut tries = 0;
        loop {
            let r = app.sync(user, auth, &body).await;
            if r.status == 202 {
                tasks.push(r.str("task_id"));
                break;
            }
            assert!(r.status >= 500, "batch {day}: {} {}", r.status, r.body);
            refused.push(r.status);
            tries += 1;
            assert!(tries < 300, "batch {day} still refused: {} {}", r.status, r.body);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    (tasks, refused)
}

/// Everything accepted is stored once: each accepted batch processed, `n + 1` batches' worth
/// of samples (the first sent before the fault), and the rollups counting each sample once.
async fn assert_stored_once(app: &TestApp, user: &str, tasks: &[String], per_batch: i64, n: i64) {
    for task in tasks {
        let id: uuid::Uuid = task.parse().expect("task id");
        let mut status = String::new();
        for _ in 0..1200 {
            let row = app
                .db()
                .await
                .query_opt("select status::text from sdk_batches where id = $1", &[&id])
                .await
                .expect("batch status");
            match row.map(|r| r.get::<_, String>(0)) {
                Some(s) if s != "queued" => {
                    status = s;
                    break;
                }
                Some(_) => {}
                None => panic!("batch {task} was answered 202 but is not stored"),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(status, "done", "batch {task}");
    }
    let samples =
        app.count(&format!("select count(*) from samples where user_id = '{user}'")).await;
    assert_eq!(samples, per_batch * (n + 1), "every accepted sample, once");
    let rolled = app
        .count(&format!(
            "select coalesce(sum(sample_count + total_count), 0)::int8 from daily_rollups
             where user_id = '{user}'"
        ))
        .await;
    assert_eq!(rolled, samples, "the rollups count each sample once");
}

/// A user, an SDK token for them (what phones send with), and one batch sent and processed
/// before any fault; returns the samples one batch holds.
async fn phone(app: &TestApp) -> (String, Auth, i64) {
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let token = app.post(&format!("/api/v1/users/{user}/token"), &key, json!({})).await;
    let sdk = Auth::Bearer(token.str("access_token"));
    app.sync_and_wait(&user, &sdk, &batch(0)).await;
    let per_batch =
        app.count(&format!("select count(*) from samples where user_id = '{user}'")).await;
    assert!(per_batch > 0);
    (user, sdk, per_batch)
}

#[tokio::test]
async fn postgres_restarted_while_batches_flow_loses_and_doubles_nothing() {
    let pg = OwnPostgres::start().await;
    let url = pg.url("wearhouse");
    let app = TestApp::spawn_with(Mode::All, |s| s.database_url = url).await;
    let (user, sdk, per_batch) = phone(&app).await;
    let n = 24;
    let fault = async {
        for _ in 0..2 {
            tokio::time::sleep(Duration::from_millis(400)).await;
            pg.restart().await;
        }
    };
    let ((tasks, refused), ()) = tokio::join!(send_all(&app, &user, &sdk, n), fault);
    assert!(!refused.is_empty(), "the restarts fell outside the sending");
    // A cut connection is a 503 (retry later), not a 500.
    assert!(refused.iter().all(|s| *s == 503), "{refused:?}");
    assert_stored_once(&app, &user, &tasks, per_batch, n).await;
    // And the service answers as before, by itself.
    app.sync_and_wait(&user, &sdk, &batch(0)).await;
}

#[tokio::test]
async fn redis_restarted_or_flushed_while_batches_flow_loses_and_doubles_nothing() {
    let mut redis = OwnRedis::start().await;
    let redis_url = redis.url();
    let app = TestApp::spawn_with(Mode::All, |s| s.redis_url = redis_url).await;
    let (user, sdk, per_batch) = phone(&app).await;
    let n = 24;
    let fault = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        redis.restart(Duration::from_millis(500)).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        redis.flush().await;
    };
    let ((tasks, _), ()) = tokio::join!(send_all(&app, &user, &sdk, n), fault);
    assert_stored_once(&app, &user, &tasks, per_batch, n).await;
    app.sync_and_wait(&user, &sdk, &batch(0)).await;
}
