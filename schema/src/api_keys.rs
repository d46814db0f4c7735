//! API keys of the integration API. Only a SHA-256 hash of each key is stored, with a short
//! prefix in clear so that listings can tell keys apart. Revoked keys stay (with `revoked_at`)
//! for the audit trail but no longer authenticate.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::{Db, Result, secret_hash};

/// What a key may do: one of the bits of [`Scopes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum Scope {
    /// Users and their data.
    Read = 1,
    /// Users, deletion of data, imports, syncs and connections.
    Write = 2,
    /// SDK tokens and invitation codes.
    Sdk = 4,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Write, Scope::Sdk];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Sdk => "sdk",
        }
    }

    pub fn parse(name: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// A key's scopes, stored as the sum of their bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scopes(i16);

impl Scopes {
    /// What keys made before scopes could do, and a new key's default.
    pub const ALL: Scopes = Scopes(7);

    pub fn of(scopes: impl IntoIterator<Item = Scope>) -> Scopes {
        Scopes(scopes.into_iter().fold(0, |bits, s| bits | s as i16))
    }

    pub fn has(self, scope: Scope) -> bool {
        self.0 & scope as i16 != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 & Scopes::ALL.0 == 0
    }

    /// In the order of [`Scope::ALL`].
    pub fn list(self) -> Vec<Scope> {
        Scope::ALL.into_iter().filter(|s| self.has(*s)).collect()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ApiKey {
    pub id: Uuid,
    pub name: String,
    pub prefix: String,
    pub created_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// When it last authenticated a call (to the minute).
    pub last_used_at: Option<DateTime<Utc>>,
    pub scopes: Scopes,
}

const COLUMNS: &str = "id, name, prefix, created_by, created_at, revoked_at, last_used_at, scopes";

fn from_row(row: &Row) -> Result<ApiKey> {
    Ok(ApiKey {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        prefix: row.try_get("prefix")?,
        created_by: row.try_get("created_by")?,
        created_at: row.try_get("created_at")?,
        revoked_at: row.try_get("revoked_at")?,
        last_used_at: row.try_get("last_used_at")?,
        scopes: Scopes(row.try_get("scopes")?),
    })
}

/// A key to store: `key` is the full secret; only its hash and `prefix` are kept.
#[derive(Debug, Clone, Copy)]
pub struct NewKey<'a> {
    pub name: &'a str,
    pub key: &'a str,
    pub prefix: &'a str,
    pub scopes: Scopes,
    pub created_by: Option<Uuid>,
}

/// Stores a new key.
pub async fn insert(db: &Db, new: NewKey<'_>) -> Result<ApiKey> {
    insert_on(&db.client().await?, new).await
}

async fn insert_on(client: &impl GenericClient, new: NewKey<'_>) -> Result<ApiKey> {
    let sql = format!(
        "insert into api_keys (id, name, key_hash, prefix, created_by, scopes)
         values ($1, $2, $3, $4, $5, $6) returning {COLUMNS}"
    );
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 6] = [
        &Uuid::now_v7(),
        &new.name,
        &secret_hash(new.key),
        &new.prefix,
        &new.created_by,
        &new.scopes.0,
    ];
    from_row(&client.query_one(&sql, &params).await?)
}

/// The active key with this secret, if any.
pub async fn find_active(db: &Db, key: &str) -> Result<Option<ApiKey>> {
    let client = db.client().await?;
    let sql = format!("select {COLUMNS} from api_keys where key_hash = $1 and revoked_at is null");
    let stmt = client.prepare_cached(&sql).await?;
    client.query_opt(&stmt, &[&secret_hash(key)]).await?.as_ref().map(from_row).transpose()
}

/// How stale a key's `last_used_at` may grow before a call writes it again: one write a
/// minute per key at most, however busy the key.
pub(crate) const USE_RECORDED_EVERY_SECONDS: i64 = 60;

/// Whether a call by `key` should record its use now.
pub fn use_is_due(key: &ApiKey, now: DateTime<Utc>) -> bool {
    key.last_used_at.is_none_or(|t| (now - t).num_seconds() >= USE_RECORDED_EVERY_SECONDS)
}

/// Records that key `id` authenticated a call at `now` (if no other call did within the
/// minute, by the same clock and rule as [`use_is_due`]: one rule, the application's clock).
pub async fn record_use(db: &Db, id: Uuid, now: DateTime<Utc>) -> Result<()> {
    let client = db.client().await?;
    let stale = now - chrono::Duration::seconds(USE_RECORDED_EVERY_SECONDS);
    client
        .execute(
            "update api_keys set last_used_at = $2
             where id = $1 and (last_used_at is null or last_used_at <= $3)",
            &[&id, &now, &stale],
        )
        .await?;
    Ok(())
}

/// Active keys, newest first.
pub async fn list_active(db: &Db) -> Result<Vec<ApiKey>> {
    let client = db.client().await?;
    let sql = format!(
        "select {COLUMNS} from api_keys where revoked_at is null order by created_at desc, id desc"
    );
    client.query(&sql, &[]).await?.iter().map(from_row).collect()
}

pub async fn rename(db: &Db, id: Uuid, name: &str) -> Result<Option<ApiKey>> {
    let client = db.client().await?;
    let sql = format!(
        "update api_keys set name = $2 where id = $1 and revoked_at is null returning {COLUMNS}"
    );
    client.query_opt(&sql, &[&id, &name]).await?.as_ref().map(from_row).transpose()
}

/// Revokes an active key; returns it as revoked, or `None` if there was no active key.
pub async fn revoke(db: &Db, id: Uuid) -> Result<Option<ApiKey>> {
    let client = db.client().await?;
    let sql = format!(
        "update api_keys set revoked_at = now() where id = $1 and revoked_at is null
         returning {COLUMNS}"
    );
    client.query_opt(&sql, &[&id]).await?.as_ref().map(from_row).transpose()
}

/// Replaces an active key by a new one with the same name and scopes, in one transaction: the
/// old key stops working exactly when the new one starts. `None` if there was no active key.
pub async fn rotate(
    db: &Db,
    id: Uuid,
    new_key: &str,
    new_prefix: &str,
    created_by: Option<Uuid>,
) -> Result<Option<ApiKey>> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let Some(old) = tx
        .query_opt(
            "update api_keys set revoked_at = now() where id = $1 and revoked_at is null
             returning name, scopes",
            &[&id],
        )
        .await?
    else {
        return Ok(None);
    };
    let name: String = old.try_get(0)?;
    let scopes = Scopes(old.try_get(1)?);
    let new = NewKey { name: &name, key: new_key, prefix: new_prefix, scopes, created_by };
    let key = insert_on(&tx, new).await?;
    tx.commit().await?;
    Ok(Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keys_use_is_written_once_a_minute_at_most() {
        let now = Utc::now();
        let key = |last: Option<DateTime<Utc>>| ApiKey {
            id: Uuid::nil(),
            name: "k".into(),
            prefix: "sk-".into(),
            created_by: None,
            created_at: now,
            revoked_at: None,
            last_used_at: last,
            scopes: Scopes::ALL,
        };
        assert!(use_is_due(&key(None), now));
        assert!(!use_is_due(&key(Some(now - chrono::Duration::seconds(59))), now));
        assert!(use_is_due(&key(Some(now - chrono::Duration::seconds(60))), now));
    }

    #[test]
    fn scopes_are_bits_and_keys_before_scopes_have_all() {
        let rw = Scopes::of([Scope::Read, Scope::Write]);
        assert!(rw.has(Scope::Read) && rw.has(Scope::Write) && !rw.has(Scope::Sdk));
        assert_eq!(rw.list(), vec![Scope::Read, Scope::Write]);
        assert_eq!(Scopes::of(Scope::ALL), Scopes::ALL);
        assert!(Scopes::of([]).is_empty());
        assert_eq!(Scope::parse("sdk"), Some(Scope::Sdk));
        assert_eq!(Scope::parse("admin"), None);
    }
}
