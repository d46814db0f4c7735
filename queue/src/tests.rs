//! The queue against the real Redis (`TEST_REDIS_URL`, default `redis://127.0.0.1:6379`), each
//! test on streams of its own.

use std::time::Duration;

use redis::AsyncCommands;
use serde::{Deserialize, Serialize};

use super::*;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Job {
    Batch { id: u32 },
    Import { key: String },
}

async fn queue(max_len: usize) -> Queue<Job> {
    let url = std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let client = redis::Client::open(url).expect("redis url");
    let conn = ConnectionManager::new(client.clone()).await.expect("redis");
    let spec = QueueSpec {
        stream: format!("queue_test_{}", uuid::Uuid::new_v4().simple()),
        group: "g".into(),
        max_len,
    };
    let q = Queue::new(client, conn, spec);
    q.ensure_group().await.expect("group");
    q
}

async fn drop_stream(q: &Queue<Job>) {
    let mut conn = q.conn.clone();
    let _: () = conn.del(&q.spec.stream).await.expect("del");
}

fn tasks(entries: &[Entry<Job>]) -> Vec<Job> {
    entries
        .iter()
        .filter_map(|e| match &e.task {
            Task::Task(t) => Some(t.clone()),
            Task::Unreadable => None,
        })
        .collect()
}

#[tokio::test]
async fn tasks_round_trip_and_an_acknowledged_entry_leaves_the_stream() {
    let q = queue(1000).await;
    let sent = vec![Job::Batch { id: 7 }, Job::Import { key: "u/raw/x.zip".into() }];
    q.publish(&sent).await.expect("publish");
    assert_eq!(q.len().await.expect("len"), 2);
    let mut reader = q.reader().await.expect("reader");
    let got = q.read(&mut reader, "c1", 10, Duration::from_millis(100)).await.expect("read");
    assert_eq!(tasks(&got), sent);
    // Nothing new for anyone until acknowledged or claimed.
    assert!(
        q.read(&mut reader, "c2", 10, Duration::from_millis(10)).await.expect("read").is_empty()
    );
    for e in &got {
        q.ack(&e.id).await.expect("ack");
    }
    assert_eq!(q.len().await.expect("len"), 0, "acknowledged entries are deleted");
    drop_stream(&q).await;
}

#[tokio::test]
async fn the_stream_stays_bounded_without_consumers() {
    let q = queue(500).await;
    for chunk in 0..10 {
        let batch: Vec<Job> = (0..500).map(|i| Job::Batch { id: chunk * 500 + i }).collect();
        q.publish(&batch).await.expect("publish");
    }
    let len = q.len().await.expect("len");
    // MAXLEN ~ trims whole nodes (100 entries each by default): never far above the bound.
    assert!((500..=600).contains(&len), "5,000 published, {len} kept");
    drop_stream(&q).await;
}

#[tokio::test]
async fn an_entry_left_pending_is_claimed_by_another_consumer() {
    let q = queue(1000).await;
    q.publish(&[Job::Batch { id: 1 }]).await.expect("publish");
    let mut reader = q.reader().await.expect("reader");
    let first = q.read(&mut reader, "dies", 10, Duration::from_millis(100)).await.expect("read");
    assert_eq!(first.len(), 1);
    // Not idle long enough yet.
    assert!(q.claim("takes-over", Duration::from_secs(60), 10).await.expect("claim").is_empty());
    tokio::time::sleep(Duration::from_millis(60)).await;
    let claimed = q.claim("takes-over", Duration::from_millis(50), 10).await.expect("claim");
    assert_eq!(claimed, first);
    q.ack(&claimed[0].id).await.expect("ack");
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert!(q.claim("again", Duration::from_millis(50), 10).await.expect("claim").is_empty());
    drop_stream(&q).await;
}

#[tokio::test]
async fn a_lost_stream_is_recreated_and_unreadable_entries_are_handed_out_as_such() {
    let q = queue(1000).await;
    drop_stream(&q).await;
    let mut reader = q.reader().await.expect("reader");
    // NOGROUP: recreated, nothing read this time.
    assert!(
        q.read(&mut reader, "c", 10, Duration::from_millis(10)).await.expect("read").is_empty()
    );
    assert!(q.claim("c", Duration::ZERO, 10).await.expect("claim").is_empty());
    let mut conn = q.conn.clone();
    let _: String = conn.xadd(&q.spec.stream, "*", &[("batch", "old-format")]).await.expect("xadd");
    let _: String =
        conn.xadd(&q.spec.stream, "*", &[(FIELD, "{\"kind\":\"nope\"}")]).await.expect("xadd");
    q.publish(&[Job::Batch { id: 3 }]).await.expect("publish");
    let got = q.read(&mut reader, "c", 10, Duration::from_millis(100)).await.expect("read");
    let kinds: Vec<_> = got.iter().map(|e| e.task.clone()).collect();
    assert_eq!(kinds, vec![Task::Unreadable, Task::Unreadable, Task::Task(Job::Batch { id: 3 })]);
    drop_stream(&q).await;
}
