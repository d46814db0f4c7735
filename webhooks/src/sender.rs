//! The sender, run by the worker: turns the outbox into messages, announces due deliveries on
//! the one queue ([`queue::Queue`]: stream `<prefix>:webhooks`, consumer group `senders`), and
//! delivers what it hands out, each delivery on its own task so a slow or dead endpoint delays
//! no other. An entry is acknowledged only after its attempt is recorded: a sender killed
//! mid-delivery leaves it pending, and another sender claims it once it has been idle for the
//! request timeout plus `claim_idle` ([`takeover_after`]), never while its call may still be
//! running (which would send it twice). PostgreSQL holds the state, so a lost or trimmed
//! stream only delays deliveries until the sweep finds them.

use std::sync::Arc;
use std::time::Duration;

use queue::{Entry, Queue, QueueSpec, Task};
use redis::aio::{ConnectionManager, MultiplexedConnection};
use schema::Db;
use schema::ids::{EndpointId, MessageId};
use schema::sealed::MasterKeys;
use schema::webhook_deliveries::{self as deliveries, Delivery, DeliveryStatus};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::schedule::Schedule;

const GROUP: &str = "senders";
/// Deliveries are claimed a thousand at a time: the stream never needs to hold many more.
const MAX_LEN: usize = 100_000;

/// What the webhook stream carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum SendTask {
    /// Attempt the delivery of a message to an endpoint (claimed: `sending`).
    Delivery { message: MessageId, endpoint: EndpointId },
}

/// The webhook stream of a deployment (`prefix` is `REDIS_KEY_PREFIX`).
pub(crate) fn send_queue(
    client: redis::Client,
    conn: ConnectionManager,
    prefix: &str,
) -> Queue<SendTask> {
    let stream = queue::Keys::new(prefix).stream(queue::Stream::Webhooks);
    let spec = QueueSpec { stream, group: GROUP.into(), max_len: MAX_LEN };
    Queue::new(client, conn, spec)
}

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
    /// An unacknowledged entry idle this long beyond the request timeout is taken over by
    /// another sender.
    pub claim_idle: Duration,
    /// Whether targets at private, loopback or link-local addresses may be reached.
    pub allow_private: bool,
    /// Extra root certificates (PEM) trusted for receivers, e.g. an internal CA.
    pub extra_roots_pem: Option<Vec<u8>>,
    /// The only proxy deliveries go through; `None`: none (the environment's is ignored).
    pub proxy: Option<String>,
    /// The read replicas: deliveries wait until the replicas have what they announce (or are
    /// known to be too far behind to be read), so that a read the webhook prompts finds it
    /// wherever it lands.
    pub replicas: Option<schema::Reads>,
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
            proxy: None,
            replicas: None,
        }
    }
}

struct Shared {
    db: Db,
    /// Open the endpoints' signing secrets (stored sealed).
    keys: Arc<MasterKeys>,
    queue: Queue<SendTask>,
    http: reqwest::Client,
    config: SenderConfig,
}

/// The delivery client. Redirects are not followed: a 3xx is a failure, and a receiver cannot
/// bounce a signed message to an address the URL rules would refuse. No proxy from the
/// environment: a proxy would resolve the receiver itself, past the address guard.
pub fn client(config: &SenderConfig) -> reqwest::Result<reqwest::Client> {
    let resolver = crate::guard::GuardedResolver { allow_private: config.allow_private };
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(resolver));
    builder = match &config.proxy {
        Some(url) => builder.proxy(reqwest::Proxy::all(url)?),
        None => builder.no_proxy(),
    };
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
    builder.build()
}

/// Runs until `shutdown`.
pub async fn run(
    db: Db,
    redis: redis::Client,
    prefix: &str,
    config: SenderConfig,
    keys: Arc<MasterKeys>,
    shutdown: CancellationToken,
) {
    let conn = match ConnectionManager::new(redis.clone()).await {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "webhook sender: no Redis connection; not started");
            return;
        }
    };
    let http = match client(&config) {
        Ok(h) => h,
        Err(e) => {
            tracing::error!(error = %e, "webhook sender: no HTTP client; not started");
            return;
        }
    };
    let queue = send_queue(redis, conn, prefix);
    if let Err(e) = queue.ensure_group().await {
        tracing::warn!(error = %e, "webhook sender: could not create the consumer group");
    }
    let shared = Arc::new(Shared { db, keys, queue, http, config });
    let consumer = format!("sender-{}", uuid::Uuid::new_v4().simple());
    let announcer = tokio::spawn(announce_loop(shared.clone(), shutdown.clone()));
    deliver_loop(shared, consumer, shutdown).await;
    let _ = announcer.await;
}

/// Outbox → messages, due deliveries → stream, stuck deliveries → pending.
async fn announce_loop(s: Arc<Shared>, shutdown: CancellationToken) {
    let stale = takeover_after(&s.config).as_secs_f64() * 2.0;
    // Stuck deliveries are rare and only become stale after `stale` seconds: no need to look
    // for them on every tick.
    let mut last_sweep = tokio::time::Instant::now();
    while !shutdown.is_cancelled() {
        if let Err(e) = crate::dispatch::dispatch_once(&s.db, 500).await {
            tracing::warn!(error = %e, "webhook dispatch failed; retrying");
        }
        match deliveries::claim_due(&s.db, 1000).await {
            Ok(due) if !due.is_empty() => {
                if let Some(reads) = &s.config.replicas
                    && let Err(e) = reads.wait_replayed().await
                {
                    tracing::debug!(error = %e, "could not wait for the read replicas");
                }
                let tasks: Vec<SendTask> = due
                    .into_iter()
                    .map(|d| SendTask::Delivery { message: d.message, endpoint: d.endpoint })
                    .collect();
                if let Err(e) = s.queue.publish(&tasks).await {
                    // The sweep below makes them pending again.
                    tracing::warn!(error = %e, count = tasks.len(), "could not announce deliveries");
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

async fn deliver_loop(s: Arc<Shared>, consumer: String, shutdown: CancellationToken) {
    let permits = Arc::new(Semaphore::new(s.config.concurrency.max(1)));
    let mut reader: Option<MultiplexedConnection> = None;
    let mut last_claim = tokio::time::Instant::now();
    while !shutdown.is_cancelled() {
        if reader.is_none() {
            reader = s.queue.reader().await.ok();
        }
        let Some(conn) = reader.as_mut() else {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        let mut entries: Vec<Entry<SendTask>> = Vec::new();
        if last_claim.elapsed() >= s.config.claim_idle / 2 {
            last_claim = tokio::time::Instant::now();
            match s.queue.claim(&consumer, takeover_after(&s.config), 100).await {
                Ok(claimed) => entries.extend(claimed),
                Err(e) => tracing::debug!(error = %e, "claiming webhook entries failed"),
            }
        }
        match s.queue.read(conn, &consumer, 100, Duration::from_millis(500)).await {
            Ok(read) => entries.extend(read),
            Err(e) => {
                tracing::warn!(error = %e, "webhook stream read failed");
                reader = None;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        for entry in entries {
            let Task::Task(SendTask::Delivery { message, endpoint }) = entry.task else {
                ack(&s, &entry.id).await;
                continue;
            };
            let Ok(permit) = permits.clone().acquire_owned().await else { return };
            let s = s.clone();
            tokio::spawn(async move {
                deliver(&s, &entry.id, &Delivery { message, endpoint }).await;
                drop(permit);
            });
        }
    }
    // Let deliveries in flight finish recording (their entries stay pending otherwise).
    let _ = permits.acquire_many(s.config.concurrency.max(1) as u32).await;
}

/// How long an entry must have been pending before another sender takes it: a delivery's call
/// ends within the timeout, and its attempt is recorded within `claim_idle` after (a shorter
/// wait took over deliveries still in flight on a busy box and sent them twice).
fn takeover_after(config: &SenderConfig) -> Duration {
    config.timeout + config.claim_idle
}

async fn ack(s: &Shared, entry_id: &str) {
    if let Err(e) = s.queue.ack(entry_id).await {
        tracing::warn!(error = %e, "could not acknowledge a webhook entry");
    }
}

async fn deliver(s: &Shared, entry_id: &str, d: &Delivery) {
    let (message, endpoint) = (d.message.as_str(), d.endpoint.as_str());
    let due = match deliveries::load(&s.db, d).await {
        Ok(d) => d,
        Err(e) => {
            // Not acknowledged: claimed again later.
            tracing::warn!(error = %e, message, endpoint, "could not load a delivery");
            return;
        }
    };
    if let Some(due) = due.filter(|d| d.status == DeliveryStatus::Sending) {
        if due.disabled {
            let _ = deliveries::give_up(&s.db, d).await;
        } else {
            let secrets = match due.secrets(&s.keys) {
                Ok(secrets) => secrets,
                Err(e) => {
                    // Not acknowledged: a process with the right MASTER_KEY sends it.
                    tracing::error!(error = %e, message, endpoint, "cannot sign a delivery");
                    return;
                }
            };
            let (attempt, wait) = crate::deliver::send(
                &s.http,
                &due,
                &secrets,
                s.config.timeout,
                s.config.allow_private,
            )
            .await;
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
                    status = status.as_str(),
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
    ack(s, entry_id).await;
}
