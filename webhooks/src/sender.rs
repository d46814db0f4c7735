//! The sender, run by the worker: turns the outbox into messages, announces due deliveries on
//! a Redis stream, and delivers what the stream hands it (consumer group `senders`), each
//! delivery on its own task so a slow or dead endpoint delays no other. An entry is
//! acknowledged only after its attempt is recorded: a sender killed mid-delivery leaves it
//! pending, and another sender claims it after `claim_idle`. PostgreSQL holds the state, so a
//! lost stream only delays deliveries until the sweep finds them.

use std::sync::Arc;
use std::time::Duration;

use redis::AsyncCommands;
use redis::aio::{ConnectionManager, MultiplexedConnection};
use redis::streams::{
    StreamAutoClaimOptions, StreamAutoClaimReply, StreamId, StreamReadOptions, StreamReadReply,
};
use schema::Db;
use schema::webhook_deliveries::{self as deliveries, SENDING};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::schedule::Schedule;

const GROUP: &str = "senders";

#[derive(Debug, Clone)]
pub struct SenderConfig {
    pub schedule: Schedule,
    pub timeout: Duration,
    /// An endpoint failing this long is disabled.
    pub disable_after: Duration,
    /// Deliveries in flight at once.
    pub concurrency: usize,
    /// How often the outbox and due retries are looked at.
    pub tick: Duration,
    /// An unacknowledged entry idle this long is taken over by another sender.
    pub claim_idle: Duration,
    /// Whether targets at private, loopback or link-local addresses may be reached.
    pub allow_private: bool,
    /// Extra root certificates (PEM) trusted for receivers, e.g. an internal CA.
    pub extra_roots_pem: Option<Vec<u8>>,
}

impl Default for SenderConfig {
    fn default() -> SenderConfig {
        SenderConfig {
            schedule: Schedule::default(),
            timeout: Duration::from_secs(15),
            disable_after: Duration::from_secs(5 * 24 * 3600),
            concurrency: 256,
            tick: Duration::from_millis(200),
            claim_idle: Duration::from_secs(60),
            allow_private: false,
            extra_roots_pem: None,
        }
    }
}

struct Shared {
    db: Db,
    conn: ConnectionManager,
    stream: String,
    http: reqwest::Client,
    config: SenderConfig,
}

/// Runs until `shutdown`.
pub async fn run(
    db: Db,
    redis: redis::Client,
    prefix: &str,
    config: SenderConfig,
    shutdown: CancellationToken,
) {
    let conn = match ConnectionManager::new(redis.clone()).await {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "webhook sender: no Redis connection; not started");
            return;
        }
    };
    // Redirects are not followed: a 3xx is a failure, and a receiver cannot bounce a signed
    // message to an address the URL rules would refuse.
    let resolver = crate::guard::GuardedResolver { allow_private: config.allow_private };
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(resolver));
    if let Some(pem) = &config.extra_roots_pem {
        match reqwest::Certificate::from_pem_bundle(pem) {
            Ok(roots) => {
                for root in roots {
                    builder = builder.add_root_certificate(root);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "webhook sender: unreadable WEBHOOK_CA_FILE; ignored")
            }
        }
    }
    let http = match builder.build() {
        Ok(h) => h,
        Err(e) => {
            tracing::error!(error = %e, "webhook sender: no HTTP client; not started");
            return;
        }
    };
    let shared = Arc::new(Shared { db, conn, stream: format!("{prefix}:webhooks"), http, config });
    ensure_group(&shared).await;
    let consumer = format!("sender-{}", uuid::Uuid::new_v4().simple());
    let announcer = tokio::spawn(announce_loop(shared.clone(), shutdown.clone()));
    deliver_loop(shared, redis, consumer, shutdown).await;
    let _ = announcer.await;
}

async fn ensure_group(s: &Shared) {
    let mut conn = s.conn.clone();
    let r: redis::RedisResult<()> = conn.xgroup_create_mkstream(&s.stream, GROUP, "0").await;
    if let Err(e) = r
        && e.code() != Some("BUSYGROUP")
    {
        tracing::warn!(error = %e, "webhook sender: could not create the consumer group");
    }
}

/// Outbox → messages, due deliveries → stream, stuck deliveries → pending.
async fn announce_loop(s: Arc<Shared>, shutdown: CancellationToken) {
    let stale = (s.config.timeout + s.config.claim_idle).as_secs_f64() * 2.0;
    // Stuck deliveries are rare and only become stale after `stale` seconds: no need to look
    // for them on every tick.
    let mut last_sweep = tokio::time::Instant::now();
    while !shutdown.is_cancelled() {
        if let Err(e) = crate::dispatch::dispatch_once(&s.db, 500).await {
            tracing::warn!(error = %e, "webhook dispatch failed; retrying");
        }
        match deliveries::claim_due(&s.db, 1000).await {
            Ok(due) if !due.is_empty() => {
                let mut pipe = redis::pipe();
                for (m, e) in &due {
                    pipe.xadd(&s.stream, "*", &[("m", m.as_str()), ("e", e.as_str())]).ignore();
                }
                let mut conn = s.conn.clone();
                if let Err(e) = pipe.query_async::<()>(&mut conn).await {
                    // The sweep below makes them pending again.
                    tracing::warn!(error = %e, count = due.len(), "could not announce deliveries");
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "could not claim due deliveries"),
        }
        if last_sweep.elapsed() >= s.config.claim_idle / 2 {
            last_sweep = tokio::time::Instant::now();
            if let Err(e) = deliveries::reset_stuck(&s.db, stale).await {
                tracing::warn!(error = %e, "could not reset stuck deliveries");
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => break,
            () = tokio::time::sleep(s.config.tick) => {}
        }
    }
}

fn entry(id: &StreamId) -> Option<(String, String, String)> {
    let m: String = id.get("m")?;
    let e: String = id.get("e")?;
    Some((id.id.clone(), m, e))
}

async fn deliver_loop(
    s: Arc<Shared>,
    redis: redis::Client,
    consumer: String,
    shutdown: CancellationToken,
) {
    let permits = Arc::new(Semaphore::new(s.config.concurrency.max(1)));
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
    let mut reader: Option<MultiplexedConnection> = None;
    let mut last_claim = tokio::time::Instant::now();
    while !shutdown.is_cancelled() {
        if reader.is_none() {
            reader = redis.get_multiplexed_async_connection_with_config(&config).await.ok();
        }
        let Some(conn) = reader.as_mut() else {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        let mut entries = Vec::new();
        if last_claim.elapsed() >= s.config.claim_idle / 2 {
            last_claim = tokio::time::Instant::now();
            let opts = StreamAutoClaimOptions::default().count(100);
            let idle = s.config.claim_idle.as_millis() as u64;
            let claimed: redis::RedisResult<StreamAutoClaimReply> =
                conn.xautoclaim_options(&s.stream, GROUP, &consumer, idle, "0-0", opts).await;
            if let Ok(c) = claimed {
                entries.extend(c.claimed.iter().filter_map(entry));
            }
        }
        let opts = StreamReadOptions::default().group(GROUP, &consumer).count(100).block(500);
        let read: redis::RedisResult<Option<StreamReadReply>> =
            conn.xread_options(&[&s.stream], &[">"], &opts).await;
        match read {
            Ok(Some(reply)) => {
                entries.extend(reply.keys.iter().flat_map(|k| k.ids.iter().filter_map(entry)));
            }
            Ok(None) => {}
            Err(e) => {
                if e.code() == Some("NOGROUP") {
                    ensure_group(&s).await;
                } else {
                    tracing::warn!(error = %e, "webhook stream read failed");
                    reader = None;
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
        for (entry_id, message, endpoint) in entries {
            let Ok(permit) = permits.clone().acquire_owned().await else { return };
            let s = s.clone();
            tokio::spawn(async move {
                deliver(&s, &entry_id, &message, &endpoint).await;
                drop(permit);
            });
        }
    }
    // Let deliveries in flight finish recording (their entries stay pending otherwise).
    let _ = permits.acquire_many(s.config.concurrency.max(1) as u32).await;
}

async fn deliver(s: &Shared, entry_id: &str, message: &str, endpoint: &str) {
    let due = match deliveries::load(&s.db, message, endpoint).await {
        Ok(d) => d,
        Err(e) => {
            // Not acknowledged: claimed again later.
            tracing::warn!(error = %e, message, endpoint, "could not load a delivery");
            return;
        }
    };
    if let Some(due) = due.filter(|d| d.status == SENDING) {
        if due.disabled {
            let _ = deliveries::give_up(&s.db, message, endpoint).await;
        } else {
            let (attempt, wait) =
                crate::deliver::send(&s.http, &due, s.config.timeout, s.config.allow_private).await;
            let failures = due.attempts as usize + 1;
            let retry_at = if attempt.ok {
                None
            } else {
                s.config
                    .schedule
                    .next_random(failures, wait)
                    .and_then(|d| chrono::Duration::from_std(d).ok())
                    .map(|d| chrono::Utc::now() + d)
            };
            let disable = s.config.disable_after.as_secs_f64();
            match deliveries::record(&s.db, &due, &attempt, retry_at, disable).await {
                Ok(status) => tracing::debug!(
                    message,
                    endpoint,
                    status,
                    code = attempt.status_code,
                    "webhook attempt"
                ),
                Err(e) => {
                    tracing::warn!(error = %e, message, endpoint, "could not record an attempt");
                    return;
                }
            }
        }
    }
    let mut conn = s.conn.clone();
    let acked: redis::RedisResult<()> = conn.xack(&s.stream, GROUP, &[entry_id]).await;
    if let Err(e) = acked {
        tracing::warn!(error = %e, "could not acknowledge a webhook entry");
    }
}
