//! Sync runs: one per run of a job (an SDK batch, an export import, a vendor pull, an export of a
//! user's record), with its counts and the reasons items were dropped. The sync-status endpoints
//! read them.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use postgres_types::{FromSql, ToSql};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::ids::UserId;
use crate::{Db, Result};

/// Where a run stands. `queued` → `in_progress` → `success` | `partial` | `failed`; an import
/// that will be retried goes back to `queued`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ToSql, FromSql, Serialize)]
#[postgres(name = "run_status", rename_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Queued,
    InProgress,
    Success,
    /// Stored, with some items dropped.
    Partial,
    Failed,
}

impl RunStatus {
    /// A run that stored what it could: `partial` when it dropped items for a fault of theirs
    /// (`problems`: ingest's `Report::problem_count`), else `success`.
    pub fn completed(problems: u64) -> RunStatus {
        if problems == 0 { RunStatus::Success } else { RunStatus::Partial }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::InProgress => "in_progress",
            RunStatus::Success => "success",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
        }
    }

    /// The stage a run in this status is at.
    pub fn stage(self) -> RunStage {
        match self {
            RunStatus::Queued => RunStage::Queued,
            RunStatus::InProgress => RunStage::Processing,
            RunStatus::Success | RunStatus::Partial | RunStatus::Failed => RunStage::Completed,
        }
    }
}

/// The coarse stage of a run, as the sync-status events name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ToSql, FromSql, Serialize)]
#[postgres(name = "run_stage", rename_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum RunStage {
    Queued,
    Processing,
    Completed,
}

impl RunStage {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStage::Queued => "queued",
            RunStage::Processing => "processing",
            RunStage::Completed => "completed",
        }
    }
}

/// What produced a run (stored as its text in `sync_runs.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunSource {
    Sdk,
    XmlImport,
    /// A pull from a cloud vendor.
    Pull,
    /// An export of the user's record (`exports`).
    Export,
}

impl RunSource {
    /// Every source, as `parse` knows them.
    const ALL: [RunSource; 4] =
        [RunSource::Sdk, RunSource::XmlImport, RunSource::Pull, RunSource::Export];

    pub fn as_str(self) -> &'static str {
        match self {
            RunSource::Sdk => "sdk",
            RunSource::XmlImport => "xml_import",
            RunSource::Pull => "pull",
            RunSource::Export => "export",
        }
    }

    fn parse(s: &str) -> Option<RunSource> {
        RunSource::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl ToSql for RunSource {
    fn to_sql(
        &self,
        ty: &postgres_types::Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<postgres_types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        self.as_str().to_sql(ty, out)
    }

    postgres_types::accepts!(TEXT, VARCHAR);
    postgres_types::to_sql_checked!();
}

impl<'a> FromSql<'a> for RunSource {
    fn from_sql(
        ty: &postgres_types::Type,
        raw: &'a [u8],
    ) -> std::result::Result<RunSource, Box<dyn std::error::Error + Sync + Send>> {
        let text = <&str as FromSql>::from_sql(ty, raw)?;
        RunSource::parse(text)
            .ok_or_else(|| format!("a run source this build does not know: {text}").into())
    }

    postgres_types::accepts!(TEXT, VARCHAR);
}

#[derive(Debug, Clone, PartialEq)]
pub struct SyncRun {
    pub id: Uuid,
    pub user_id: UserId,
    pub provider: String,
    pub source: RunSource,
    pub status: RunStatus,
    pub stage: Option<RunStage>,
    pub message: Option<String>,
    pub counts: Value,
    pub dropped: Value,
    pub error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
    pub updated_at: DateTime<Utc>,
}

pub(crate) fn from_row(row: &tokio_postgres::Row) -> Result<SyncRun> {
    Ok(SyncRun {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        provider: row.try_get("provider")?,
        source: row.try_get("source")?,
        status: row.try_get("status")?,
        stage: row.try_get("stage")?,
        message: row.try_get("message")?,
        counts: row.try_get("counts")?,
        dropped: row.try_get("dropped")?,
        error: row.try_get("error")?,
        created_at: row.try_get("created_at")?,
        started_at: row.try_get("started_at")?,
        ended_at: row.try_get("ended_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// What a run counted, stored as its `counts` (a JSON object whose keys are these fields'
/// names; the SQL that sums a key names it through a constant below, tested against this).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RunCounts {
    /// Items received, by kind.
    pub received: BTreeMap<&'static str, u64>,
    pub dropped: u64,
    pub samples_inserted: i64,
    pub samples_updated: i64,
    pub samples_unchanged: i64,
    pub workouts_saved: u64,
    pub workouts_duplicate: u64,
    pub workouts_updated: u64,
    pub sleep_sessions_saved: u64,
    pub sleep_sessions_unchanged: u64,
    /// An export import's own counts, beside the others.
    #[serde(flatten)]
    pub import: Option<ImportCounts>,
}

/// What only an export import counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ImportCounts {
    /// Bytes of the export read.
    pub bytes: u64,
    pub chunks: u64,
    pub menstrual_cycles_saved: u64,
    pub workout_routes_saved: u64,
}

/// The key of [`RunCounts::samples_inserted`] in a stored run's `counts`.
pub(crate) const SAMPLES_INSERTED: &str = "samples_inserted";

/// A run's `counts` as stored: `{}` for a run that counted nothing (it failed first, or has only
/// started).
fn counts_json(counts: Option<&RunCounts>) -> Value {
    counts
        .and_then(|c| serde_json::to_value(c).ok())
        .unwrap_or_else(|| Value::Object(Default::default()))
}

/// What a finished (or failed) run reports.
#[derive(Debug, Clone)]
pub struct Finish {
    /// A final status (`success`, `partial` or `failed`).
    pub status: RunStatus,
    pub message: String,
    /// `None`: the run failed before it counted anything.
    pub counts: Option<RunCounts>,
    pub dropped: Value,
    pub error: Option<String>,
    pub started_at: DateTime<Utc>,
}

/// Records the outcome of a run, creating the run when it does not exist yet.
pub async fn finish(
    client: &impl GenericClient,
    id: Uuid,
    user_id: UserId,
    provider: &str,
    source: RunSource,
    f: &Finish,
) -> Result<SyncRun> {
    finish_counted(client, id, user_id, provider, source, f, &counts_json(f.counts.as_ref())).await
}

/// [`finish`] for a run that counts other things than ingest does (an export): `counts` is
/// stored as given, `f.counts` is not read.
pub(crate) async fn finish_counted(
    client: &impl GenericClient,
    id: Uuid,
    user_id: UserId,
    provider: &str,
    source: RunSource,
    f: &Finish,
    counts: &Value,
) -> Result<SyncRun> {
    let statement = client
        .prepare_cached(
            "insert into sync_runs (id, user_id, provider, source, status, stage, message, counts,
                                    dropped, error, started_at, ended_at, updated_at)
             values ($1, $2, $3, $4, $5, $11, $6, $7, $8, $9, $10, now(), now())
             on conflict (id) do update set provider = excluded.provider,
                 status = excluded.status, stage = excluded.stage, message = excluded.message,
                 counts = excluded.counts, dropped = excluded.dropped, error = excluded.error,
                 started_at = excluded.started_at, ended_at = excluded.ended_at,
                 updated_at = excluded.updated_at
             returning *",
        )
        .await?;
    let row = client
        .query_one(
            &statement,
            &[
                &id,
                &user_id,
                &provider,
                &source,
                &f.status,
                &f.message,
                &counts,
                &f.dropped,
                &f.error,
                &f.started_at,
                &f.status.stage(),
            ],
        )
        .await?;
    from_row(&row)
}

/// Marks a run in progress, with what it has done so far.
pub async fn progress(
    client: &impl GenericClient,
    id: Uuid,
    user_id: UserId,
    provider: &str,
    source: RunSource,
    message: &str,
    counts: Option<&RunCounts>,
) -> Result<()> {
    progress_counted(client, id, user_id, provider, source, message, &counts_json(counts)).await?;
    Ok(())
}

/// [`progress`] with counts of a run's own (an export's), stored as given.
pub(crate) async fn progress_counted(
    client: &impl GenericClient,
    id: Uuid,
    user_id: UserId,
    provider: &str,
    source: RunSource,
    message: &str,
    counts: &Value,
) -> Result<SyncRun> {
    let status = RunStatus::InProgress;
    let row = client
        .query_one(
            "insert into sync_runs (id, user_id, provider, source, status, stage, message, counts,
                                    started_at, updated_at)
             values ($1, $2, $3, $4, $7, $8, $5, $6, now(), now())
             on conflict (id) do update set provider = excluded.provider,
                 status = excluded.status, stage = excluded.stage, message = excluded.message, counts = excluded.counts,
                 started_at = coalesce(sync_runs.started_at, excluded.started_at),
                 updated_at = now()
             returning *",
            &[
                &id,
                &user_id,
                &provider,
                &source,
                &message,
                &counts,
                &status,
                &status.stage(),
            ],
        )
        .await?;
    from_row(&row)
}

/// Puts a run back in the queue: its work stopped on an error that a later attempt can get
/// past. The run is not final, so no terminal event is sent for it.
pub async fn requeue(
    client: &impl GenericClient,
    id: Uuid,
    message: &str,
    error: &str,
) -> Result<()> {
    let status = RunStatus::Queued;
    client
        .execute(
            "update sync_runs set status = $2, stage = $3, message = $4, error = $5,
                 ended_at = null, updated_at = now()
             where id = $1",
            &[&id, &status, &status.stage(), &message, &error],
        )
        .await?;
    Ok(())
}

/// A user's runs updated within `hours`, newest first.
pub async fn recent_for_user(
    db: &Db,
    user_id: UserId,
    hours: i32,
    limit: i64,
) -> Result<Vec<SyncRun>> {
    let client = db.client().await?;
    client
        .query(
            "select * from sync_runs where user_id = $1 and updated_at > now() - make_interval(hours => $2)
             order by updated_at desc, id desc limit $3",
            &[&user_id, &hours, &limit],
        )
        .await?
        .iter()
        .map(from_row)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The SQL that sums inserted samples names the key the counts are written under.
    #[test]
    fn the_summed_key_is_the_fields_name() {
        let counts = RunCounts { samples_inserted: 7, ..RunCounts::default() };
        assert_eq!(counts_json(Some(&counts))[SAMPLES_INSERTED], 7);
        assert_eq!(counts_json(None), json!({}));
        let import = ImportCounts { bytes: 10, ..ImportCounts::default() };
        let counts = RunCounts { import: Some(import), ..RunCounts::default() };
        assert_eq!(counts_json(Some(&counts))["bytes"], 10, "an import's own beside the others");
    }

    #[test]
    fn run_sources_read_back_as_written() {
        for source in RunSource::ALL {
            assert_eq!(RunSource::parse(source.as_str()), Some(source));
            assert_eq!(serde_json::to_value(source).ok(), Some(json!(source.as_str())));
        }
        assert_eq!(RunSource::parse("export"), Some(RunSource::Export));
        assert_eq!(RunSource::parse("ftp"), None);
    }
}
