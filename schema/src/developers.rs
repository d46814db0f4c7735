//! Developers: the people who operate a deployment and log in to its API.

use chrono::{DateTime, Utc};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::error::{Conflict, unique_violation};
use crate::{Db, Error, Result};

#[derive(Debug, Clone)]
pub struct Developer {
    pub id: Uuid,
    pub email: String,
    pub password_hash: String,
    /// Moved on by each password change: developer tokens carry it, and only the current one
    /// verifies.
    pub credential_version: i32,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

fn from_row(row: &Row) -> Result<Developer> {
    Ok(Developer {
        id: row.try_get("id")?,
        email: row.try_get("email")?,
        password_hash: row.try_get("password_hash")?,
        credential_version: row.try_get("credential_version")?,
        first_name: row.try_get("first_name")?,
        last_name: row.try_get("last_name")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub async fn get(db: &Db, id: Uuid) -> Result<Option<Developer>> {
    let client = db.client().await?;
    client
        .query_opt(&client.prepare_cached("select * from developers where id = $1").await?, &[&id])
        .await?
        .as_ref()
        .map(from_row)
        .transpose()
}

/// Email addresses are matched case-insensitively.
pub async fn find_by_email(db: &Db, email: &str) -> Result<Option<Developer>> {
    let client = db.client().await?;
    client
        .query_opt("select * from developers where lower(email) = lower($1)", &[&email])
        .await?
        .as_ref()
        .map(from_row)
        .transpose()
}

pub async fn count(db: &Db) -> Result<i64> {
    let client = db.client().await?;
    Ok(client.query_one("select count(*) from developers", &[]).await?.try_get(0)?)
}

/// Replaces a developer's password hash and moves their credential version on from `version`
/// (every token issued before stops working); returns the new version, or `None` when the
/// version is no longer `version` (another change came first).
pub async fn set_password(
    db: &Db,
    id: Uuid,
    password_hash: &str,
    version: i32,
) -> Result<Option<i32>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "update developers set password_hash = $2, updated_at = now(),
                 credential_version = credential_version + 1
             where id = $1 and credential_version = $3 returning credential_version",
            &[&id, &password_hash, &version],
        )
        .await?;
    row.map(|r| r.try_get(0)).transpose().map_err(Into::into)
}

pub async fn insert(db: &Db, email: &str, password_hash: &str) -> Result<Developer> {
    let client = db.client().await?;
    let row = client
        .query_one(
            "insert into developers (id, email, password_hash) values ($1, $2, $3) returning *",
            &[&Uuid::now_v7(), &email, &password_hash],
        )
        .await
        .map_err(|err| match unique_violation(&err) {
            Some("developers_email_key") => Error::Conflict(Conflict::DeveloperEmail),
            _ => Error::Db(err),
        })?;
    from_row(&row)
}
