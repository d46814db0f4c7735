//! The job machinery under failure: several workers, a worker killed mid-batch, Redis losing
//! its keys; metrics, the live status stream, and reprocessing.

use std::time::Duration;

use futures::StreamExt;
use ingest::payloads::{Platform, Spec, payload};
use redis::AsyncCommands;
use serde_json::json;

use crate::util::{Mode, TestApp};

fn spec(records: usize, day: i64) -> Spec {
    let mut s = Spec::new(Platform::Ios, records);
    s.sleep = false;
    s.workout = false;
    s.start += chrono::Duration::days(day);
    s
}

async fn wait_all(app: &TestApp, ids: &[String]) {
    for id in ids {
        assert_eq!(app.wait_batch(id).await, "done", "batch {id}");
    }
}

#[tokio::test]
async fn two_workers_process_each_batch_once() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |_| {}).await;
    let key = app.api_key().await;
    let mut workers: Vec<_> =
        (0..2).map(|_| app.binary(&["worker"]).spawn().expect("spawn a worker")).collect();
    let mut ids = Vec::new();
    for day in 0..24 {
        let user = app.user(&key, json!({})).await;
        let r = app.sync(&user, &key, &payload(&spec(40, day)).to_string()).await;
        assert_eq!(r.status, 202, "{}", r.body);
        ids.push(r.str("task_id"));
    }
    wait_all(&app, &ids).await;
    // Each batch was committed once: one successful attempt, its samples stored once.
    assert_eq!(app.count("select count(*) from sdk_batches where attempts <> 1").await, 0);
    assert_eq!(app.count("select count(*) from samples").await, 24 * 40);
    assert_eq!(app.count("select sum(sample_count)::bigint from daily_rollups").await, 24 * 40);
    // Both workers joined the group.
    let mut redis = app.redis().await;
    let consumers: Vec<redis::Value> = redis::cmd("XINFO")
        .arg("CONSUMERS")
        .arg(format!("{}:jobs", app.settings.redis_key_prefix))
        .arg("workers")
        .query_async(&mut redis)
        .await
        .expect("xinfo");
    assert!(consumers.len() >= 4, "two workers, each with consumer loops: {}", consumers.len());
    let pending: (i64,) = redis::cmd("XPENDING")
        .arg(format!("{}:jobs", app.settings.redis_key_prefix))
        .arg("workers")
        .query_async::<(i64, redis::Value, redis::Value, redis::Value)>(&mut redis)
        .await
        .map(|r| (r.0,))
        .expect("xpending");
    assert_eq!(pending.0, 0, "every job acknowledged");
    for w in &mut workers {
        let _ = w.kill().await;
    }
}

#[tokio::test]
async fn a_worker_killed_mid_batch_loses_nothing_and_stores_nothing_twice() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |s| s.sdk_max_body_bytes = 64 << 20).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let records = 60_000;
    let stream = format!("{}:jobs", app.settings.redis_key_prefix);
    let mut redis = app.redis().await;

    let mut first = app.binary(&["worker"]).spawn().expect("spawn a worker");
    let r = app.sync(&user, &key, &payload(&spec(records, 0)).to_string()).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let batch = r.str("task_id");
    // Wait until the worker has taken the job, then kill it without warning.
    let mut taken = false;
    for _ in 0..400 {
        let pending: redis::RedisResult<(i64, redis::Value, redis::Value, redis::Value)> =
            redis::cmd("XPENDING").arg(&stream).arg("workers").query_async(&mut redis).await;
        if pending.is_ok_and(|p| p.0 > 0) {
            taken = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(taken, "the worker never took the job");
    tokio::time::sleep(Duration::from_millis(150)).await;
    first.start_kill().expect("kill");
    let _ = first.wait().await;
    let status: String = app
        .db()
        .await
        .query_one("select status::text from sdk_batches where id = $1::text::uuid", &[&batch])
        .await
        .expect("status")
        .get(0);
    assert_eq!(status, "queued", "killed before its commit");

    // Another worker takes the abandoned job over once it has been idle long enough.
    let mut second = app.binary(&["worker"]).spawn().expect("spawn a worker");
    assert_eq!(app.wait_batch(&batch).await, "done");
    let user_samples =
        app.count(&format!("select count(*) from samples where user_id = '{user}'")).await;
    assert_eq!(user_samples, records as i64, "every sample exactly once");
    let rolled = app
        .count(&format!(
            "select sum(sample_count)::bigint from daily_rollups where user_id = '{user}'"
        ))
        .await;
    assert_eq!(rolled, records as i64);
    let _ = second.kill().await;
}

#[tokio::test]
async fn batches_survive_redis_losing_its_keys() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |_| {}).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let mut ids = Vec::new();
    for day in 0..5 {
        let r = app.sync(&user, &key, &payload(&spec(10, day)).to_string()).await;
        assert_eq!(r.status, 202);
        ids.push(r.str("task_id"));
    }
    // Redis forgets everything of ours (as after a restart: it keeps nothing on disk).
    let mut redis = app.redis().await;
    let keys: Vec<String> =
        redis.keys(format!("{}:*", app.settings.redis_key_prefix)).await.expect("keys");
    assert!(!keys.is_empty());
    let _: () = redis.del(keys).await.expect("del");

    let mut worker = app.binary(&["worker"]).spawn().expect("spawn a worker");
    wait_all(&app, &ids).await;
    assert_eq!(
        app.count(&format!("select count(*) from samples where user_id = '{user}'")).await,
        50
    );
    let _ = worker.kill().await;
}

#[tokio::test]
async fn metrics_report_the_pipeline() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let body = r#"{"provider":"apple","data":{"records":[
        {"type":"HKQuantityTypeIdentifierHeartRate","startDate":"2026-03-14T18:46:45Z","value":70,"unit":"bpm"},
        {"type":"HKCategoryTypeIdentifierMindfulSession","startDate":"2026-03-14T18:46:45Z","value":0,"unit":null}]}}"#;
    app.sync_and_wait(&user, &key, body).await;
    let text = app
        .http
        .get(app.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    for line in [
        "wearhouse_batches_accepted_total 1",
        "wearhouse_samples_stored_total 1",
        "wearhouse_items_dropped_total{reason=\"record.unknown_type\"} 1",
        "wearhouse_queue_depth 0",
        "wearhouse_queue_oldest_age_seconds 0",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} missing in:\n{text}");
    }
    // Only a type not kept was dropped: skipped, so the batch succeeded.
    assert!(text.contains("wearhouse_batches_processed_total{status=\"success\"} 1"), "{text}");
    // Every checkout of a database connection is timed.
    let waits = text.lines().find_map(|l| l.strip_prefix("wearhouse_db_pool_wait_seconds_count "));
    assert!(waits.and_then(|n| n.parse::<u64>().ok()).is_some_and(|n| n > 0), "{text}");

    // Anyone may scrape: fifty scrapes at once cost one refresh of the queue gauges.
    let scrapes = (0..50).map(|_| async {
        app.http.get(app.url("/metrics")).send().await.expect("metrics").text().await
    });
    let texts = futures::future::join_all(scrapes).await;
    let last = texts.last().and_then(|t| t.as_ref().ok()).cloned().unwrap_or_default();
    assert!(
        last.lines().any(|l| l == "wearhouse_metrics_gauge_refreshes_total 1"),
        "one refresh in:\n{last}"
    );
}

pub async fn read_until(
    body: &mut (impl futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin),
    seen: &mut String,
    needle: &str,
) {
    tokio::time::timeout(Duration::from_secs(20), async {
        while !seen.contains(needle) {
            let chunk = body.next().await.expect("stream open").expect("chunk");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await
    .expect("event in time");
}

#[tokio::test]
async fn the_status_stream_reports_each_run() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    // An earlier run is replayed first.
    let earlier = app.sync_and_wait(&user, &key, &payload(&spec(5, 0)).to_string()).await;
    let resp = key
        .apply(app.http.get(app.url(&format!("/api/v1/users/{user}/sync/stream"))))
        .send()
        .await
        .expect("stream");
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut body = Box::pin(resp.bytes_stream());
    let mut seen = String::new();
    read_until(&mut body, &mut seen, &format!("\"run_id\":\"{earlier}\"")).await;
    let r = app.sync(&user, &key, &payload(&spec(5, 1)).to_string()).await;
    let task = r.str("task_id");
    read_until(&mut body, &mut seen, &format!("\"run_id\":\"{task}\"")).await;
    let event = seen.split("\n\n").find(|e| e.contains(&task)).unwrap_or_default().to_string();
    assert!(event.contains("event: sync.status"), "{event}");
    assert!(event.contains("\"status\":\"success\""), "{event}");
}

/// Samples stored, their value sum, the rollups' value sum.
async fn snapshot(app: &TestApp, user: &str) -> (i64, f64, f64) {
    let sql = format!(
        "select count(*), sum(value)::float8, (select sum(value_sum)::float8 from daily_rollups where user_id = '{user}')
         from samples where user_id = '{user}'"
    );
    let row = app.db().await.query_one(&sql, &[]).await.expect("snapshot");
    (row.get(0), row.get(1), row.get(2))
}

#[tokio::test]
async fn reprocess_re_derives_data_from_stored_batches() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let body = payload(&Spec::new(Platform::Ios, 200)).to_string();
    app.sync_and_wait(&user, &key, &body).await;
    let good = snapshot(&app, &user).await;
    // Data produced by "old rules": wrong values, a lost workout, stale rollups.
    let db = app.db().await;
    db.batch_execute(&format!(
        "update samples set value = value / 100 where user_id = '{user}' and series_type_id = 20;
         delete from workouts where user_id = '{user}';
         update daily_rollups set value_sum = 0 where user_id = '{user}';"
    ))
    .await
    .expect("tamper");
    assert_ne!(snapshot(&app, &user).await, good);

    let out = app.binary(&["reprocess", "--user", &user]).output().await.expect("run reprocess");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let after = snapshot(&app, &user).await;
    assert_eq!(after.0, good.0);
    assert!(
        (after.1 - good.1).abs() < 1e-6 && (after.2 - good.2).abs() < 1e-6,
        "{after:?} vs {good:?}"
    );
    assert_eq!(
        app.count(&format!("select count(*) from workouts where user_id = '{user}'")).await,
        1
    );
    assert_eq!(
        app.count(&format!("select count(*) from sleep_sessions where user_id = '{user}'")).await,
        2
    );
    // --since after the batch touches nothing; a bad user is refused.
    let out = app
        .binary(&["reprocess", "--user", &user, "--since", "2999-01-01"])
        .output()
        .await
        .expect("run");
    assert!(out.status.success());
    let out = app
        .binary(&["reprocess", "--user", &uuid::Uuid::new_v4().to_string()])
        .output()
        .await
        .expect("run");
    assert!(!out.status.success());
}

#[tokio::test]
async fn batches_and_runs_past_retention_are_deleted() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let old = app.sync_and_wait(&user, &key, &payload(&spec(5, 0)).to_string()).await;
    let recent = app.sync_and_wait(&user, &key, &payload(&spec(5, 1)).to_string()).await;
    let db = app.db().await;
    db.execute(
        "update sdk_batches set received_at = now() - interval '31 days' where id = $1::text::uuid",
        &[&old],
    )
    .await
    .expect("age the batch");
    db.execute(
        "update sync_runs set updated_at = now() - interval '31 days' where id = $1::text::uuid",
        &[&old],
    )
    .await
    .expect("age its run");
    // The sweeper (every second in tests) deletes it and its run (one statement after the
    // other); its data stays.
    let runs = |id: &str| format!("select count(*) from sync_runs where id = '{id}'");
    let mut gone = false;
    for _ in 0..100 {
        let batch = format!("select count(*) from sdk_batches where id = '{old}'");
        if app.count(&batch).await == 0 && app.count(&runs(&old)).await == 0 {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "the expired batch or its run was not deleted");
    assert_eq!(
        app.count(&format!("select count(*) from sdk_batches where id = '{recent}'")).await,
        1
    );
    assert_eq!(app.count(&runs(&recent)).await, 1);
    assert_eq!(
        app.count(&format!("select count(*) from samples where user_id = '{user}'")).await,
        10
    );
}

/// Status streams share one Redis subscription per process: however many are open, no Redis
/// channel has a subscriber of its own, and each stream gets its own user's events only.
#[tokio::test]
async fn status_streams_share_one_redis_subscription() {
    let app = TestApp::spawn().await;
    let key = app.api_key().await;
    let mut streams = Vec::new();
    let mut users = Vec::new();
    for _ in 0..3 {
        let user = app.user(&key, json!({})).await;
        let url = app.url(&format!("/api/v1/users/{user}/sync/stream?replay=0"));
        let resp = key.apply(app.http.get(url)).send().await.expect("stream");
        assert_eq!(resp.status(), 200);
        streams.push(Box::pin(resp.bytes_stream()));
        users.push(user);
    }
    let pattern = format!("{}:sync:*", app.settings.redis_key_prefix);
    let channels: Vec<String> = redis::cmd("PUBSUB")
        .arg("CHANNELS")
        .arg(&pattern)
        .query_async(&mut app.redis().await)
        .await
        .expect("pubsub channels");
    assert!(channels.is_empty(), "a subscription per stream: {channels:?}");

    let r = app.sync(&users[1], &key, &payload(&spec(5, 0)).to_string()).await;
    let task = r.str("task_id");
    let mut seen = String::new();
    read_until(&mut streams[1], &mut seen, &format!("\"run_id\":\"{task}\"")).await;
    // The others hear nothing of it (only the opening comment, then heartbeats).
    let mut other = String::new();
    let quiet = tokio::time::timeout(Duration::from_millis(500), async {
        while let Some(Ok(chunk)) = streams[0].next().await {
            other.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    assert!(quiet.is_err() && !other.contains(&task), "{other}");
}

/// Status streams are bounded in number: past `SYNC_STREAM_MAX_SUBSCRIBERS` the answer is 503 with `Retry-After`, and a closed stream
/// frees its place.
#[tokio::test]
async fn status_streams_are_bounded_in_number() {
    let app = TestApp::spawn_with(Mode::ApiOnly, |s| s.sync_stream_max_subscribers = 1).await;
    let key = app.api_key().await;
    let user = app.user(&key, json!({})).await;
    let url = app.url(&format!("/api/v1/users/{user}/sync/stream"));
    let first = key.apply(app.http.get(url.clone())).send().await.expect("stream");
    assert_eq!(first.status(), 200);
    let second = key.apply(app.http.get(url.clone())).send().await.expect("stream");
    assert_eq!(second.status(), 503);
    assert_eq!(second.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("5"));
    drop(first);
    // The server lets go at its next write at the latest (the heartbeat, every 15 s).
    let mut status = 0;
    for _ in 0..200 {
        let r = key.apply(app.http.get(url.clone())).send().await.expect("stream");
        status = r.status().as_u16();
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "the closed stream's place is free again");
}
