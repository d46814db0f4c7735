//! Multipart uploads opened through the API: who may sign, complete or abort them.

use postgres_types::{FromSql, ToSql};
use uuid::Uuid;

use crate::ids::UserId;
use crate::{Db, Result};

/// `open` until the client completes it (`completed`) or aborts it (`aborted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSql, FromSql)]
#[postgres(name = "upload_status", rename_all = "snake_case")]
pub enum UploadStatus {
    Open,
    Completed,
    Aborted,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Upload {
    pub id: Uuid,
    pub user_id: UserId,
    pub object_key: String,
    pub upload_id: String,
    pub file_size: i64,
    pub part_size: i64,
    pub status: UploadStatus,
}

pub async fn insert(
    db: &Db,
    user_id: UserId,
    key: &str,
    upload_id: &str,
    file_size: i64,
    part_size: i64,
) -> Result<()> {
    let client = db.client().await?;
    client
        .execute(
            "insert into uploads (id, user_id, object_key, upload_id, file_size, part_size)
             values ($1, $2, $3, $4, $5, $6)",
            &[&Uuid::now_v7(), &user_id, &key, &upload_id, &file_size, &part_size],
        )
        .await?;
    Ok(())
}

pub async fn find(db: &Db, key: &str, upload_id: &str) -> Result<Option<Upload>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "select id, user_id, object_key, upload_id, file_size, part_size, status
             from uploads where object_key = $1 and upload_id = $2",
            &[&key, &upload_id],
        )
        .await?;
    row.map(|r| {
        Ok(Upload {
            id: r.try_get(0)?,
            user_id: r.try_get(1)?,
            object_key: r.try_get(2)?,
            upload_id: r.try_get(3)?,
            file_size: r.try_get(4)?,
            part_size: r.try_get(5)?,
            status: r.try_get(6)?,
        })
    })
    .transpose()
}

/// Marks an open upload completed.
pub async fn complete(db: &Db, id: Uuid) -> Result<()> {
    leave_open(db, id, UploadStatus::Completed).await
}

/// Marks an open upload aborted (a completed one stays completed).
pub async fn abort(db: &Db, id: Uuid) -> Result<()> {
    leave_open(db, id, UploadStatus::Aborted).await
}

async fn leave_open(db: &Db, id: Uuid, to: UploadStatus) -> Result<()> {
    let client = db.client().await?;
    client
        .execute(
            "update uploads set status = $2, updated_at = now() where id = $1 and status = $3",
            &[&id, &to, &UploadStatus::Open],
        )
        .await?;
    Ok(())
}
