//! Sync runs: one per ingest run (an SDK batch, an export import), with its counts and the
//! reasons items were dropped. The sync-status endpoints read them.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use serde_json::Value;
use uuid::Uuid;

use crate::{Db, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct SyncRun {
    pub id: Uuid,
    pub user_id: Uuid,
    pub provider: String,
    /// `sdk`, `xml_import`, …
    pub source: String,
    /// `queued`, `in_progress`, `success`, `partial` (some items dropped) or `failed`.
    pub status: String,
    pub stage: Option<String>,
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

/// What a finished (or failed) run reports.
#[derive(Debug, Clone)]
pub struct Finish<'a> {
    pub status: &'a str,
    pub message: &'a str,
    pub counts: &'a Value,
    pub dropped: &'a Value,
    pub error: Option<&'a str>,
    pub started_at: DateTime<Utc>,
}

/// Records the outcome of a run, creating the run when it does not exist yet.
pub async fn finish(
    client: &impl GenericClient,
    id: Uuid,
    user_id: Uuid,
    provider: &str,
    source: &str,
    f: &Finish<'_>,
) -> Result<SyncRun> {
    let row = client
        .query_one(
            "insert into sync_runs (id, user_id, provider, source, status, stage, message, counts,
                                    dropped, error, started_at, ended_at, updated_at)
             values ($1, $2, $3, $4, $5, 'completed', $6, $7, $8, $9, $10, now(), now())
             on conflict (id) do update set status = excluded.status, stage = excluded.stage,
                 message = excluded.message, counts = excluded.counts, dropped = excluded.dropped,
                 error = excluded.error, started_at = excluded.started_at,
                 ended_at = excluded.ended_at, updated_at = excluded.updated_at
             returning *",
            &[
                &id,
                &user_id,
                &provider,
                &source,
                &f.status,
                &f.message,
                &f.counts,
                &f.dropped,
                &f.error,
                &f.started_at,
            ],
        )
        .await?;
    from_row(&row)
}

/// Marks a run in progress, with what it has done so far.
pub async fn progress(
    client: &impl GenericClient,
    id: Uuid,
    user_id: Uuid,
    provider: &str,
    source: &str,
    message: &str,
    counts: &Value,
) -> Result<()> {
    client
        .execute(
            "insert into sync_runs (id, user_id, provider, source, status, stage, message, counts,
                                    started_at, updated_at)
             values ($1, $2, $3, $4, 'in_progress', 'processing', $5, $6, now(), now())
             on conflict (id) do update set status = 'in_progress', stage = 'processing',
                 message = excluded.message, counts = excluded.counts,
                 started_at = coalesce(sync_runs.started_at, excluded.started_at),
                 updated_at = now()",
            &[&id, &user_id, &provider, &source, &message, counts],
        )
        .await?;
    Ok(())
}

/// A user's runs updated within `hours`, newest first.
pub async fn recent_for_user(
    db: &Db,
    user_id: Uuid,
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
