//! Exports of a user's whole record: a job (`queued` → `processing` → `done` | `failed`), its
//! sync run (the same id, source `export`), and, when done, the archive's key in object
//! storage, its size and what it holds. An export expires: the sweep deletes its object, then
//! the row.

use chrono::{DateTime, Utc};
use postgres_types::{FromSql, ToSql};
use serde::Serialize;
use uuid::Uuid;

use crate::ids::ExportId;
use crate::ids::UserId;
use crate::sync_runs::{self, Finish, RunSource, RunStatus, SyncRun};
use crate::{Db, Result};

/// The provider an export's sync run is recorded under: the service itself.
pub const PROVIDER: &str = "internal";

/// Exports of one user waiting or running at once; a request past it is refused.
pub(crate) const IN_FLIGHT_PER_USER: i64 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSql, FromSql, Serialize)]
#[postgres(name = "export_status", rename_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum ExportStatus {
    Queued,
    Processing,
    Done,
    Failed,
}

/// What an archive holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ExportCounts {
    pub samples: i64,
    pub workouts: i64,
    pub sleep_sessions: i64,
    pub menstrual_cycles: i64,
    pub fhir_resources: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    pub id: ExportId,
    pub user_id: UserId,
    pub status: ExportStatus,
    pub object_key: Option<String>,
    pub bytes: Option<i64>,
    /// Set when done.
    pub counts: Option<ExportCounts>,
    pub error: Option<String>,
    pub attempts: i32,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub expires_at: DateTime<Utc>,
}

fn from_row(r: &tokio_postgres::Row) -> Result<Export> {
    let samples: Option<i64> = r.try_get("samples")?;
    let counts = match samples {
        Some(samples) => Some(ExportCounts {
            samples,
            workouts: r.try_get::<_, Option<i64>>("workouts")?.unwrap_or(0),
            sleep_sessions: r.try_get::<_, Option<i64>>("sleep_sessions")?.unwrap_or(0),
            menstrual_cycles: r.try_get::<_, Option<i64>>("menstrual_cycles")?.unwrap_or(0),
            fhir_resources: r.try_get::<_, Option<i64>>("fhir_resources")?.unwrap_or(0),
        }),
        None => None,
    };
    Ok(Export {
        id: r.try_get("id")?,
        user_id: r.try_get("user_id")?,
        status: r.try_get("status")?,
        object_key: r.try_get("object_key")?,
        bytes: r.try_get("bytes")?,
        counts,
        error: r.try_get("error")?,
        attempts: r.try_get("attempts")?,
        created_at: r.try_get("created_at")?,
        finished_at: r.try_get("finished_at")?,
        expires_at: r.try_get("expires_at")?,
    })
}

/// What asking for an export did.
#[derive(Debug, Clone)]
pub enum Queued {
    Export(Export),
    /// No such user.
    NoUser,
    /// The user has [`IN_FLIGHT_PER_USER`] exports waiting or running already.
    Busy,
}

/// Queues an export of a user's record with its sync run, unless the user has
/// [`IN_FLIGHT_PER_USER`] in flight already; it expires `keep` after it is asked for.
pub async fn queue(db: &Db, user_id: UserId, keep: chrono::Duration) -> Result<Queued> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    // The user's row, locked: two requests at once count each other.
    if tx.query_opt("select 1 from users where id = $1 for update", &[&user_id]).await?.is_none() {
        return Ok(Queued::NoUser);
    }
    let waiting: i64 = tx
        .query_one(
            "select count(*) from exports where user_id = $1 and status in ($2, $3)",
            &[&user_id, &ExportStatus::Queued, &ExportStatus::Processing],
        )
        .await?
        .try_get(0)?;
    if waiting >= IN_FLIGHT_PER_USER {
        return Ok(Queued::Busy);
    }
    let id = Uuid::now_v7();
    let expires_at = Utc::now() + keep;
    let row = tx
        .query_one(
            "insert into exports (id, user_id, expires_at) values ($1, $2, $3) returning *",
            &[&id, &user_id, &expires_at],
        )
        .await?;
    let (status, source) = (RunStatus::Queued, RunSource::Export);
    tx.execute(
        "insert into sync_runs (id, user_id, provider, source, status, stage, message, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, 'Export queued', now(), now())",
        &[&id, &user_id, &PROVIDER, &source, &status, &status.stage()],
    )
    .await?;
    tx.commit().await?;
    Ok(Queued::Export(from_row(&row)?))
}

/// One export of a user.
pub async fn get(db: &Db, user_id: UserId, id: ExportId) -> Result<Option<Export>> {
    let client = db.client().await?;
    let row = client
        .query_opt("select * from exports where id = $1 and user_id = $2", &[&id, &user_id])
        .await?;
    row.as_ref().map(from_row).transpose()
}

/// A user's exports, newest first.
pub async fn list(db: &Db, user_id: UserId, limit: i64) -> Result<Vec<Export>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "select * from exports where user_id = $1 order by created_at desc limit $2",
            &[&user_id, &limit],
        )
        .await?;
    rows.iter().map(from_row).collect()
}

/// What claiming an export found.
#[derive(Debug)]
pub enum Claim {
    /// Taken (its attempt counted): make it.
    Claimed(Export),
    /// Taken `max_attempts` times and never settled: failed now, with its run.
    Parked(SyncRun),
    /// Done, failed, gone, or alive in another worker.
    Nothing,
}

/// Takes an export for making: a queued one, or one whose worker stopped sending heartbeats.
pub async fn claim(
    db: &Db,
    id: ExportId,
    stale_after: std::time::Duration,
    max_attempts: i32,
) -> Result<Claim> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let row = tx
        .query_opt(
            "select * from exports
             where id = $1 and (status = $2 or (status = $3
                   and heartbeat_at < now() - make_interval(secs => $4)))
             for update skip locked",
            &[&id, &ExportStatus::Queued, &ExportStatus::Processing, &stale_after.as_secs_f64()],
        )
        .await?;
    let Some(export) = row.as_ref().map(from_row).transpose()? else {
        return Ok(Claim::Nothing);
    };
    if export.attempts >= max_attempts {
        let error = format!(
            "the export was taken {} times and never finished (its worker stopped); it is not \
             tried again",
            export.attempts
        );
        let run = settle_in(&tx, &export, &Settled::Failed { error }).await?;
        tx.commit().await?;
        return Ok(run.map_or(Claim::Nothing, Claim::Parked));
    }
    let row = tx
        .query_one(
            "update exports set status = $2, attempts = attempts + 1, heartbeat_at = now()
             where id = $1 returning *",
            &[&id, &ExportStatus::Processing],
        )
        .await?;
    sync_runs::progress_counted(
        &tx,
        id.0,
        export.user_id,
        PROVIDER,
        RunSource::Export,
        "Export started",
        &serde_json::json!({}),
    )
    .await?;
    tx.commit().await?;
    Ok(Claim::Claimed(from_row(&row)?))
}

/// Shows other workers the export is alive, with what it has written so far on its run (the
/// run as it is now).
pub async fn heartbeat(db: &Db, export: &Export, so_far: &ExportCounts) -> Result<SyncRun> {
    let client = db.client().await?;
    client.execute("update exports set heartbeat_at = now() where id = $1", &[&export.id]).await?;
    let counts = serde_json::to_value(so_far).unwrap_or_default();
    let message = format!("Export running: {} samples written", so_far.samples);
    sync_runs::progress_counted(
        &client,
        export.id.0,
        export.user_id,
        PROVIDER,
        RunSource::Export,
        &message,
        &counts,
    )
    .await
}

/// How a claimed export ended.
#[derive(Debug, Clone)]
pub enum Settled {
    Done {
        object_key: String,
        bytes: i64,
        counts: ExportCounts,
        started_at: DateTime<Utc>,
    },
    Failed {
        error: String,
    },
    /// Stopped on an error a later attempt can get past.
    Retry {
        error: String,
    },
}

/// Records how a claimed export ended, with its run, in one transaction; the run when final.
pub async fn settle(db: &Db, export: &Export, settled: &Settled) -> Result<Option<SyncRun>> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let run = settle_in(&tx, export, settled).await?;
    tx.commit().await?;
    Ok(run)
}

async fn settle_in(
    tx: &deadpool_postgres::Transaction<'_>,
    export: &Export,
    settled: &Settled,
) -> Result<Option<SyncRun>> {
    let (id, user_id) = (export.id, export.user_id);
    let finish = |status, message: String, error: Option<String>, started_at| Finish {
        status,
        message,
        counts: None,
        dropped: serde_json::json!({}),
        error,
        started_at,
    };
    let (f, counts) = match settled {
        Settled::Done { object_key, bytes, counts, started_at } => {
            tx.execute(
                "update exports set status = $2, object_key = $3, bytes = $4, samples = $5,
                     workouts = $6, sleep_sessions = $7, menstrual_cycles = $8,
                     fhir_resources = $9, error = null, finished_at = now()
                 where id = $1",
                &[
                    &id,
                    &ExportStatus::Done,
                    object_key,
                    bytes,
                    &counts.samples,
                    &counts.workouts,
                    &counts.sleep_sessions,
                    &counts.menstrual_cycles,
                    &counts.fhir_resources,
                ],
            )
            .await?;
            let message = format!("Export done: {} samples, {bytes} bytes", counts.samples);
            let f = finish(RunStatus::Success, message, None, *started_at);
            (f, serde_json::to_value(counts).unwrap_or_default())
        }
        Settled::Failed { error } => {
            tx.execute(
                "update exports set status = $2, error = $3, finished_at = now() where id = $1",
                &[&id, &ExportStatus::Failed, error],
            )
            .await?;
            let f =
                finish(RunStatus::Failed, "Export failed".into(), Some(error.clone()), Utc::now());
            (f, serde_json::json!({}))
        }
        Settled::Retry { error } => {
            tx.execute(
                "update exports set status = $2, error = $3 where id = $1",
                &[&id, &ExportStatus::Queued, error],
            )
            .await?;
            sync_runs::requeue(tx, id.0, "Export interrupted; it will be tried again", error)
                .await?;
            return Ok(None);
        }
    };
    let run =
        sync_runs::finish_counted(tx, id.0, user_id, PROVIDER, RunSource::Export, &f, &counts)
            .await?;
    Ok(Some(run))
}

/// Exports waiting (queued, or processing without a heartbeat for `stale_after`) last announced
/// more than `older_than` ago, marked as announced now.
pub async fn take_unannounced(
    db: &Db,
    older_than: std::time::Duration,
    stale_after: std::time::Duration,
    limit: i64,
) -> Result<Vec<ExportId>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "update exports set announced_at = now()
             where id in (select id from exports
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
                &ExportStatus::Queued,
                &ExportStatus::Processing,
            ],
        )
        .await?;
    rows.iter().map(|r| r.try_get(0).map_err(Into::into)).collect()
}

/// Exports past their expiry, oldest first: `(id, object key)` for the sweep to delete.
pub async fn expired(db: &Db, limit: i64) -> Result<Vec<(ExportId, Option<String>)>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "select id, object_key from exports where expires_at < now()
             order by expires_at limit $1",
            &[&limit],
        )
        .await?;
    rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
}

/// Forgets an expired export (its object deleted first).
pub async fn forget(db: &Db, id: ExportId) -> Result<()> {
    let client = db.client().await?;
    client.execute("delete from exports where id = $1", &[&id]).await?;
    Ok(())
}
