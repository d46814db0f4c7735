//! Imports of uploaded exports. An import's id is the task id and the sync run id. One object
//! (bucket, key, ETag) is imported at most once, whichever route announced it.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{Db, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub id: Uuid,
    pub user_id: Uuid,
    pub bucket: String,
    pub object_key: String,
    pub etag: String,
    pub size: Option<i64>,
    pub origin: String,
    pub status: String,
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
    pub user_id: Uuid,
    pub bucket: &'a str,
    pub key: &'a str,
    pub etag: &'a str,
    pub size: Option<i64>,
    pub origin: &'a str,
}

/// Queues an import with its sync run, unless this object was queued before. Returns the new
/// import's id, or `None` for an object already imported (or being imported).
pub async fn queue(db: &Db, n: &NewImport<'_>) -> Result<Option<Uuid>> {
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
             select id, user_id, 'phonehealth', 'xml_import', 'queued', 'queued', 'Export received', created_at, created_at
             from i
             returning id",
            &[&id, &n.user_id, &n.bucket, &n.key, &n.etag, &n.size, &n.origin],
        )
        .await?;
    Ok(row.map(|_| id))
}

/// The import of this object, if it was queued.
pub async fn find(db: &Db, bucket: &str, key: &str, etag: &str) -> Result<Option<Uuid>> {
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
pub async fn find_by_key(db: &Db, bucket: &str, key: &str) -> Result<Option<Uuid>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "select id from imports where bucket = $1 and object_key = $2 order by created_at desc limit 1",
            &[&bucket, &key],
        )
        .await?;
    row.map(|r| r.try_get(0)).transpose().map_err(Into::into)
}

/// Takes an import for processing: a queued one, or one whose worker stopped sending
/// heartbeats. `None` when it is done, failed, gone, or alive in another worker.
pub async fn claim(db: &Db, id: Uuid, stale_after: std::time::Duration) -> Result<Option<Import>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "update imports set status = 'processing', attempts = attempts + 1, heartbeat_at = now()
             where id = $1 and (status = 'queued' or (status = 'processing'
                   and heartbeat_at < now() - make_interval(secs => $2)))
             returning *",
            &[&id, &stale_after.as_secs_f64()],
        )
        .await?;
    row.as_ref().map(from_row).transpose()
}

pub async fn heartbeat(db: &Db, id: Uuid) -> Result<()> {
    let client = db.client().await?;
    client.execute("update imports set heartbeat_at = now() where id = $1", &[&id]).await?;
    Ok(())
}

/// Marks an import finished (`done` or `failed`), or back to `queued` for a later attempt.
pub async fn set_status(db: &Db, id: Uuid, status: &str, error: Option<&str>) -> Result<()> {
    let client = db.client().await?;
    client
        .execute(
            "update imports set status = $2, error = $3,
                 finished_at = case when $2 in ('done', 'failed') then now() else finished_at end
             where id = $1",
            &[&id, &status, &error],
        )
        .await?;
    Ok(())
}

/// Imports waiting (queued, or processing without a heartbeat for `stale_after`) that were last
/// announced more than `older_than` ago, marked as announced now.
pub async fn take_unannounced(
    db: &Db,
    older_than: std::time::Duration,
    stale_after: std::time::Duration,
    limit: i64,
) -> Result<Vec<Uuid>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "update imports set announced_at = now()
             where id in (select id from imports
                          where announced_at < now() - make_interval(secs => $1)
                            and (status = 'queued' or (status = 'processing'
                                 and heartbeat_at < now() - make_interval(secs => $2)))
                          order by announced_at limit $3
                          for update skip locked)
             returning id",
            &[&older_than.as_secs_f64(), &stale_after.as_secs_f64(), &limit],
        )
        .await?;
    rows.iter().map(|r| r.try_get(0).map_err(Into::into)).collect()
}
