//! Imports of uploaded exports. An import's id is the task id and the sync run id. One object
//! (bucket, key, ETag) is imported at most once, whichever route announced it.

use chrono::{DateTime, Utc};
use postgres_types::{FromSql, ToSql};
use uuid::Uuid;

use crate::ids::ImportId;

use crate::ids::UserId;
use crate::sync_runs::{self, Finish, RunSource, RunStatus, SyncRun};
use crate::{Db, Result};

/// The provider every export import is recorded under.
pub const PROVIDER: &str = "phonehealth";

/// Where an import stands: `queued` → `processing` (claimed by a worker) → `done` or `failed`,
/// or back to `queued` when it stopped on an error a later attempt can get past.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSql, FromSql)]
#[postgres(name = "import_status", rename_all = "snake_case")]
pub enum ImportStatus {
    Queued,
    Processing,
    Done,
    Failed,
}

/// Which route announced the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSql, FromSql)]
#[postgres(name = "import_origin", rename_all = "snake_case")]
pub enum ImportOrigin {
    Multipart,
    BucketEvent,
    Direct,
    Cli,
}

/// How a claimed import ended: with its run's final report, or to be tried again.
#[derive(Debug, Clone)]
pub enum Settled {
    Finished(Box<Finish>),
    Retry { error: String },
}

impl Settled {
    /// The import's status afterwards.
    pub fn status(&self) -> ImportStatus {
        match self {
            Settled::Finished(f) if f.status == RunStatus::Failed => ImportStatus::Failed,
            Settled::Finished(_) => ImportStatus::Done,
            Settled::Retry { .. } => ImportStatus::Queued,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub id: ImportId,
    pub user_id: UserId,
    pub bucket: String,
    pub object_key: String,
    pub etag: String,
    pub size: Option<i64>,
    pub origin: ImportOrigin,
    pub status: ImportStatus,
    pub attempts: i32,
    pub created_at: DateTime<Utc>,
}

fn from_row(r: &tokio_postgres::Row) -> Result<Import> {
    Ok(Import {
        id: r.try_get("id")?,
        user_id: r.try_get("user_id")?,
        bucket: r.try_get("bucket")?,
        object_key: r.try_get("object_key")?,
        etag: r.try_get("etag")?,
        size: r.try_get("size")?,
        origin: r.try_get("origin")?,
        status: r.try_get("status")?,
        attempts: r.try_get("attempts")?,
        created_at: r.try_get("created_at")?,
    })
}

/// What to import.
#[derive(Debug, Clone)]
pub struct NewImport<'a> {
    pub user_id: UserId,
    pub bucket: &'a str,
    pub key: &'a str,
    pub etag: &'a str,
    pub size: Option<i64>,
    pub origin: ImportOrigin,
}

/// Queues an import with its sync run, unless this object was queued before. Returns the new
/// import's id, or `None` for an object already imported (or being imported).
pub async fn queue(db: &Db, n: &NewImport<'_>) -> Result<Option<ImportId>> {
    let client = db.client().await?;
    let id = Uuid::now_v7();
    let row = client
        .query_opt(
            "with i as (
                 insert into imports (id, user_id, bucket, object_key, etag, size, origin)
                 values ($1, $2, $3, $4, $5, $6, $7)
                 on conflict (bucket, object_key, etag) do nothing
                 returning id, user_id, created_at)
             insert into sync_runs (id, user_id, provider, source, status, stage, message, created_at, updated_at)
             select id, user_id, $8::text, $9::text, $10::run_status, $11::run_stage, 'Export received', created_at, created_at
             from i
             returning id",
            &[
                &id,
                &n.user_id,
                &n.bucket,
                &n.key,
                &n.etag,
                &n.size,
                &n.origin,
                &PROVIDER,
                &RunSource::XmlImport.as_str(),
                &RunStatus::Queued,
                &RunStatus::Queued.stage(),
            ],
        )
        .await?;
    Ok(row.map(|_| ImportId(id)))
}

/// The import of this object, if it was queued.
pub async fn find(db: &Db, bucket: &str, key: &str, etag: &str) -> Result<Option<ImportId>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "select id from imports where bucket = $1 and object_key = $2 and etag = $3",
            &[&bucket, &key, &etag],
        )
        .await?;
    row.map(|r| r.try_get(0)).transpose().map_err(Into::into)
}

/// The latest import of this key, whatever its ETag.
pub async fn find_by_key(db: &Db, bucket: &str, key: &str) -> Result<Option<ImportId>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "select id from imports where bucket = $1 and object_key = $2 order by created_at desc limit 1",
            &[&bucket, &key],
        )
        .await?;
    row.map(|r| r.try_get(0)).transpose().map_err(Into::into)
}

/// What claiming an import found.
#[derive(Debug)]
pub enum Claim {
    /// Taken for processing (its attempt counted): run it.
    Claimed(Import),
    /// It had been taken `max_attempts` times and never settled (its worker killed, out of
    /// memory, restarted): it is failed now, with its run, instead of being taken again.
    Parked(SyncRun),
    /// Done, failed, gone, or alive in another worker.
    Nothing,
}

/// Takes an import for processing: a queued one, or one whose worker stopped sending
/// heartbeats, counting the attempt when it is taken, so that an import that stops its worker
/// every time (a poison import) is parked as failed instead of being claimed forever.
pub async fn claim(
    db: &Db,
    id: ImportId,
    stale_after: std::time::Duration,
    max_attempts: i32,
) -> Result<Claim> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let row = tx
        .query_opt(
            "select * from imports
             where id = $1 and (status = $2 or (status = $3
                   and heartbeat_at < now() - make_interval(secs => $4)))
             for update skip locked",
            &[&id, &ImportStatus::Queued, &ImportStatus::Processing, &stale_after.as_secs_f64()],
        )
        .await?;
    let Some(import) = row.as_ref().map(from_row).transpose()? else {
        return Ok(Claim::Nothing);
    };
    if import.attempts >= max_attempts {
        let error = format!(
            "the import was taken {} times and never finished (its worker stopped: killed, out \
             of memory or restarted); it is not tried again",
            import.attempts
        );
        let finish = Finish {
            status: RunStatus::Failed,
            message: "Apple Health import failed".into(),
            counts: None,
            dropped: serde_json::json!({}),
            error: Some(error),
            started_at: Utc::now(),
        };
        let run = settle_in(&tx, id, import.user_id, &Settled::Finished(Box::new(finish))).await?;
        tx.commit().await?;
        return Ok(run.map_or(Claim::Nothing, Claim::Parked));
    }
    let row = tx
        .query_one(
            "update imports set status = $2, attempts = attempts + 1, heartbeat_at = now()
             where id = $1 returning *",
            &[&id, &ImportStatus::Processing],
        )
        .await?;
    tx.commit().await?;
    Ok(Claim::Claimed(from_row(&row)?))
}

pub async fn heartbeat(db: &Db, id: ImportId) -> Result<()> {
    let client = db.client().await?;
    client.execute("update imports set heartbeat_at = now() where id = $1", &[&id]).await?;
    Ok(())
}

/// Records how a claimed import ended, with its sync run, in one transaction: finished (`done`
/// or `failed`, the run final), or `queued` again for a later attempt (the run queued too).
/// Returns the run when it is final.
pub async fn settle(
    db: &Db,
    id: ImportId,
    user_id: UserId,
    settled: &Settled,
) -> Result<Option<SyncRun>> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let run = settle_in(&tx, id, user_id, settled).await?;
    tx.commit().await?;
    Ok(run)
}

async fn settle_in(
    tx: &deadpool_postgres::Transaction<'_>,
    id: ImportId,
    user_id: UserId,
    settled: &Settled,
) -> Result<Option<SyncRun>> {
    let status = settled.status();
    let (error, finished) = match settled {
        Settled::Finished(f) => (f.error.as_deref(), true),
        Settled::Retry { error } => (Some(error.as_str()), false),
    };
    tx.execute(
        "update imports set status = $2, error = $3,
             finished_at = case when $4 then now() else finished_at end
         where id = $1",
        &[&id, &status, &error, &finished],
    )
    .await?;
    Ok(match settled {
        Settled::Finished(f) => {
            Some(sync_runs::finish(tx, id.0, user_id, PROVIDER, RunSource::XmlImport, f).await?)
        }
        Settled::Retry { error } => {
            sync_runs::requeue(tx, id.0, "Import interrupted; it will be tried again", error)
                .await?;
            None
        }
    })
}

/// Imports waiting (queued, or processing without a heartbeat for `stale_after`) that were last
/// announced more than `older_than` ago, marked as announced now.
pub async fn take_unannounced(
    db: &Db,
    older_than: std::time::Duration,
    stale_after: std::time::Duration,
    limit: i64,
) -> Result<Vec<ImportId>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "update imports set announced_at = now()
             where id in (select id from imports
                          where announced_at < now() - make_interval(secs => $1)
                            and (status = $4 or (status = $5
                                 and heartbeat_at < now() - make_interval(secs => $2)))
                          order by announced_at limit $3
                          for update skip locked)
             returning id",
            &[
                &older_than.as_secs_f64(),
                &stale_after.as_secs_f64(),
                &limit,
                &ImportStatus::Queued,
                &ImportStatus::Processing,
            ],
        )
        .await?;
    rows.iter().map(|r| r.try_get(0).map_err(Into::into)).collect()
}
