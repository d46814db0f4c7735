//! Accepted SDK sync batches: the durable record of what a client sent. A batch is written (with
//! its queued sync run) before the 202 is answered, processed by a worker, and kept for the
//! retention period so that `wearhouse reprocess` can re-derive a user's data from it.

use chrono::{DateTime, Utc};
use deadpool_postgres::{GenericClient, Transaction};
use postgres_types::{FromSql, ToSql};
use uuid::Uuid;

use crate::ids::BatchId;

use crate::ids::UserId;
use crate::sync_runs::{RunSource, RunStatus};
use crate::{Db, Result};

/// Where a stored batch stands: `queued` until a worker processed it (`done`) or gave up on it
/// (`failed`). `wearhouse reprocess` runs `done` and `failed` batches again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSql, FromSql)]
#[postgres(name = "batch_status", rename_all = "snake_case")]
pub enum BatchStatus {
    Queued,
    Done,
    Failed,
}

impl BatchStatus {
    /// The batch's status once its run has this (final) status.
    pub fn after(run: RunStatus) -> BatchStatus {
        match run {
            RunStatus::Success | RunStatus::Partial => BatchStatus::Done,
            RunStatus::Failed => BatchStatus::Failed,
            RunStatus::Queued | RunStatus::InProgress => BatchStatus::Queued,
        }
    }
}

/// A stored batch as a worker needs it.
#[derive(Debug, Clone)]
pub struct Batch {
    pub id: BatchId,
    pub user_id: UserId,
    pub provider: String,
    /// zstd-compressed request body.
    pub body: Vec<u8>,
    pub status: BatchStatus,
    pub attempts: i32,
    pub received_at: DateTime<Utc>,
}

/// What storing a batch came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// Stored, with its queued sync run.
    Batch(BatchId),
    /// No such user.
    NoUser,
    /// Not stored: the user already has `pending` bytes waiting, at or over the bound.
    Backlog { pending: i64 },
}

/// Stores a batch (its body compressed; `body_size` bytes as sent) with its queued sync run,
/// while the user has fewer than `max_pending` bytes of batches waiting to be processed.
pub async fn insert(
    db: &Db,
    user_id: UserId,
    provider: &str,
    compressed_body: &[u8],
    body_size: i32,
    max_pending: i64,
) -> Result<Inserted> {
    let client = db.client().await?;
    let stmt = client
        .prepare_cached(
            "with u as (select 1 from users where id = $2),
             q as (select coalesce(sum(body_size), 0)::bigint as pending
                   from sdk_batches where user_id = $2 and status = $9),
             b as (
                 insert into sdk_batches (id, user_id, provider, body, body_size)
                 select $1, $2, $3, $4, $5 from u, q where q.pending < $10
                 returning id, user_id, provider, received_at),
             r as (
                 insert into sync_runs (id, user_id, provider, source, status, stage, message,
                                        created_at, updated_at)
                 select id, user_id, provider, $6::text, $7::run_status, $8::run_stage,
                        'Batch received', received_at, received_at
                 from b
                 returning id)
             select exists (select 1 from u), (select pending from q), exists (select 1 from r)",
        )
        .await?;
    let id = Uuid::now_v7();
    let (source, status) = (RunSource::Sdk.as_str(), RunStatus::Queued);
    let params: [&(dyn ToSql + Sync); 10] = [
        &id,
        &user_id,
        &provider,
        &compressed_body,
        &body_size,
        &source,
        &status,
        &status.stage(),
        &BatchStatus::Queued,
        &max_pending,
    ];
    let row = match client.query_one(&stmt, &params).await {
        Ok(row) => row,
        // The user was deleted between the check and the insert.
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION) => {
            return Ok(Inserted::NoUser);
        }
        Err(e) => return Err(e.into()),
    };
    let (user, pending, stored): (bool, i64, bool) =
        (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
    Ok(match (user, stored) {
        (_, true) => Inserted::Batch(BatchId(id)),
        (false, false) => Inserted::NoUser,
        (true, false) => Inserted::Backlog { pending },
    })
}

fn from_row(row: &tokio_postgres::Row) -> Result<Batch> {
    Ok(Batch {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        provider: row.try_get("provider")?,
        body: row.try_get("body")?,
        status: row.try_get("status")?,
        attempts: row.try_get("attempts")?,
        received_at: row.try_get("received_at")?,
    })
}

const COLUMNS: &str = "id, user_id, provider, body, status, attempts, received_at";

pub async fn get(db: &Db, id: BatchId) -> Result<Option<Batch>> {
    let client = db.client().await?;
    let sql = format!("select {COLUMNS} from sdk_batches where id = $1");
    client.query_opt(&sql, &[&id]).await?.as_ref().map(from_row).transpose()
}

/// Locks a batch for processing inside `tx` and reads it. `None` when it is gone or another
/// worker holds it.
pub async fn lock(tx: &Transaction<'_>, id: BatchId) -> Result<Option<Batch>> {
    let sql = format!("select {COLUMNS} from sdk_batches where id = $1 for update skip locked");
    let stmt = tx.prepare_cached(&sql).await?;
    tx.query_opt(&stmt, &[&id]).await?.as_ref().map(from_row).transpose()
}

/// Records a processed batch: its status and, on the user, the last sync (and zone offset,
/// when the batch told one) in one statement; then its sync run by the one run rule,
/// `sync_runs::finish`. Returns the run.
pub async fn complete(
    tx: &Transaction<'_>,
    batch: &Batch,
    provider: &str,
    zone_offset: Option<i16>,
    finish: &crate::sync_runs::Finish,
) -> Result<crate::sync_runs::SyncRun> {
    let status = BatchStatus::after(finish.status);
    let done = status == BatchStatus::Done;
    tx.execute(
        &tx.prepare_cached(
            "with u as (
                 update users set last_synced_at = now(), last_synced_provider = $3,
                     last_zone_offset = coalesce($4, last_zone_offset)
                 where id = $2 and $5)
             update sdk_batches set status = $6, error = $7, processed_at = now(),
                 attempts = attempts + 1
             where id = $1",
        )
        .await?,
        &[&batch.id, &batch.user_id, &provider, &zone_offset, &done, &status, &finish.error],
    )
    .await?;
    crate::sync_runs::finish(tx, batch.id.0, batch.user_id, provider, RunSource::Sdk, finish).await
}

/// Gives up on a batch that kept failing: `failed`, with the last error.
pub async fn mark_failed(client: &impl GenericClient, id: BatchId, error: &str) -> Result<()> {
    client
        .execute(
            "update sdk_batches set status = $2, error = $3, processed_at = now(),
                 attempts = attempts + 1 where id = $1",
            &[&id, &BatchStatus::Failed, &error],
        )
        .await?;
    Ok(())
}

/// Counts a failed attempt (outside the rolled-back transaction); returns the attempts so far.
pub async fn count_attempt(db: &Db, id: BatchId, error: &str) -> Result<i32> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "update sdk_batches set attempts = attempts + 1, error = $2 where id = $1 returning attempts",
            &[&id, &error],
        )
        .await?;
    Ok(row.map(|r| r.try_get(0)).transpose()?.unwrap_or(0))
}

/// Queued batches last announced more than `older_than` ago, marked as announced now; the
/// caller re-announces them. Concurrent sweepers each get different batches.
pub async fn take_unannounced(
    db: &Db,
    older_than: std::time::Duration,
    limit: i64,
) -> Result<Vec<BatchId>> {
    let client = db.client().await?;
    let secs = older_than.as_secs_f64();
    // `'queued'` written out, here and in `backlog`: it is the partial index's predicate
    // (`sdk_batches_queued_idx`), which a bound state would not match.
    let rows = client
        .query(
            "update sdk_batches set announced_at = now()
             where id in (select id from sdk_batches
                          where status = 'queued'
                            and announced_at < now() - make_interval(secs => $1)
                          order by announced_at limit $2
                          for update skip locked)
             returning id",
            &[&secs, &limit],
        )
        .await?;
    rows.iter().map(|r| r.try_get(0).map_err(Into::into)).collect()
}

/// How many batches wait, and when the oldest of them arrived.
pub async fn backlog(db: &Db) -> Result<(i64, Option<DateTime<Utc>>)> {
    let client = db.client().await?;
    let row = client
        .query_one(
            "select count(*), min(received_at) from sdk_batches where status = 'queued'",
            &[],
        )
        .await?;
    Ok((row.try_get(0)?, row.try_get(1)?))
}

/// A user's stored batches (oldest first), optionally only those received since `since`.
pub async fn ids_for_user(
    db: &Db,
    user_id: UserId,
    since: Option<DateTime<Utc>>,
) -> Result<Vec<BatchId>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "select id from sdk_batches where user_id = $1 and ($2::timestamptz is null or received_at >= $2)
             order by received_at, id",
            &[&user_id, &since],
        )
        .await?;
    rows.iter().map(|r| r.try_get(0).map_err(Into::into)).collect()
}
