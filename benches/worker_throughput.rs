//! End-to-end worker throughput: stored SDK batches → parse, normalise, COPY, dedup upsert into
//! the hypertable, daily rollups, sessions, outbox events → committed. Measures samples stored
//! per second until the queue is empty.
//!
//! Needs the local stack (`scripts/stack.sh`). Creates (and drops) the database
//! `wearhouse_bench`. Run:
//!
//!     cargo bench --bench worker_throughput -- [--samples 10000000] [--records 10000]
//!         [--users 100] [--concurrency 2] [--resend]
//!
//! `--resend` processes every batch a second time (all duplicates) and reports that too.

use std::time::{Duration, Instant};

use ingest::jobs::JobQueue;
use ingest::payloads::{Platform, Spec, payload};
use ingest::worker::WorkerConfig;
use schema::ids::BatchId;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

struct Args {
    samples: usize,
    records: usize,
    users: usize,
    concurrency: usize,
    resend: bool,
}

fn args() -> Args {
    let mut a =
        Args { samples: 10_000_000, records: 10_000, users: 100, concurrency: 2, resend: false };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut num = || it.next().and_then(|v| v.parse().ok()).unwrap_or(0);
        match flag.as_str() {
            "--samples" => a.samples = num(),
            "--records" => a.records = num(),
            "--users" => a.users = num(),
            "--concurrency" => a.concurrency = num(),
            "--resend" => a.resend = true,
            _ => {} // cargo bench passes --bench
        }
    }
    a
}

fn admin_url() -> String {
    std::env::var("BENCH_ADMIN_URL")
        .unwrap_or_else(|_| "postgres://postgres:postgres@127.0.0.1:5432/postgres".to_string())
}

async fn admin(sql: &str) {
    let (client, conn) =
        tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(conn);
    client.batch_execute(sql).await.expect(sql);
}

async fn drain(db: &schema::Db, queue: &JobQueue, ids: &[BatchId], concurrency: usize) -> Duration {
    let shutdown = CancellationToken::new();
    let config = WorkerConfig { concurrency, outbox: true, ..Default::default() };
    let worker =
        tokio::spawn(ingest::worker::run(db.clone(), queue.clone(), config, shutdown.clone()));
    let started = Instant::now();
    for chunk in ids.chunks(500) {
        queue.announce(chunk).await.expect("announce");
    }
    loop {
        let (depth, _) = schema::sdk_batches::backlog(db).await.expect("backlog");
        if depth == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let elapsed = started.elapsed();
    shutdown.cancel();
    let _ = worker.await;
    elapsed
}

#[tokio::main]
async fn main() {
    let a = args();
    let batches = a.samples.div_ceil(a.records);
    admin("drop database if exists wearhouse_bench with (force)").await;
    admin("create database wearhouse_bench").await;
    let base = admin_url();
    let url = format!("{}/wearhouse_bench", base.rsplit_once('/').map(|(b, _)| b).unwrap_or(&base));
    schema::db::migrate(&url).await.expect("migrate");
    let db = schema::Db::connect(&url, 16).await.expect("pool");
    let client = redis::Client::open("redis://127.0.0.1:6379").expect("redis url");
    let conn = redis::aio::ConnectionManager::new(client.clone()).await.expect("redis");
    let prefix = format!("wearhouse_bench_{}", Uuid::new_v4().simple());
    let queue = JobQueue::new(client, conn, &prefix);

    let mut users = Vec::new();
    for _ in 0..a.users {
        users.push(schema::users::insert(&db, &Default::default()).await.expect("user").id);
    }
    eprintln!("storing {batches} batches of {} records for {} users…", a.records, a.users);
    let platforms = [Platform::Ios, Platform::HealthConnect, Platform::Samsung];
    let mut ids = Vec::with_capacity(batches);
    let mut raw_bytes = 0usize;
    let mut expected = 0usize;
    for b in 0..batches {
        let user = users[b % users.len()];
        let round = (b / users.len()) as i64;
        let mut spec = Spec::new(platforms[b % 3], a.records);
        spec.start += chrono::Duration::seconds(round * a.records as i64 * 61);
        spec.seed = b as u64 + 1;
        let body = payload(&spec).to_string();
        raw_bytes += body.len();
        expected += a.records;
        let compressed = zstd::bulk::compress(body.as_bytes(), 1).expect("zstd");
        let size = body.len() as i32;
        let inserted = schema::sdk_batches::insert(&db, user, "bench", &compressed, size, i64::MAX)
            .await
            .expect("insert");
        let schema::sdk_batches::Inserted::Batch(id) = inserted else { panic!("{inserted:?}") };
        ids.push(id);
    }
    // The provider column is informative; processing reads the envelope.
    let c = db.client().await.expect("client");
    c.execute("update sdk_batches set provider = 'phonehealth'", &[]).await.expect("update");

    eprintln!("processing ({} MB of JSON)…", raw_bytes / 1_000_000);
    let elapsed = drain(&db, &queue, &ids, a.concurrency).await;
    let stored: i64 = c.query_one("select count(*) from samples", &[]).await.expect("count").get(0);
    let failed: i64 = c
        .query_one("select count(*) from sdk_batches where status <> 'done'", &[])
        .await
        .expect("count")
        .get(0);
    for row in c
        .query("select error, count(*) from sdk_batches where error is not null group by 1", &[])
        .await
        .expect("errors")
    {
        eprintln!("errors: {} × {}", row.get::<_, i64>(1), row.get::<_, String>(0));
    }
    let secs = elapsed.as_secs_f64();
    println!(
        "first pass: {batches} batches, {stored} samples stored (≥ {expected} records) in {secs:.1} s: \
         {:.0} samples/s, {:.1} MB/s of JSON; batches not done: {failed}",
        stored as f64 / secs,
        raw_bytes as f64 / 1e6 / secs
    );
    if a.resend {
        c.execute("update sdk_batches set status = 'queued'", &[]).await.expect("requeue");
        let elapsed = drain(&db, &queue, &ids, a.concurrency).await;
        let after: i64 =
            c.query_one("select count(*) from samples", &[]).await.expect("count").get(0);
        let secs = elapsed.as_secs_f64();
        println!(
            "resend (all duplicates): {} samples checked in {secs:.1} s: {:.0} samples/s; samples now {after}",
            stored,
            stored as f64 / secs
        );
    }
    drop(c);
    drop(db);
    admin("drop database if exists wearhouse_bench with (force)").await;
}
