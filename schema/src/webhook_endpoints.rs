//! Webhook endpoints: where events are delivered, what each receives, and its signing secret.

use chrono::{DateTime, Utc};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::ids::UserId;
use crate::sealed::MasterKeys;
use crate::{Db, Error, Result};

/// What a secret of endpoint `id` is sealed for: it opens for that endpoint only.
fn context(id: &str) -> String {
    format!("webhook_endpoint:{id}")
}

/// Opens a signing secret of endpoint `id` as stored (sealed).
pub(crate) fn open_secret(keys: &MasterKeys, id: &str, stored: &str) -> Result<String> {
    let context = context(id);
    keys.open(&context, stored).map_err(|source| Error::Sealed { what: context, source })
}

#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    pub id: String,
    pub url: String,
    pub description: String,
    pub filter_types: Option<Vec<String>>,
    pub user_id: Option<UserId>,
    /// The signing secrets as stored, sealed: see [`Endpoint::secret`].
    pub sealed_secret: String,
    pub sealed_previous_secret: Option<String>,
    pub previous_expires_at: Option<DateTime<Utc>>,
    pub disabled_at: Option<DateTime<Utc>>,
    pub disabled_reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, url, description, filter_types, user_id, secret, previous_secret,
    previous_expires_at, disabled_at, disabled_reason, created_at, updated_at";

fn from_row(r: &Row) -> Result<Endpoint> {
    Ok(Endpoint {
        id: r.try_get(0)?,
        url: r.try_get(1)?,
        description: r.try_get(2)?,
        filter_types: r.try_get(3)?,
        user_id: r.try_get(4)?,
        sealed_secret: r.try_get(5)?,
        sealed_previous_secret: r.try_get(6)?,
        previous_expires_at: r.try_get(7)?,
        disabled_at: r.try_get(8)?,
        disabled_reason: r.try_get(9)?,
        created_at: r.try_get(10)?,
        updated_at: r.try_get(11)?,
    })
}

impl Endpoint {
    /// The current signing secret, opened.
    pub fn secret(&self, keys: &MasterKeys) -> Result<String> {
        open_secret(keys, &self.id, &self.sealed_secret)
    }
}

/// What an endpoint is created with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewEndpoint {
    pub url: String,
    pub description: String,
    pub filter_types: Option<Vec<String>>,
    pub user_id: Option<UserId>,
    pub secret: String,
}

pub async fn insert(db: &Db, keys: &MasterKeys, e: &NewEndpoint) -> Result<Endpoint> {
    let client = db.client().await?;
    let id = format!("ep_{}", Uuid::now_v7().simple());
    let secret = keys.seal(&context(&id), &e.secret);
    let row = client
        .query_one(
            &format!(
                "insert into webhook_endpoints (id, url, description, filter_types, user_id, secret)
                 values ($1, $2, $3, $4, $5, $6) returning {COLUMNS}"
            ),
            &[&id, &e.url, &e.description, &e.filter_types, &e.user_id, &secret],
        )
        .await?;
    from_row(&row)
}

/// Every endpoint, oldest first.
pub async fn list(db: &Db) -> Result<Vec<Endpoint>> {
    let client = db.client().await?;
    let rows =
        client.query(&format!("select {COLUMNS} from webhook_endpoints order by id"), &[]).await?;
    rows.iter().map(from_row).collect()
}

pub async fn get(db: &Db, id: &str) -> Result<Option<Endpoint>> {
    let client = db.client().await?;
    let row = client
        .query_opt(&format!("select {COLUMNS} from webhook_endpoints where id = $1"), &[&id])
        .await?;
    row.as_ref().map(from_row).transpose()
}

/// Changes to an endpoint; `None` leaves a field as it is (`Some(None)` clears a nullable one).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EndpointPatch {
    pub url: Option<String>,
    pub description: Option<String>,
    pub filter_types: Option<Option<Vec<String>>>,
    pub user_id: Option<Option<UserId>>,
    /// `Some(false)` re-enables a disabled endpoint (and forgets its failures); `Some(true)`
    /// disables it by hand.
    pub disabled: Option<bool>,
}

pub async fn update(db: &Db, id: &str, p: &EndpointPatch) -> Result<Option<Endpoint>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            &format!(
                "update webhook_endpoints set
                     url = coalesce($2, url),
                     description = coalesce($3, description),
                     filter_types = case when $4 then $5 else filter_types end,
                     user_id = case when $6 then $7 else user_id end,
                     disabled_at = case $8::bool when true then coalesce(disabled_at, now())
                                                 when false then null else disabled_at end,
                     disabled_reason = case $8::bool when true then 'disabled by a developer'
                                                     when false then null else disabled_reason end,
                     failing_since = case when $8::bool = false then null else failing_since end,
                     updated_at = now()
                 where id = $1 returning {COLUMNS}"
            ),
            &[
                &id,
                &p.url,
                &p.description,
                &p.filter_types.is_some(),
                &p.filter_types.clone().flatten(),
                &p.user_id.is_some(),
                &p.user_id.flatten(),
                &p.disabled,
            ],
        )
        .await?;
    row.as_ref().map(from_row).transpose()
}

/// Deletes an endpoint with its delivery history; `false` when there was none.
pub async fn delete(db: &Db, id: &str) -> Result<bool> {
    let client = db.client().await?;
    Ok(client.execute("delete from webhook_endpoints where id = $1", &[&id]).await? > 0)
}

/// Replaces the secret; the old one keeps signing alongside until `old_until`.
pub async fn rotate_secret(
    db: &Db,
    keys: &MasterKeys,
    id: &str,
    secret: &str,
    old_until: DateTime<Utc>,
) -> Result<Option<Endpoint>> {
    let client = db.client().await?;
    let secret = keys.seal(&context(id), secret);
    let row = client
        .query_opt(
            &format!(
                "update webhook_endpoints set previous_secret = secret, previous_expires_at = $3,
                     secret = $2, updated_at = now()
                 where id = $1 returning {COLUMNS}"
            ),
            &[&id, &secret, &old_until],
        )
        .await?;
    row.as_ref().map(from_row).transpose()
}

/// Seals again every endpoint secret in clear or under an older key; returns how many.
pub(crate) async fn reseal(db: &Db, keys: &MasterKeys) -> Result<u64> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let rows = tx
        .query("select id, secret, previous_secret from webhook_endpoints for update", &[])
        .await?;
    let mut n = 0;
    for row in rows {
        let (id, secret, previous): (String, String, Option<String>) =
            (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
        if !keys.needs_sealing(&secret)
            && previous.as_deref().is_none_or(|p| !keys.needs_sealing(p))
        {
            continue;
        }
        let context = context(&id);
        let reseal = |v: &str| {
            keys.reseal(&context, v)
                .map_err(|source| Error::Sealed { what: context.clone(), source })
        };
        let secret = reseal(&secret)?;
        let previous = previous.as_deref().map(reseal).transpose()?;
        tx.execute(
            "update webhook_endpoints set secret = $2, previous_secret = $3 where id = $1",
            &[&id, &secret, &previous],
        )
        .await?;
        n += 1;
    }
    tx.commit().await?;
    Ok(n)
}
