//! The application's end users.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::connections::HAS_ACTIVE;
use crate::error::{Conflict, unique_violation};
use crate::ids::UserId;
use crate::{Db, Error, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct User {
    pub id: UserId,
    pub email: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub external_user_id: Option<String>,
    pub last_synced_at: Option<DateTime<Utc>>,
    pub last_synced_provider: Option<String>,
    pub has_active_connection: bool,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Default)]
pub struct NewUser {
    pub email: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub external_user_id: Option<String>,
}

/// A partial update: `None` leaves a field as it is, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct UserPatch {
    pub email: Option<Option<String>>,
    pub first_name: Option<Option<String>>,
    pub last_name: Option<Option<String>>,
    pub external_user_id: Option<Option<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortBy {
    #[default]
    CreatedAt,
    Email,
    FirstName,
    LastName,
    LastSyncedAt,
}

impl SortBy {
    pub const NAMES: &'static [&'static str] =
        &["created_at", "email", "first_name", "last_name", "last_synced_at"];

    pub fn parse(name: &str) -> Option<SortBy> {
        Some(match name {
            "created_at" => SortBy::CreatedAt,
            "email" => SortBy::Email,
            "first_name" => SortBy::FirstName,
            "last_name" => SortBy::LastName,
            "last_synced_at" => SortBy::LastSyncedAt,
            _ => return None,
        })
    }

    fn column(self) -> &'static str {
        match self {
            SortBy::CreatedAt => "u.created_at",
            SortBy::Email => "u.email",
            SortBy::FirstName => "u.first_name",
            SortBy::LastName => "u.last_name",
            SortBy::LastSyncedAt => "u.last_synced_at",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    /// 1-based.
    pub page: i64,
    pub limit: i64,
    /// Case-insensitive substring of email, first or last name.
    pub search: Option<String>,
    pub email: Option<String>,
    pub external_user_id: Option<String>,
    pub sort_by: SortBy,
    pub descending: bool,
}

const COLUMNS: &str = "u.id, u.email, u.first_name, u.last_name, u.external_user_id,
    u.last_synced_at, u.last_synced_provider, u.created_at";

fn from_row(row: &Row) -> Result<User> {
    Ok(User {
        id: row.try_get("id")?,
        email: row.try_get("email")?,
        first_name: row.try_get("first_name")?,
        last_name: row.try_get("last_name")?,
        external_user_id: row.try_get("external_user_id")?,
        last_synced_at: row.try_get("last_synced_at")?,
        last_synced_provider: row.try_get("last_synced_provider")?,
        has_active_connection: row.try_get("has_active_connection")?,
        created_at: row.try_get("created_at")?,
    })
}

fn conflict(err: tokio_postgres::Error) -> Error {
    match unique_violation(&err) {
        Some("users_external_user_id_key") => Error::Conflict(Conflict::UserExternalId),
        _ => Error::Db(err),
    }
}

pub async fn insert(db: &Db, new: &NewUser) -> Result<User> {
    let client = db.client().await?;
    let sql = format!(
        "with u as (insert into users (id, email, first_name, last_name, external_user_id)
                    values ($1, $2, $3, $4, $5) returning *)
         select {COLUMNS}, {HAS_ACTIVE} as has_active_connection from u"
    );
    let row = client
        .query_one(
            &sql,
            &[
                &UserId(Uuid::now_v7()),
                &new.email,
                &new.first_name,
                &new.last_name,
                &new.external_user_id,
            ],
        )
        .await
        .map_err(conflict)?;
    from_row(&row)
}

pub async fn get(db: &Db, id: UserId) -> Result<Option<User>> {
    let client = db.client().await?;
    let sql = format!(
        "select {COLUMNS}, {HAS_ACTIVE} as has_active_connection from users u where u.id = $1"
    );
    client.query_opt(&sql, &[&id]).await?.as_ref().map(from_row).transpose()
}

pub async fn exists(db: &Db, id: UserId) -> Result<bool> {
    exists_with(&db.client().await?, id).await
}

pub(crate) async fn exists_with(client: &impl GenericClient, id: UserId) -> Result<bool> {
    let stmt = client.prepare_cached("select exists (select 1 from users where id = $1)").await?;
    let row = client.query_one(&stmt, &[&id]).await?;
    Ok(row.try_get(0)?)
}

/// How a writer of a user's data holds the user's row until its transaction ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriterLock {
    /// One writer at a time (`for no key update`): rollup recounts and sleep merges see no
    /// other writer of the user.
    Exclusive,
    /// Beside other shared writers, never beside an exclusive one (`for share`): writers that
    /// only add new samples.
    Shared,
}

/// Locks the user's row for a writer, per `lock`; the user's last known zone offset (the
/// default for samples sent without one), or `None` when the user is gone.
pub async fn lock_for_writing(
    client: &impl deadpool_postgres::GenericClient,
    id: UserId,
    lock: WriterLock,
) -> Result<Option<Option<i16>>> {
    let sql = match lock {
        WriterLock::Exclusive => {
            "select last_zone_offset from users where id = $1 for no key update"
        }
        WriterLock::Shared => "select last_zone_offset from users where id = $1 for share",
    };
    let row = client.query_opt(&client.prepare_cached(sql).await?, &[&id]).await?;
    row.map(|r| r.try_get(0)).transpose().map_err(Into::into)
}

/// Notes a sync on the user: when, from which provider, and the zone offset it told (if any).
pub async fn record_sync(
    client: &impl deadpool_postgres::GenericClient,
    id: UserId,
    provider: &str,
    zone_offset: Option<i16>,
) -> Result<()> {
    client
        .execute(
            "update users set last_synced_at = now(), last_synced_provider = $2,
                 last_zone_offset = coalesce($3, last_zone_offset)
             where id = $1",
            &[&id, &provider, &zone_offset],
        )
        .await?;
    Ok(())
}

/// One page of users and the number of users matching the filters.
pub async fn list(db: &Db, q: &ListQuery) -> Result<(Vec<User>, i64)> {
    let client = db.client().await?;
    let pattern = q.search.as_deref().map(|s| format!("%{}%", escape_like(s)));
    let filter =
        "($1::text is null or u.email ilike $1 or u.first_name ilike $1 or u.last_name ilike $1
          or u.external_user_id ilike $1 or u.id::text ilike $1)
        and ($2::text is null or u.email = $2)
        and ($3::text is null or u.external_user_id = $3)";
    let order = if q.descending { "desc" } else { "asc" };
    let nulls = if q.descending { "nulls last" } else { "nulls first" };
    let sql = format!(
        "select {COLUMNS}, {HAS_ACTIVE} as has_active_connection from users u where {filter}
         order by {col} {order} {nulls}, u.id {order} limit $4 offset $5",
        col = q.sort_by.column()
    );
    let offset = (q.page - 1).saturating_mul(q.limit);
    let rows =
        client.query(&sql, &[&pattern, &q.email, &q.external_user_id, &q.limit, &offset]).await?;
    let total: i64 = client
        .query_one(
            &format!("select count(*) from users u where {filter}"),
            &[&pattern, &q.email, &q.external_user_id],
        )
        .await?
        .try_get(0)?;
    let users = rows.iter().map(from_row).collect::<Result<_>>()?;
    Ok((users, total))
}

/// Applies a partial update; `None` when there is no such user.
pub async fn update(db: &Db, id: UserId, patch: &UserPatch) -> Result<Option<User>> {
    let client = db.client().await?;
    let sql = format!(
        "with u as (update users set
             email = case when $2 then $3 else email end,
             first_name = case when $4 then $5 else first_name end,
             last_name = case when $6 then $7 else last_name end,
             external_user_id = case when $8 then $9 else external_user_id end,
             updated_at = now()
           where id = $1 returning *)
         select {COLUMNS}, {HAS_ACTIVE} as has_active_connection from u"
    );
    let (email_set, email) = split(&patch.email);
    let (first_set, first) = split(&patch.first_name);
    let (last_set, last) = split(&patch.last_name);
    let (ext_set, ext) = split(&patch.external_user_id);
    let row = client
        .query_opt(
            &sql,
            &[&id, &email_set, &email, &first_set, &first, &last_set, &last, &ext_set, &ext],
        )
        .await
        .map_err(conflict)?;
    row.as_ref().map(from_row).transpose()
}

/// Where a user's objects live in the bucket (`<user>/raw/...`).
pub fn object_prefix(id: UserId) -> String {
    format!("{id}/")
}

/// Deletes a user and every row of theirs in one transaction, and records their prefix in
/// object storage for emptying (`object_deletions`); returns the user as it was.
pub async fn delete(db: &Db, id: UserId) -> Result<Option<User>> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let sql = format!(
        "select {COLUMNS}, {HAS_ACTIVE} as has_active_connection from users u where u.id = $1 for update"
    );
    let Some(row) = tx.query_opt(&sql, &[&id]).await? else {
        return Ok(None);
    };
    let user = from_row(&row)?;
    // The tables without a foreign key to the user (bulk-written or kept past their rows),
    // then the user, which cascades to every other. The outbox goes first: deleting its rows
    // waits for a dispatcher holding them, and the messages it made are deleted after.
    for table in [
        "outbox",
        "webhook_messages",
        "daily_rollups",
        "hourly_rollups",
        "utc_day_rollups",
        "samples",
        "sample_blocks",
        "block_repacks",
    ] {
        tx.execute(&format!("delete from {table} where user_id = $1"), &[&id]).await?;
    }
    crate::object_deletions::request(&tx, &object_prefix(id)).await?;
    tx.execute("delete from users where id = $1", &[&id]).await?;
    tx.commit().await?;
    Ok(Some(user))
}

fn split(field: &Option<Option<String>>) -> (bool, Option<&str>) {
    match field {
        None => (false, None),
        Some(value) => (true, value.as_deref()),
    }
}

/// Escapes LIKE metacharacters so a search term matches literally.
fn escape_like(term: &str) -> String {
    let mut out = String::with_capacity(term.len());
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_metacharacters_are_escaped() {
        assert_eq!(escape_like("50%_a\\b"), "50\\%\\_a\\\\b");
        assert_eq!(escape_like("plain"), "plain");
    }

    #[test]
    fn sort_names_round_trip() {
        for name in SortBy::NAMES {
            assert!(SortBy::parse(name).is_some(), "{name}");
        }
        assert_eq!(SortBy::parse("id"), None);
    }
}
