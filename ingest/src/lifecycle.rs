//! The lifecycle task (`DELETE_AFTER_DAYS`): a pass over every user, once an `every`, deletes
//! the health data whose time lies wholly before the cutoff (`schema::lifecycle`): first the
//! `samples` chunks past it whole, then each user's blocks, rows, rollups and sessions, a user a
//! transaction. A pass that stops is taken up again by the next; deleting twice deletes nothing.

use std::time::Duration;

use chrono::{DateTime, Utc};
use schema::Db;
use tokio_util::sync::CancellationToken;

/// When data is deleted.
#[derive(Debug, Clone, Copy)]
pub struct LifecycleConfig {
    /// Data whose time lies wholly before the UTC midnight this many days ago is deleted.
    pub days: u32,
    /// How often a pass runs.
    pub every: Duration,
}

/// Users read a statement.
const PAGE: i64 = 500;

/// What a pass deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Deleted {
    pub chunks: u64,
    pub rows: u64,
    pub users: u64,
}

/// One pass over every user, deleting what lies before `cutoff`; `shutdown` ends it between
/// users. One worker runs a pass at a time (an advisory lock; another finds it taken and
/// returns nothing). A user whose delete fails is logged and passed over: the next pass retries.
pub async fn pass(
    db: &Db,
    cutoff: DateTime<Utc>,
    shutdown: &CancellationToken,
) -> schema::Result<Deleted> {
    let Some(lock) = db.try_lock(schema::lifecycle::PASS_LOCK).await? else {
        return Ok(Deleted::default());
    };
    let out = users_pass(db, cutoff, shutdown).await;
    schema::db::unlock(lock, schema::lifecycle::PASS_LOCK).await;
    out
}

/// [`pass`] under its lock.
async fn users_pass(
    db: &Db,
    cutoff: DateTime<Utc>,
    shutdown: &CancellationToken,
) -> schema::Result<Deleted> {
    let mut out =
        Deleted { chunks: schema::lifecycle::drop_chunks(db, cutoff).await?, ..Default::default() };
    let mut after = None;
    loop {
        let users = schema::lifecycle::users_after(db, after, PAGE).await?;
        let Some(last) = users.last().copied() else { break };
        for user in users {
            if shutdown.is_cancelled() {
                return Ok(out);
            }
            let rows = match schema::lifecycle::delete_before(db, user, cutoff).await {
                Ok(rows) => rows,
                Err(e) => {
                    tracing::warn!(error = %e, %user, "deleting a user's data past DELETE_AFTER_DAYS failed; the next pass retries");
                    continue;
                }
            };
            if rows > 0 {
                out.rows += rows;
                out.users += 1;
                // The user's figures in the overview follow at once.
                if let Err(e) = schema::storage::measure_user(db, user).await {
                    tracing::warn!(error = %e, %user, "measuring a user's storage failed");
                }
            }
        }
        after = Some(last);
    }
    Ok(out)
}

/// Runs a pass every `every` until `shutdown`.
pub async fn run(db: Db, config: LifecycleConfig, shutdown: CancellationToken) {
    tracing::info!(delete_after_days = config.days, "lifecycle started");
    loop {
        let cutoff = schema::lifecycle::cutoff(Utc::now(), config.days);
        match pass(&db, cutoff, &shutdown).await {
            Ok(done) => {
                metrics::counter!("wearhouse_lifecycle_rows_deleted_total").increment(done.rows);
                metrics::counter!("wearhouse_lifecycle_chunks_dropped_total")
                    .increment(done.chunks);
                if done.rows > 0 || done.chunks > 0 {
                    tracing::info!(
                        rows = done.rows,
                        users = done.users,
                        chunks = done.chunks,
                        days = config.days,
                        "deleted data past DELETE_AFTER_DAYS"
                    );
                }
            }
            Err(e) => tracing::warn!(error = %e, "the lifecycle pass failed; the next retries"),
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(config.every) => {}
        }
    }
}
