//! A user's connections to providers.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use postgres_types::{FromSql, ToSql};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::ids::UserId;
use crate::{Db, Result};

/// Whether a connection delivers data: `active`, or no more (`revoked` by the user, `expired`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSql, FromSql)]
#[postgres(name = "connection_status", rename_all = "snake_case")]
pub enum ConnectionStatus {
    Active,
    Revoked,
    Expired,
}

const COLUMNS: &str = "id, user_id, provider, provider_user_id, provider_username, scope, status,
    last_synced_at, created_at, updated_at";

/// Whether the user `u` has an active connection (an SQL expression, spliced into other
/// statements, so its state is written out; `has_active_names_the_active_state` ties it to
/// [`ConnectionStatus::Active`]).
pub(crate) const HAS_ACTIVE: &str =
    "exists (select 1 from connections c where c.user_id = u.id and c.status = 'active')";

impl ConnectionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectionStatus::Active => "active",
            ConnectionStatus::Revoked => "revoked",
            ConnectionStatus::Expired => "expired",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Connection {
    pub id: Uuid,
    pub user_id: UserId,
    pub provider: String,
    pub provider_user_id: Option<String>,
    pub provider_username: Option<String>,
    pub scope: Option<String>,
    pub status: ConnectionStatus,
    pub last_synced_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

fn from_row(row: &Row) -> Result<Connection> {
    Ok(Connection {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        provider: row.try_get("provider")?,
        provider_user_id: row.try_get("provider_user_id")?,
        provider_username: row.try_get("provider_username")?,
        scope: row.try_get("scope")?,
        status: row.try_get("status")?,
        last_synced_at: row.try_get("last_synced_at")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub async fn list_for_user(db: &Db, user_id: UserId) -> Result<Vec<Connection>> {
    let client = db.client().await?;
    client
        .query(
            &format!("select {COLUMNS} from connections where user_id = $1 order by provider"),
            &[&user_id],
        )
        .await?
        .iter()
        .map(from_row)
        .collect()
}

/// What an OAuth round trip gives a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant<'a> {
    pub access_token: &'a str,
    pub refresh_token: Option<&'a str>,
    pub expires_at: Option<DateTime<Utc>>,
    pub scope: Option<&'a str>,
    pub provider_user_id: Option<&'a str>,
}

/// What a vendor token of connection (`user_id`, `provider`) is sealed for: it opens for that
/// connection only.
fn token_context(user_id: UserId, provider: &str, which: &str) -> String {
    format!("connections:{user_id}:{provider}:{which}")
}

/// Every active connection to `provider`: the user and the vendor's id of them.
pub async fn active_of(db: &Db, provider: &str) -> Result<Vec<(UserId, Option<String>)>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "select user_id, provider_user_id from connections
             where provider = $1 and status = $2 order by created_at",
            &[&provider, &ConnectionStatus::Active],
        )
        .await?;
    rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
}

/// Whether the vendor account `provider_user_id` is connected, and active, on a user other
/// than `user_id`.
pub async fn active_elsewhere(
    client: &impl GenericClient,
    provider: &str,
    provider_user_id: &str,
    user_id: UserId,
) -> Result<bool> {
    let row = client
        .query_opt(
            "select 1 from connections where provider = $1 and provider_user_id = $2
                 and status = $4 and user_id <> $3 limit 1",
            &[&provider, &provider_user_id, &user_id, &ConnectionStatus::Active],
        )
        .await?;
    Ok(row.is_some())
}

/// Stores a connection made (or made again) by OAuth, active, with its tokens sealed, and
/// (when `events`) a `connection.created` event in the same transaction when the user was not
/// connected to the provider before (or the connection had ended). Returns the connection and
/// whether it is newly active. A vendor account is active on one user at a time:
/// [`Conflict::VendorAccount`](crate::error::Conflict) when another has it (checked under a
/// lock on the account, so two connections at once cannot both take it).
pub async fn connect(
    db: &Db,
    keys: &crate::sealed::MasterKeys,
    user_id: UserId,
    provider: &str,
    grant: &Grant<'_>,
    events: bool,
) -> Result<(Connection, bool)> {
    let access = keys.seal(&token_context(user_id, provider, "access"), grant.access_token);
    let refresh =
        grant.refresh_token.map(|t| keys.seal(&token_context(user_id, provider, "refresh"), t));
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    if let Some(account) = grant.provider_user_id {
        tx.execute(
            "select pg_advisory_xact_lock(hashtextextended($1::text || ':' || $2::text, 30))",
            &[&provider, &account],
        )
        .await?;
        if active_elsewhere(&tx, provider, account, user_id).await? {
            return Err(crate::Error::Conflict(crate::error::Conflict::VendorAccount));
        }
    }
    let before: Option<ConnectionStatus> = tx
        .query_opt(
            "select status from connections where user_id = $1 and provider = $2 for update",
            &[&user_id, &provider],
        )
        .await?
        .map(|r| r.try_get(0))
        .transpose()?;
    let row = tx
        .query_one(
            &format!("insert into connections as c
                 (id, user_id, provider, provider_user_id, scope, access_token_sealed,
                  refresh_token_sealed, token_expires_at, status)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             on conflict (user_id, provider) do update set
                 provider_user_id = coalesce(excluded.provider_user_id, c.provider_user_id),
                 scope = excluded.scope,
                 access_token_sealed = excluded.access_token_sealed,
                 refresh_token_sealed = coalesce(excluded.refresh_token_sealed, c.refresh_token_sealed),
                 token_expires_at = excluded.token_expires_at,
                 status = excluded.status,
                 updated_at = now()
             returning {COLUMNS}"),
            &[
                &Uuid::now_v7(),
                &user_id,
                &provider,
                &grant.provider_user_id,
                &grant.scope,
                &access,
                &refresh,
                &grant.expires_at,
                &ConnectionStatus::Active,
            ],
        )
        .await?;
    let connection = from_row(&row)?;
    let newly_active = before != Some(ConnectionStatus::Active);
    if events && newly_active {
        let data = serde_json::json!({
            "user_id": user_id,
            "provider": provider,
            "connection_id": connection.id,
            "connected_at": crate::zone::local_time(connection.updated_at, None),
        });
        let event = crate::catalogue::event_types::SessionEvent::ConnectionCreated;
        crate::outbox::insert_session(&tx, event, user_id, data).await?;
    }
    tx.commit().await?;
    Ok((connection, newly_active))
}

/// Seals again every vendor token under an older key; returns how many connections changed.
pub(crate) async fn reseal(db: &Db, keys: &crate::sealed::MasterKeys) -> Result<u64> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let rows = tx
        .query(
            "select id, user_id, provider, access_token_sealed, refresh_token_sealed
             from connections
             where access_token_sealed is not null or refresh_token_sealed is not null
             for update",
            &[],
        )
        .await?;
    let mut n = 0;
    for row in rows {
        let (id, user_id, provider): (Uuid, UserId, String) =
            (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
        let tokens: [Option<String>; 2] = [row.try_get(3)?, row.try_get(4)?];
        if tokens.iter().flatten().all(|t| !keys.needs_sealing(t)) {
            continue;
        }
        let mut resealed = Vec::with_capacity(2);
        for (token, which) in tokens.iter().zip(["access", "refresh"]) {
            let context = token_context(user_id, &provider, which);
            let sealed = token
                .as_deref()
                .map(|t| keys.reseal(&context, t))
                .transpose()
                .map_err(|source| crate::Error::Sealed { what: context, source })?;
            resealed.push(sealed);
        }
        tx.execute(
            "update connections set access_token_sealed = $2, refresh_token_sealed = $3
             where id = $1",
            &[&id, &resealed[0], &resealed[1]],
        )
        .await?;
        n += 1;
    }
    tx.commit().await?;
    Ok(n)
}

/// Why a connection ended (`connection.revoked`'s `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevokeReason {
    /// The vendor refused to refresh the tokens.
    RefreshFailed,
    /// The user removed the app at the vendor.
    Deregistration,
    /// Disconnected through the API.
    UserDisconnected,
}

impl RevokeReason {
    pub fn as_str(self) -> &'static str {
        match self {
            RevokeReason::RefreshFailed => "refresh_failed",
            RevokeReason::Deregistration => "deregistration",
            RevokeReason::UserDisconnected => "user_disconnected",
        }
    }
}

/// Ends a connection: `revoked`, tokens forgotten, and (when `events`) `connection.revoked` in
/// the same transaction if it was not already ended. `None` when there is no connection.
pub async fn revoke(
    db: &Db,
    user_id: UserId,
    provider: &str,
    reason: RevokeReason,
    events: bool,
) -> Result<Option<Connection>> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let Some(before) = tx
        .query_opt(
            "select status from connections where user_id = $1 and provider = $2 for update",
            &[&user_id, &provider],
        )
        .await?
    else {
        return Ok(None);
    };
    let before: ConnectionStatus = before.try_get(0)?;
    let row = tx
        .query_one(
            &format!(
                "update connections set status = $3, access_token_sealed = null,
                 refresh_token_sealed = null, token_expires_at = null, updated_at = now()
             where user_id = $1 and provider = $2
             returning {COLUMNS}"
            ),
            &[&user_id, &provider, &ConnectionStatus::Revoked],
        )
        .await?;
    let connection = from_row(&row)?;
    if events && before == ConnectionStatus::Active {
        let data = serde_json::json!({
            "user_id": user_id,
            "provider": provider,
            "connection_id": connection.id,
            "reason": reason.as_str(),
            "revoked_at": crate::zone::local_time(connection.updated_at, None),
        });
        let event = crate::catalogue::event_types::SessionEvent::ConnectionRevoked;
        crate::outbox::insert_session(&tx, event, user_id, data).await?;
    }
    tx.commit().await?;
    Ok(Some(connection))
}

/// The status of (`user_id`, `provider`)'s connection, if there is one.
pub async fn status(db: &Db, user_id: UserId, provider: &str) -> Result<Option<ConnectionStatus>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "select status from connections where user_id = $1 and provider = $2",
            &[&user_id, &provider],
        )
        .await?;
    row.map(|r| r.try_get(0)).transpose().map_err(Into::into)
}

/// A connection's tokens, opened, as held while they are being used or renewed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    pub status: ConnectionStatus,
    pub access_token: Option<String>,
    pub refresh_token: Option<String>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// The tokens of (`user_id`, `provider`), opened; with `lock`, the row stays locked until the
/// transaction ends (one renewal at a time: some vendors' refresh tokens work once).
pub async fn tokens(
    client: &impl GenericClient,
    keys: &crate::sealed::MasterKeys,
    user_id: UserId,
    provider: &str,
    lock: bool,
) -> Result<Option<Tokens>> {
    let sql = format!(
        "select status, access_token_sealed, refresh_token_sealed, token_expires_at
         from connections where user_id = $1 and provider = $2{}",
        if lock { " for update" } else { "" }
    );
    let Some(row) = client.query_opt(&sql, &[&user_id, &provider]).await? else {
        return Ok(None);
    };
    let open = |i: usize, which: &str| -> Result<Option<String>> {
        let sealed: Option<String> = row.try_get(i)?;
        let context = token_context(user_id, provider, which);
        sealed
            .map(|s| keys.open(&context, &s))
            .transpose()
            .map_err(|source| crate::Error::Sealed { what: context, source })
    };
    Ok(Some(Tokens {
        status: row.try_get(0)?,
        access_token: open(1, "access")?,
        refresh_token: open(2, "refresh")?,
        expires_at: row.try_get(3)?,
    }))
}

/// Stores renewed tokens (sealed); a refresh token left out keeps the stored one.
pub async fn renew(
    client: &impl GenericClient,
    keys: &crate::sealed::MasterKeys,
    user_id: UserId,
    provider: &str,
    grant: &Grant<'_>,
) -> Result<()> {
    let access = keys.seal(&token_context(user_id, provider, "access"), grant.access_token);
    let refresh =
        grant.refresh_token.map(|t| keys.seal(&token_context(user_id, provider, "refresh"), t));
    client
        .execute(
            "update connections set access_token_sealed = $3,
                 refresh_token_sealed = coalesce($4, refresh_token_sealed),
                 token_expires_at = $5, updated_at = now()
             where user_id = $1 and provider = $2",
            &[&user_id, &provider, &access, &refresh, &grant.expires_at],
        )
        .await?;
    Ok(())
}

/// The users connected to `provider` as the vendor's user `provider_user_id` (active only).
pub async fn users_of(db: &Db, provider: &str, provider_user_id: &str) -> Result<Vec<UserId>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "select user_id from connections
             where provider = $1 and provider_user_id = $2 and status = $3",
            &[&provider, &provider_user_id, &ConnectionStatus::Active],
        )
        .await?;
    rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
}

/// Marks a user's connection to `provider` synced now (a pull brought data).
pub async fn mark_synced(
    client: &impl GenericClient,
    user_id: UserId,
    provider: &str,
) -> Result<()> {
    client
        .execute(
            "update connections set last_synced_at = now() where user_id = $1 and provider = $2",
            &[&user_id, &provider],
        )
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_active_names_the_active_state() {
        let state = format!("c.status = '{}'", ConnectionStatus::Active.as_str());
        assert!(HAS_ACTIVE.contains(&state));
    }
}
