//! The background worker: `concurrency` consumer loops on the batch lane,
//! `import_concurrency` on the import lane (imports and exports; only with object storage) and
//! `pull_concurrency` on the pull lane (only with a [`PullHandler`]), so long imports and pulls
//! waiting on vendors never hold up SDK batches; a claimer per lane it reads that takes over
//! entries a dead worker left pending; a loop announcing pulls whose wait ended; the sealer and
//! the lifecycle task; and a sweeper that re-announces the batches, imports and exports Redis
//! lost and the pulls due, deletes what is past its retention (`schema::retention`, and the
//! audit trail), empties deleted users' prefixes in object storage and measures users' storage
//! a day old. Several workers (on several machines) share the lanes through the consumer group.

use std::time::Duration;

use schema::Db;
use schema::retention::Expiring;
use schema::sync_runs::{RunSource, RunStatus};
use tokio_util::sync::CancellationToken;

use crate::jobs::{Entry, Job, JobQueue, Lane, Task};
use crate::object_store::Storage;
use crate::process::{self, Options, Processed};
use schema::ids::{BatchId, ExportId, PullId};

/// Runs vendor pulls for the worker: the cloud vendors live in a crate above this one, and the
/// worker only drives them through its pull lane.
pub trait PullHandler: Send + Sync + std::fmt::Debug {
    /// Runs a pull; whether its job is settled (to acknowledge).
    fn run(&self, id: PullId) -> futures::future::BoxFuture<'_, bool>;
    /// Pulls due and not announced lately, for the sweeper to announce again.
    fn due(&self) -> futures::future::BoxFuture<'_, Vec<PullId>>;
    /// Pulls put off until a time (a vendor's rate limit) that has come, marked announced: the
    /// worker announces them at once, so a wait costs what the vendor asked, not a sweep.
    fn wake(&self) -> futures::future::BoxFuture<'_, Vec<PullId>>;
}

/// Makes exports of users' records for the worker: their shapes are the API's, in a crate above
/// this one; the worker drives them through its import lane.
pub trait ExportHandler: Send + Sync + std::fmt::Debug {
    /// Makes an export; whether its job is settled (to acknowledge).
    fn run(&self, id: ExportId) -> futures::future::BoxFuture<'_, bool>;
    /// Deletes expired exports (their archives first), and returns the exports waiting that
    /// were not announced lately, for the sweeper to announce again.
    fn sweep(&self) -> futures::future::BoxFuture<'_, Vec<ExportId>>;
}

/// How often a worker looks for pulls whose wait has ended.
const WAKE_EVERY: Duration = Duration::from_millis(250);

#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Batches processed at once by this process.
    pub concurrency: usize,
    /// Imports and exports run at once by this process (an import keeps a core busy for minutes).
    pub import_concurrency: usize,
    /// An import that has not said it is alive for this long lost its worker, and is taken
    /// over.
    pub import_stale_after: Duration,
    /// A pending entry idle this long is taken over.
    pub claim_idle: Duration,
    /// How often the sweeper runs.
    pub sweep_every: Duration,
    /// How long a queued batch or import may wait before the sweeper re-announces it.
    pub sweep_grace: Duration,
    /// Stored batches are kept this many days.
    pub retention_days: i32,
    /// Write outbox events for the webhook sender.
    pub outbox: bool,
    /// Attempts before a batch that keeps failing is marked failed.
    pub max_attempts: i32,
    /// Where uploaded exports are read from; `None`: this worker reads no import lane (no
    /// imports, no exports).
    pub storage: Option<Storage>,
    /// The primary and the read replicas the API's read routes use: imports yield to the
    /// API's reads on each. `None`: the primary alone.
    pub api_reads: Option<schema::Reads>,
    /// Runs vendor pulls; `None`: this worker takes no pull jobs.
    pub pulls: Option<std::sync::Arc<dyn PullHandler>>,
    /// Pulls run at once by this process.
    pub pull_concurrency: usize,
    /// Makes exports of users' records; `None`: this worker makes none.
    pub exports: Option<std::sync::Arc<dyn ExportHandler>>,
    /// Seals past, quiet days of samples into blocks; `None`: this worker seals none.
    pub seal: Option<crate::sealer::SealConfig>,
    /// Deletes health data past `DELETE_AFTER_DAYS`; `None`: kept for ever.
    pub lifecycle: Option<crate::lifecycle::LifecycleConfig>,
    /// Days the audit trail is kept.
    pub audit_retention_days: i32,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            concurrency: 4,
            import_concurrency: 1,
            import_stale_after: crate::import_job::STALE_AFTER,
            claim_idle: Duration::from_secs(60),
            sweep_every: Duration::from_secs(30),
            sweep_grace: Duration::from_secs(60),
            retention_days: 30,
            outbox: false,
            max_attempts: 5,
            storage: None,
            api_reads: None,
            pulls: None,
            pull_concurrency: 2,
            exports: None,
            seal: Some(crate::sealer::SealConfig::default()),
            lifecycle: None,
            audit_retention_days: 400,
        }
    }
}

/// Runs the worker until `shutdown` is cancelled; in-flight batches finish first.
pub async fn run(db: Db, queue: JobQueue, config: WorkerConfig, shutdown: CancellationToken) {
    let imports = if config.storage.is_some() { config.import_concurrency.max(1) } else { 0 };
    let pulls = if config.pulls.is_some() { config.pull_concurrency.max(1) } else { 0 };
    tracing::info!(concurrency = config.concurrency, imports, pulls, "worker started");
    let name = format!("{}-{}", gethostname::gethostname().to_string_lossy(), std::process::id());
    let mut tasks = tokio::task::JoinSet::new();
    for (lane, consumers) in
        [(Lane::Batches, config.concurrency.max(1)), (Lane::Imports, imports), (Lane::Pulls, pulls)]
    {
        if consumers == 0 {
            // Another worker, configured for this lane (storage, vendors), takes its jobs.
            continue;
        }
        for n in 0..consumers {
            let (db, queue, config, shutdown) =
                (db.clone(), queue.clone(), config.clone(), shutdown.clone());
            let consumer = format!("{name}-{lane:?}-{n}");
            tasks.spawn(async move { consume(db, queue, lane, config, consumer, shutdown).await });
        }
        let (db, queue, config, shutdown) =
            (db.clone(), queue.clone(), config.clone(), shutdown.clone());
        let consumer = format!("{name}-{lane:?}-claim");
        tasks.spawn(async move { claim(db, queue, lane, config, consumer, shutdown).await });
    }
    if let Some(pulls) = config.pulls.clone() {
        tasks.spawn(wake(pulls, queue.clone(), shutdown.clone()));
    }
    for seal in config.seal.iter().flat_map(|seal| seal.shares()) {
        tasks.spawn(crate::sealer::run(db.clone(), seal, shutdown.clone()));
    }
    if let Some(lifecycle) = config.lifecycle {
        tasks.spawn(crate::lifecycle::run(db.clone(), lifecycle, shutdown.clone()));
    }
    tasks.spawn(sweep(db, queue, config, shutdown));
    while tasks.join_next().await.is_some() {}
    tracing::info!("worker stopped");
}

/// Waits `d`, or less when shutting down; false when shutting down.
async fn pause(d: Duration, shutdown: &CancellationToken) -> bool {
    tokio::select! {
        _ = shutdown.cancelled() => false,
        _ = tokio::time::sleep(d) => true,
    }
}

async fn consume(
    db: Db,
    queue: JobQueue,
    lane: Lane,
    config: WorkerConfig,
    consumer: String,
    shutdown: CancellationToken,
) {
    let mut backoff = Duration::from_millis(200);
    'connect: while !shutdown.is_cancelled() {
        let stream = queue.stream(lane);
        let mut conn = match stream.reader().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "worker cannot reach Redis; retrying");
                if !pause(backoff, &shutdown).await {
                    break;
                }
                backoff = (backoff * 2).min(Duration::from_secs(10));
                continue;
            }
        };
        if let Err(e) = stream.ensure_group().await {
            tracing::warn!(error = %e, "cannot create the consumer group; retrying");
            pause(backoff, &shutdown).await;
            continue;
        }
        backoff = Duration::from_millis(200);
        loop {
            let jobs = tokio::select! {
                _ = shutdown.cancelled() => break 'connect,
                r = stream.read(&mut conn, &consumer, 4, Duration::from_secs(2)) => r,
            };
            match jobs {
                Ok(jobs) => {
                    for job in jobs {
                        handle(&db, &queue, lane, &config, job).await;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "reading the job stream failed; reconnecting");
                    pause(backoff, &shutdown).await;
                    continue 'connect;
                }
            }
        }
    }
}

async fn claim(
    db: Db,
    queue: JobQueue,
    lane: Lane,
    config: WorkerConfig,
    consumer: String,
    shutdown: CancellationToken,
) {
    let every = (config.claim_idle / 4).max(Duration::from_millis(250));
    while pause(every, &shutdown).await {
        match queue.stream(lane).claim(&consumer, config.claim_idle, 16).await {
            Ok(jobs) => {
                for job in jobs {
                    tracing::info!(entry = %job.id, "took over a job left pending");
                    handle(&db, &queue, lane, &config, job).await;
                }
            }
            Err(e) => tracing::debug!(error = %e, "claiming pending jobs failed"),
        }
    }
}

/// Announces pulls whose wait has ended, as it ends. The time is the pull's row (durable): a
/// worker that stops loses nothing, as another's loop (or the sweeper) finds the row.
async fn wake(
    pulls: std::sync::Arc<dyn PullHandler>,
    queue: JobQueue,
    shutdown: CancellationToken,
) {
    while pause(WAKE_EVERY, &shutdown).await {
        let ids = pulls.wake().await;
        if !ids.is_empty()
            && let Err(e) = queue.announce(&ids).await
        {
            tracing::warn!(error = %e, "announcing pulls whose wait ended failed; the sweeper will");
        }
    }
}

async fn sweep(db: Db, queue: JobQueue, config: WorkerConfig, shutdown: CancellationToken) {
    while pause(config.sweep_every, &shutdown).await {
        if let Some(pulls) = &config.pulls {
            reannounce(&queue, Lane::Pulls, Ok::<_, schema::Error>(pulls.due().await)).await;
        }
        let batches = schema::sdk_batches::take_unannounced(&db, config.sweep_grace, 1000).await;
        reannounce(&queue, Lane::Batches, batches).await;
        let stale = config.import_stale_after;
        let imports = schema::imports::take_unannounced(&db, config.sweep_grace, stale, 100).await;
        reannounce(&queue, Lane::Imports, imports).await;
        if let Some(exports) = &config.exports {
            reannounce(&queue, Lane::Imports, Ok::<_, schema::Error>(exports.sweep().await)).await;
        }
        if let Some(storage) = &config.storage
            && let Err(e) = storage.empty_deleted(&db, 10).await
        {
            tracing::warn!(error = %e, "emptying deleted users' objects failed");
        }
        expire(&db, config.retention_days).await;
        expire_audit(&db, config.audit_retention_days).await;
        measure_stale(&db).await;
    }
}

/// Announces again the jobs of `lane` the sweep found waiting in PostgreSQL (Redis may have
/// lost them, or a pull's time came), by their ids; a failure is retried by the next sweep.
async fn reannounce<Id: Copy + Into<Job>>(
    queue: &JobQueue,
    lane: Lane,
    found: Result<Vec<Id>, schema::Error>,
) {
    let ids = match found {
        Ok(ids) if ids.is_empty() => return,
        Ok(ids) => ids,
        Err(e) => {
            tracing::warn!(error = %e, ?lane, "sweeping waiting jobs failed");
            return;
        }
    };
    // Due pulls are the sweep's routine; batches or imports found again mean Redis lost them.
    match lane {
        Lane::Pulls => tracing::debug!(jobs = ids.len(), ?lane, "announcing due jobs"),
        Lane::Batches | Lane::Imports => {
            tracing::info!(jobs = ids.len(), ?lane, "re-announcing waiting jobs")
        }
    }
    if let Err(e) = queue.announce(&ids).await {
        tracing::warn!(error = %e, ?lane, "re-announcing failed; the next sweep retries");
    }
}

/// Measures the storage of the users whose figures are missing or a day old
/// (`schema::storage`), `MEASURED_A_SWEEP` a sweep: a fleet's figures stay a day fresh at most
/// (the sealer measures the users whose days it seals as it goes).
async fn measure_stale(db: &Db) {
    const MEASURED_A_SWEEP: i64 = 32;
    let users =
        match schema::storage::stale_users(db, chrono::Duration::days(1), MEASURED_A_SWEEP).await {
            Ok(users) => users,
            Err(e) => {
                tracing::warn!(error = %e, "finding users to measure failed");
                return;
            }
        };
    for user in users {
        if let Err(e) = schema::storage::measure_user(db, user).await {
            tracing::warn!(error = %e, %user, "measuring a user's storage failed");
            return;
        }
    }
}

/// Deletes what expires (`schema::retention`), a thousand rows a statement, up to
/// `EXPIRE_ROUNDS` statements a sweep each: a steady stream of batches never outgrows it.
async fn expire(db: &Db, days: i32) {
    const LIMIT: i64 = 1000;
    const EXPIRE_ROUNDS: usize = 50;
    for what in Expiring::ALL {
        let mut total = 0;
        for _ in 0..EXPIRE_ROUNDS {
            match schema::retention::delete_expired(db, what, days, LIMIT).await {
                Ok(n) => {
                    total += n;
                    if n < LIMIT as u64 {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, what = what.name(), "deleting expired rows failed");
                    break;
                }
            }
        }
        if total > 0 {
            tracing::info!(rows = total, what = what.name(), "deleted past retention");
        }
    }
}

/// Deletes the audit trail past its retention: whole chunks, then up to `LIMIT` rows of the
/// chunk the boundary cuts.
async fn expire_audit(db: &Db, days: i32) {
    const LIMIT: i64 = 10_000;
    match schema::audit::expire(db, days, LIMIT).await {
        Ok(0) => {}
        Ok(rows) => tracing::info!(rows, "deleted audit records past retention"),
        Err(e) => tracing::warn!(error = %e, "deleting audit records past retention failed"),
    }
}

/// Processes one job and acknowledges it unless it should be retried.
async fn handle(db: &Db, queue: &JobQueue, lane: Lane, config: &WorkerConfig, entry: Entry<Job>) {
    let ack = match entry.task {
        Task::Task(Job::SdkBatch { id }) => handle_batch(db, queue, config, id).await,
        Task::Task(Job::Import { id }) => {
            let api =
                config.api_reads.clone().unwrap_or_else(|| schema::Reads::primary_only(db.clone()));
            crate::import_job::handle(
                db,
                &api,
                queue,
                config.storage.as_ref(),
                config.outbox,
                id,
                config.import_stale_after,
            )
            .await
        }
        Task::Task(Job::Export { id }) => match &config.exports {
            Some(exports) => exports.run(id).await,
            // Another worker, configured to make exports, takes it.
            None => false,
        },
        Task::Task(Job::Pull { id }) => match &config.pulls {
            Some(pulls) => pulls.run(id).await,
            // Not read here: this worker has no consumers on the pull lane.
            None => false,
        },
        // Written by another version: the sweeper announces what still waits in PostgreSQL.
        Task::Unreadable => true,
    };
    if ack && let Err(e) = queue.stream(lane).ack(&entry.id).await {
        tracing::warn!(error = %e, entry = %entry.id, "acknowledging failed; the job will be seen again");
    }
}

/// Processes one SDK batch; returns whether its job is settled (to acknowledge).
async fn handle_batch(db: &Db, queue: &JobQueue, config: &WorkerConfig, batch_id: BatchId) -> bool {
    let opts = Options { outbox: config.outbox, force: false };
    match process::process_sdk_batch(db, batch_id, opts).await {
        Ok(Processed::Done(run)) | Ok(Processed::Failed(run)) => {
            metrics::counter!("wearhouse_batches_processed_total", "status" => run.status.as_str())
                .increment(1);
            queue.publish_sync(run.user_id, &process::status_event(&run)).await;
            true
        }
        // Busy: the worker holding it acknowledges its own entry; if it dies, the sweeper
        // re-announces the batch (it is still queued in PostgreSQL).
        Ok(Processed::AlreadyDone | Processed::Busy | Processed::Missing) => true,
        Err(e) => {
            give_up_after(db, queue, config, batch_id, &e.to_string(), e.is_retriable()).await
        }
    }
}

/// Counts a failed attempt. A batch whose failure cannot go away by retrying, or that failed
/// `max_attempts` times, is marked failed (and the job acknowledged); it can be replayed with
/// `wearhouse reprocess` once the cause is fixed.
async fn give_up_after(
    db: &Db,
    queue: &JobQueue,
    config: &WorkerConfig,
    batch_id: BatchId,
    error: &str,
    retriable: bool,
) -> bool {
    tracing::warn!(%batch_id, error, retriable, "processing a batch failed");
    let attempts = schema::sdk_batches::count_attempt(db, batch_id, error).await.unwrap_or(0);
    if retriable && attempts < config.max_attempts {
        return false;
    }
    let outcome = async {
        let client = db.client().await?;
        schema::sdk_batches::mark_failed(&client, batch_id, error).await?;
        let Some(batch) = schema::sdk_batches::get(db, batch_id).await? else {
            return Ok(None);
        };
        let finish = schema::sync_runs::Finish {
            status: RunStatus::Failed,
            message: format!("{} batch failed after {attempts} attempts", batch.provider),
            counts: None,
            dropped: serde_json::json!({}),
            error: Some(error.to_string()),
            started_at: chrono::Utc::now(),
        };
        let source = RunSource::Sdk;
        schema::sync_runs::finish(
            &client,
            batch_id.0,
            batch.user_id,
            &batch.provider,
            source,
            &finish,
        )
        .await
        .map(Some)
    }
    .await;
    match outcome {
        Ok(Some(run)) => queue.publish_sync(run.user_id, &process::status_event(&run)).await,
        Ok(None) => {}
        Err::<_, schema::Error>(e) => tracing::warn!(error = %e, "could not mark the batch failed"),
    }
    true
}
