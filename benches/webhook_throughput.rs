//! Webhook delivery throughput: pending deliveries → the sender (Redis stream, consumer group,
//! signing, HTTP POST, attempt recorded, acknowledged) → a local receiver answering 204.
//! Then one 100,000-sample timeseries batch from the outbox to its delivered chunk events.
//!
//! Needs the local stack (`scripts/stack.sh`). Creates (and drops) `wearhouse_webhook_bench`.
//!
//!     cargo bench --bench webhook_throughput -- [--messages 20000] [--concurrency 256]
//!         [--samples 100000]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use webhooks::sender::SenderConfig;

struct Args {
    messages: i64,
    concurrency: usize,
    samples: i64,
}

fn args() -> Args {
    let mut a = Args { messages: 20_000, concurrency: 256, samples: 100_000 };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut num = || it.next().and_then(|v| v.parse::<i64>().ok()).unwrap_or(0);
        match flag.as_str() {
            "--messages" => a.messages = num(),
            "--concurrency" => a.concurrency = num() as usize,
            "--samples" => a.samples = num(),
            _ => {} // cargo bench passes --bench
        }
    }
    a
}

const PG: &str = "postgres://postgres:postgres@127.0.0.1:5432";
const DB: &str = "wearhouse_webhook_bench";

async fn sql(url: &str, q: &str) {
    let (client, conn) =
        tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(conn);
    client.batch_execute(q).await.expect(q);
}

async fn count(url: &str, q: &str) -> i64 {
    let (client, conn) =
        tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(conn);
    client.query_one(q, &[]).await.expect(q).get(0)
}

/// Waits until `q` counts `want`; returns the time it took.
async fn until(url: &str, q: &str, want: i64, started: Instant) -> Duration {
    loop {
        if count(url, q).await >= want {
            return started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::main]
async fn main() {
    let a = args();
    let admin = format!("{PG}/postgres");
    sql(&admin, &format!("drop database if exists {DB} with (force)")).await;
    sql(&admin, &format!("create database {DB}")).await;
    let url = format!("{PG}/{DB}");
    schema::db::migrate(&url).await.expect("migrate");
    let db = schema::Db::connect(&url, 16).await.expect("pool");

    // The receiver: 204 to everything, counting.
    let received = Arc::new(AtomicUsize::new(0));
    let seen = received.clone();
    let app = axum::Router::new().route(
        "/in",
        axum::routing::post(move |_body: axum::body::Bytes| {
            let seen = seen.clone();
            async move {
                seen.fetch_add(1, Ordering::Relaxed);
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let target = format!("http://{}/in", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });

    let secret = webhooks::sign::new_secret();
    sql(
        &url,
        &format!(
            "insert into users (id) values ('00000000-0000-4000-8000-000000000001');
             insert into webhook_endpoints (id, url, secret) values ('ep_bench', '{target}', '{secret}');
             insert into webhook_messages (id, event_type, event_id, user_id, payload)
             select 'msg_' || n, 'workout.created', 'bench:' || n, '00000000-0000-4000-8000-000000000001',
                    jsonb_build_object('type', 'workout.created', 'data', jsonb_build_object(
                        'id', gen_random_uuid(), 'user_id', '00000000-0000-4000-8000-000000000001',
                        'type', 'running', 'start_time', '2026-03-10T18:00:00+01:00',
                        'end_time', '2026-03-10T18:45:00+01:00', 'zone_offset', '+01:00',
                        'duration_seconds', 2700, 'calories_kcal', 512.5, 'distance_meters', 8200))
             from generate_series(1, {m}) n;",
            m = a.messages
        ),
    )
    .await;

    // Stored in clear above, sealed here as a first start seals a legacy secret.
    let keys = Arc::new(schema::sealed::MasterKeys::new(&"42".repeat(32), None).expect("key"));
    schema::reseal::reseal_all(&db, &keys).await.expect("seal the endpoint secret");
    let redis = redis::Client::open("redis://127.0.0.1:6379").expect("redis");
    let prefix = format!("wearhouse_webhook_bench_{}", std::process::id());
    let config = SenderConfig {
        concurrency: a.concurrency,
        tick: Duration::from_millis(20),
        allow_private: true,
        ..SenderConfig::default()
    };
    let shutdown = CancellationToken::new();
    let sender = tokio::spawn({
        let (db, shutdown) = (db.clone(), shutdown.clone());
        async move { webhooks::sender::run(db, redis, &prefix, config, keys, shutdown).await }
    });

    let started = Instant::now();
    sql(
        &url,
        "insert into webhook_deliveries (message_id, endpoint_id, status, next_attempt_at)
         select id, 'ep_bench', 1, now() from webhook_messages",
    )
    .await;
    let took = until(
        &url,
        "select count(*) from webhook_deliveries where status = 0",
        a.messages,
        started,
    )
    .await;
    let secs = took.as_secs_f64();
    println!(
        "{} deliveries (signed, attempt recorded, acknowledged) in {secs:.2} s: {:.0} deliveries/s; receiver got {}",
        a.messages,
        a.messages as f64 / secs,
        received.load(Ordering::Relaxed)
    );

    // One timeseries batch of `samples` heart-rate samples, from the outbox.
    let before = received.load(Ordering::Relaxed);
    sql(
        &url,
        &format!(
            "insert into connections (id, user_id, provider) values
                 ('00000000-0000-4000-8000-0000000000c1', '00000000-0000-4000-8000-000000000001', 'phonehealth');
             insert into data_sources (id, user_id, provider, user_connection_id, device_model, source, device_type)
             values ('00000000-0000-4000-8000-0000000000d1', '00000000-0000-4000-8000-000000000001', 'phonehealth',
                     '00000000-0000-4000-8000-0000000000c1', 'Watch7,1', 'com.apple.health', 'watch');
             insert into samples (user_id, series_type_id, data_source_id, ts, value, zone_offset, batch_id)
             select '00000000-0000-4000-8000-000000000001', 1, '00000000-0000-4000-8000-0000000000d1',
                    timestamptz '2026-03-01' + n * interval '5 seconds', 60 + n % 50, 60,
                    '00000000-0000-4000-8000-0000000000b1'
             from generate_series(0, {last}) n;",
            last = a.samples - 1
        ),
    )
    .await;
    let started = Instant::now();
    sql(
        &url,
        &format!(
            "insert into outbox (event_type, user_id, payload) values ('heart_rate.created',
                 '00000000-0000-4000-8000-000000000001', jsonb_build_object(
                 'kind', 'timeseries', 'user_id', '00000000-0000-4000-8000-000000000001',
                 'provider', 'phonehealth', 'series_type', 'heart_rate',
                 'batch_id', '00000000-0000-4000-8000-0000000000b1', 'sample_count', {n},
                 'start_time', timestamptz '2026-03-01', 'end_time', timestamptz '2026-03-01' + ({n} - 1) * interval '5 seconds'))",
            n = a.samples
        ),
    )
    .await;
    let chunks = (a.samples + 2499) / 2500;
    let took = until(
        &url,
        "select count(*) from webhook_deliveries d join webhook_messages m on m.id = d.message_id
         where m.event_type = 'heart_rate.created' and d.status = 0",
        chunks,
        started,
    )
    .await;
    let messages = count(
        &url,
        "select count(*) from webhook_messages where event_type = 'heart_rate.created'",
    )
    .await;
    let bytes = count(
        &url,
        "select max(octet_length(payload::text))::bigint from webhook_messages where event_type = 'heart_rate.created'",
    )
    .await;
    println!(
        "a {}-sample batch: {messages} chunk events (largest body {bytes} bytes), delivered in {:.2} s; receiver got {}",
        a.samples,
        took.as_secs_f64(),
        received.load(Ordering::Relaxed) - before
    );
    shutdown.cancel();
    let _ = sender.await;
}
