//! A user's connections to providers.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use postgres_types::{FromSql, ToSql};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::{Db, Result};

/// Whether a connection delivers data: `active`, or no more (`revoked` by the user, `expired`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSql, FromSql)]
#[postgres(name = "connection_status", rename_all = "snake_case")]
pub enum ConnectionStatus {
    Active,
    Revoked,
    Expired,
}

/// Whether the user `u` has an active connection (an SQL expression).
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
    pub user_id: Uuid,
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

pub async fn list_for_user(db: &Db, user_id: Uuid) -> Result<Vec<Connection>> {
    let client = db.client().await?;
    client
        .query(
            "select id, user_id, provider, provider_user_id, provider_username, scope, status,
                    last_synced_at, created_at, updated_at
             from connections where user_id = $1 order by provider",
            &[&user_id],
        )
        .await?
        .iter()
        .map(from_row)
        .collect()
}
