//! Starting the parts of the service: migrations, connections, the API and the worker.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use ingest::jobs::JobQueue;
use schema::sealed::MasterKeys;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::config::Settings;

/// Applies pending migrations (serialised across processes).
pub async fn migrate(settings: &Settings) -> anyhow::Result<()> {
    schema::db::migrate(&settings.database_url).await.context("migrating the database")
}

/// Checks the master key, migrates, opens the connection pool and seals any stored secret
/// still in clear or under the previous key: what every long-running command does first.
async fn prepare_db(
    settings: &Settings,
    role: schema::Role,
) -> anyhow::Result<(schema::Db, Arc<MasterKeys>)> {
    let keys = settings.master_keys()?;
    migrate(settings).await?;
    let db = connect_db_as(settings, role).await?;
    let n = schema::reseal::reseal_all(&db, &keys)
        .await
        .context("sealing stored secrets under MASTER_KEY")?;
    if n > 0 {
        tracing::info!(
            values = n,
            key = keys.current_id(),
            "sealed stored secrets under MASTER_KEY"
        );
    }
    Ok((db, keys))
}

pub async fn connect_db(settings: &Settings) -> anyhow::Result<schema::Db> {
    connect_db_as(settings, schema::Role::Tool).await
}

/// A pool whose sessions PostgreSQL knows as `role`'s (an import yields to the API's).
async fn connect_db_as(settings: &Settings, role: schema::Role) -> anyhow::Result<schema::Db> {
    schema::Db::connect_as(&settings.database_url, settings.database_pool_size, role)
        .await
        .with_context(|| format!("connecting to PostgreSQL at {}", redact(&settings.database_url)))
}

/// The job queue and the API's short-lived guards, over one Redis connection.
pub async fn connect_queue(settings: &Settings) -> anyhow::Result<(queue::Guards, JobQueue)> {
    let client = redis::Client::open(settings.redis_url.as_str()).context("parsing REDIS_URL")?;
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(3)))
        .set_response_timeout(Some(Duration::from_secs(5)));
    let conn = redis::aio::ConnectionManager::new_with_config(client.clone(), config)
        .await
        .with_context(|| format!("connecting to Redis at {}", redact(&settings.redis_url)))?;
    let queue = JobQueue::new(client, conn.clone(), &settings.redis_key_prefix);
    Ok((queue::Guards::new(conn, queue.keys().clone()), queue))
}

/// Runs the HTTP API on `listener` until `shutdown`.
pub async fn serve(
    settings: &Settings,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let (db, keys) = prepare_db(settings, schema::Role::Api).await?;
    let (guards, queue) = connect_queue(settings).await?;
    run_api(settings, db, keys, guards, queue, listener, shutdown).await
}

/// Runs the background worker until `shutdown` (and /metrics on METRICS_BIND when set).
pub async fn work(settings: &Settings, shutdown: CancellationToken) -> anyhow::Result<()> {
    let (db, keys) = prepare_db(settings, schema::Role::Worker).await?;
    let (_, queue) = connect_queue(settings).await?;
    if let Some(addr) = settings.metrics_bind {
        let listener =
            TcpListener::bind(addr).await.with_context(|| format!("listening on {addr}"))?;
        tokio::spawn(api::serve_metrics(listener, db.clone(), shutdown.clone()));
    }
    let reads = worker_reads(settings, &db)?;
    let sender = spawn_sender(settings, &db, reads.clone(), &keys, &queue, &shutdown)?;
    let pulls = puller(settings, &db, &keys, &queue)?;
    let exports = exporter(settings, &db, &queue);
    let config =
        ingest::worker::WorkerConfig { api_reads: reads, ..settings.worker(pulls, exports) };
    ingest::worker::run(db, queue, config, shutdown).await;
    join_sender(sender).await;
    Ok(())
}

/// The exports of users' records, when object storage is configured (the archives go there).
fn exporter(
    settings: &Settings,
    db: &schema::Db,
    queue: &JobQueue,
) -> Option<Arc<dyn ingest::worker::ExportHandler>> {
    let storage = settings.s3.storage()?;
    let (stale, grace) = (settings.job_stale_after(), settings.sweep_grace());
    Some(Arc::new(api::Exporter::new(db.clone(), storage, queue.clone(), stale, grace)))
}

/// The vendor pulls, when any vendor is configured.
fn puller(
    settings: &Settings,
    db: &schema::Db,
    keys: &Arc<MasterKeys>,
    queue: &JobQueue,
) -> anyhow::Result<Option<Arc<dyn ingest::worker::PullHandler>>> {
    let vendors = settings.vendors();
    if !vendors::VENDORS.iter().any(|v| vendors.is_configured(v.provider().slug)) {
        return Ok(None);
    }
    Ok(Some(Arc::new(vendors::pulls::Puller {
        db: db.clone(),
        keys: keys.clone(),
        http: vendors::oauth::http_client().context("building the HTTP client for vendors")?,
        vendors,
        public_url: settings.public_url.clone(),
        queue: queue.clone(),
        outbox: settings.outgoing_webhooks_enabled,
        sweep_grace: settings.sweep_grace(),
        every: Duration::from_secs(settings.vendor_pull_interval_seconds.max(1)),
    })))
}

/// The worker's view of the read replicas, when there are any: the webhook sender waits for
/// them to replay what it announces, and imports yield to the API's reads on them. Two
/// connections to each are enough for both.
fn worker_reads(settings: &Settings, db: &schema::Db) -> anyhow::Result<Option<schema::Reads>> {
    if !settings.database_replica_urls.iter().any(|u| !u.trim().is_empty()) {
        return Ok(None);
    }
    Ok(Some(connect_reads(settings, db, 2, schema::Role::Worker)?))
}

/// The primary and the replicas of `DATABASE_REPLICA_URLS`: pools of at most `max_size`
/// connections to each replica, their sessions named as `role`'s.
pub fn connect_reads(
    settings: &Settings,
    db: &schema::Db,
    max_size: usize,
    role: schema::Role,
) -> anyhow::Result<schema::Reads> {
    let urls = &settings.database_replica_urls;
    schema::Reads::connect(db.clone(), urls, max_size, settings.replica_max_lag, role)
        .context("DATABASE_REPLICA_URLS")
}

/// The webhook sender, beside the ingest worker, when outgoing webhooks are on.
fn spawn_sender(
    settings: &Settings,
    db: &schema::Db,
    replicas: Option<schema::Reads>,
    keys: &Arc<MasterKeys>,
    queue: &JobQueue,
    shutdown: &CancellationToken,
) -> anyhow::Result<Option<tokio::task::JoinHandle<()>>> {
    if !settings.outgoing_webhooks_enabled {
        return Ok(None);
    }
    let config = webhooks::sender::SenderConfig { replicas, ..settings.sender()? };
    let (db, redis, prefix) =
        (db.clone(), queue.client().clone(), settings.redis_key_prefix.clone());
    let (token, keys) = (shutdown.clone(), keys.clone());
    Ok(Some(tokio::spawn(async move {
        webhooks::sender::run(db, redis, &prefix, config, keys, token).await
    })))
}

async fn join_sender(sender: Option<tokio::task::JoinHandle<()>>) {
    if let Some(task) = sender
        && let Err(e) = task.await
    {
        tracing::warn!(error = %e, "the webhook sender stopped abnormally");
    }
}

/// API and worker in one process: the default for a single machine. When either part stops
/// (or fails), the other is stopped too.
pub async fn all(
    settings: &Settings,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let (api_db, keys) = prepare_db(settings, schema::Role::Api).await?;
    // A pool of its own for the worker: PostgreSQL tells the API's sessions from the worker's
    // (an import yields to the API's reads).
    let db = connect_db_as(settings, schema::Role::Worker).await?;
    let (guards, queue) = connect_queue(settings).await?;
    let api = async {
        let (db, keys, queue) = (api_db, keys.clone(), queue.clone());
        let result = run_api(settings, db, keys, guards, queue, listener, shutdown.clone()).await;
        shutdown.cancel();
        result
    };
    let reads = worker_reads(settings, &db)?;
    let sender = spawn_sender(settings, &db, reads.clone(), &keys, &queue, &shutdown)?;
    let pulls = puller(settings, &db, &keys, &queue)?;
    let exports = exporter(settings, &db, &queue);
    let worker = async {
        let config =
            ingest::worker::WorkerConfig { api_reads: reads, ..settings.worker(pulls, exports) };
        ingest::worker::run(db.clone(), queue.clone(), config, shutdown.clone()).await;
        shutdown.cancel();
        join_sender(sender).await;
    };
    let (api, ()) = tokio::join!(api, worker);
    api
}

async fn run_api(
    settings: &Settings,
    db: schema::Db,
    keys: Arc<MasterKeys>,
    guards: queue::Guards,
    queue: JobQueue,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let storage = settings.s3.storage();
    let reads = connect_reads(settings, &db, settings.database_pool_size, schema::Role::Api)?;
    let state = api::build_state(db, reads, guards, queue, storage, keys, settings.api()?)
        .await
        .context("starting the API")?;
    api::serve(listener, state, shutdown).await.context("serving the API")
}

/// A URL without its password, for messages.
fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_redacted() {
        assert_eq!(super::redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(super::redact("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }
}
