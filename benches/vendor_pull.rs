//! Vendor pull throughput: one Oura pull of `--records` heart-rate rows in pages of `--page`
//! from a local server answering as Oura's API, through the pull path (HTTP, mapping into the
//! normalised batch, the SDK path's storage in one transaction, pages kept zstd). Also times
//! the same pull again (everything read, nothing new stored) and the mapping alone.
//!
//! Needs the local stack (`scripts/stack.sh`). Creates (and drops) `wearhouse_pull_bench`.
//!
//!     cargo bench --bench vendor_pull -- [--records 200000] [--page 10000]

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Path, Query};
use ingest::worker::PullHandler;
use serde_json::{Value, json};

const PG: &str = "postgres://postgres:postgres@127.0.0.1:5432";
const DB: &str = "wearhouse_pull_bench";

fn args() -> (usize, usize) {
    let (mut records, mut page) = (200_000, 10_000);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut num = || it.next().and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
        match flag.as_str() {
            "--records" => records = num(),
            "--page" => page = num().max(1),
            _ => {} // cargo bench passes --bench
        }
    }
    (records, page)
}

/// Heart-rate pages: rows a minute apart from 2026-01-01, `page` a page.
fn heartrate_page(records: usize, page: usize, n: usize) -> Value {
    let start = n * page;
    let rows: Vec<Value> = (start..(start + page).min(records))
        .map(|i| {
            let t = chrono::DateTime::from_timestamp(1_767_225_600 + i as i64 * 60, 0)
                .unwrap_or_default();
            json!({"bpm": 50 + (i % 60), "source": "awake", "timestamp": t.to_rfc3339()})
        })
        .collect();
    let next = (start + page < records).then(|| (n + 1).to_string());
    json!({"data": rows, "next_token": next})
}

#[tokio::main]
async fn main() {
    let (records, page) = args();
    let admin = format!("{PG}/postgres");
    let (client, conn) =
        tokio_postgres::connect(&admin, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(conn);
    client
        .batch_execute(&format!("drop database if exists {DB} with (force)"))
        .await
        .expect("drop");
    client.batch_execute(&format!("create database {DB}")).await.expect("create");
    let url = format!("{PG}/{DB}");
    schema::db::migrate(&url).await.expect("migrate");
    let db = schema::Db::connect(&url, 8).await.expect("pool");

    let pages: Arc<Vec<Value>> =
        Arc::new((0..records.div_ceil(page)).map(|n| heartrate_page(records, page, n)).collect());
    let served = pages.clone();
    let api = axum::Router::new().route(
        "/v2/usercollection/{name}",
        axum::routing::get(
            move |Path(name): Path<String>,
                  Query(q): Query<std::collections::HashMap<String, String>>| {
                let pages = served.clone();
                async move {
                    if name != "heartrate" {
                        return axum::Json(json!({"data": [], "next_token": null}));
                    }
                    let n = q.get("next_token").and_then(|t| t.parse::<usize>().ok()).unwrap_or(0);
                    axum::Json(
                        pages
                            .get(n)
                            .cloned()
                            .unwrap_or_else(|| json!({"data": [], "next_token": null})),
                    )
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, api).await });

    let user = schema::ids::UserId(uuid::Uuid::now_v7());
    let c = db.client().await.expect("client");
    c.execute("insert into users (id) values ($1)", &[&user]).await.expect("user");
    drop(c);
    let keys = Arc::new(schema::sealed::MasterKeys::new(&"42".repeat(32), None).expect("key"));
    let grant = schema::connections::Grant {
        access_token: "bench-token",
        refresh_token: None,
        expires_at: None,
        scope: None,
        provider_user_id: None,
    };
    schema::connections::connect(&db, &keys, user, "oura", &grant, false).await.expect("connect");
    let vars = [("OURA_CLIENT_ID", "bench"), ("OURA_CLIENT_SECRET", "bench")];
    let vendors = vendors::VendorConfig::read(|k| match k {
        "OURA_API_URL" => Some(base.clone()),
        _ => vars.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_string()),
    });
    let redis = redis::Client::open("redis://127.0.0.1:6379").expect("redis");
    let conn = redis::aio::ConnectionManager::new(redis.clone()).await.expect("redis");
    let queue = ingest::jobs::JobQueue::new(
        redis,
        conn,
        &format!("wearhouse_pull_bench_{}", std::process::id()),
    );
    let puller = vendors::pulls::Puller {
        db: db.clone(),
        keys,
        http: vendors::oauth::http_client().expect("http"),
        vendors,
        public_url: "http://127.0.0.1:8000".into(),
        queue: queue.clone(),
        outbox: false,
        sweep_grace: std::time::Duration::from_secs(60),
        every: std::time::Duration::from_secs(3600),
    };
    let window = (chrono::Utc::now() - chrono::Duration::days(1), chrono::Utc::now());

    for (label, expect_new) in [("first pull", true), ("same window again", false)] {
        let kind = schema::vendor_pulls::PullKind::Fetch;
        let id = vendors::pulls::enqueue(&db, &queue, user, "oura", window, kind)
            .await
            .expect("enqueue");
        let started = Instant::now();
        assert!(puller.run(id).await, "the pull settled");
        let took = started.elapsed();
        let c = db.client().await.expect("client");
        let stored: i64 =
            c.query_one("select count(*) from samples", &[]).await.expect("count").get(0);
        let status: String = c
            .query_one("select status::text from vendor_pulls where id = $1", &[&id])
            .await
            .expect("pull")
            .get(0);
        assert_eq!(status, "done");
        assert_eq!(stored as usize, records, "{label}: every record stored once");
        println!(
            "{label}: {records} records in {:.2} s = {:.0} records/s{}",
            took.as_secs_f64(),
            records as f64 / took.as_secs_f64(),
            if expect_new { "" } else { " (nothing new stored)" }
        );
    }

    // The mapping alone, for the diagnosis.
    let started = Instant::now();
    let mut n = ingest::Normalised { provider: "oura", ..ingest::Normalised::default() };
    for p in pages.iter() {
        vendors::oura::map::page(vendors::oura::map::Collection::HeartRate, p, &mut n);
    }
    let took = started.elapsed();
    println!(
        "mapping alone: {} records in {:.3} s = {:.0} records/s",
        n.samples.len(),
        took.as_secs_f64(),
        n.samples.len() as f64 / took.as_secs_f64()
    );
    drop(db);
    let (client, conn) =
        tokio_postgres::connect(&admin, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(conn);
    let _ = client.batch_execute(&format!("drop database if exists {DB} with (force)")).await;
}
