//! Connect links: a page an end user opens to connect their cloud wearables. A link belongs to
//! one user, expires, can be revoked, and is bound to the first browser that opens it (the
//! hash of a cookie that browser was given); the token and the cookie are stored hashed.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use crate::ids::UserId;
use crate::{Db, Result, interval_secs, secret_hash};

/// A link as listed (never its token, which is shown once).
#[derive(Debug, Clone)]
pub struct ConnectLink {
    pub id: Uuid,
    pub user_id: UserId,
    pub providers: Option<Vec<String>>,
    pub redirect_uri: Option<String>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub opened_at: Option<DateTime<Utc>>,
}

/// What a new link is made of.
#[derive(Debug, Clone)]
pub struct NewLink<'a> {
    pub token: &'a str,
    pub user_id: UserId,
    pub providers: Option<Vec<String>>,
    pub redirect_uri: Option<String>,
    pub created_by: &'a str,
    pub lifetime: Duration,
}

const COLUMNS: &str = "id, user_id, providers, redirect_uri, created_by, created_at, expires_at,
                       revoked_at, opened_at";

fn from_row(r: &tokio_postgres::Row) -> Result<ConnectLink> {
    Ok(ConnectLink {
        id: r.try_get(0)?,
        user_id: r.try_get(1)?,
        providers: r.try_get(2)?,
        redirect_uri: r.try_get(3)?,
        created_by: r.try_get(4)?,
        created_at: r.try_get(5)?,
        expires_at: r.try_get(6)?,
        revoked_at: r.try_get(7)?,
        opened_at: r.try_get(8)?,
    })
}

/// Stores a new link.
pub async fn create(db: &Db, new: &NewLink<'_>) -> Result<ConnectLink> {
    let client = db.client().await?;
    let row = client
        .query_one(
            &format!(
                "insert into connect_links (id, token_hash, user_id, providers, redirect_uri,
                                            created_by, expires_at)
                 values ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))
                 returning {COLUMNS}"
            ),
            &[
                &Uuid::now_v7(),
                &secret_hash(new.token),
                &new.user_id,
                &new.providers,
                &new.redirect_uri,
                &new.created_by,
                &interval_secs(new.lifetime),
            ],
        )
        .await?;
    from_row(&row)
}

/// A user's links, newest first (at most `limit`).
pub async fn list(db: &Db, user_id: UserId, limit: i64) -> Result<Vec<ConnectLink>> {
    let client = db.client().await?;
    let rows = client
        .query(
            &format!(
                "select {COLUMNS} from connect_links where user_id = $1
                 order by created_at desc limit $2"
            ),
            &[&user_id, &limit],
        )
        .await?;
    rows.iter().map(from_row).collect()
}

/// Revokes a user's link; whether it was theirs and not revoked yet.
pub async fn revoke(db: &Db, user_id: UserId, id: Uuid) -> Result<bool> {
    let client = db.client().await?;
    let n = client
        .execute(
            "update connect_links set revoked_at = now()
             where id = $1 and user_id = $2 and revoked_at is null",
            &[&id, &user_id],
        )
        .await?;
    Ok(n == 1)
}

/// What opening a link with a browser's cookie found.
#[derive(Debug, Clone)]
pub enum Opened {
    /// Live, and this browser's (bound to it now if it was the first).
    Live(ConnectLink),
    /// Unknown, or its user is gone.
    Unknown,
    /// Past its expiry.
    Expired,
    /// Revoked by the integrator.
    Revoked,
    /// Opened before by another browser.
    Used,
}

/// Opens the link of `token` in the browser holding `cookie`: the first browser to open it is
/// bound to it, atomically (two opening at once: one wins).
pub async fn open(db: &Db, token: &str, cookie: &str) -> Result<Opened> {
    let client = db.client().await?;
    let token_hash = secret_hash(token);
    let row = client
        .query_opt(
            &format!(
                "update connect_links
                 set opened_at = coalesce(opened_at, now()),
                     browser_hash = coalesce(browser_hash, $2)
                 where token_hash = $1 and revoked_at is null and expires_at > now()
                   and (browser_hash is null or browser_hash = $2)
                 returning {COLUMNS}"
            ),
            &[&token_hash, &secret_hash(cookie)],
        )
        .await?;
    if let Some(row) = row {
        return Ok(Opened::Live(from_row(&row)?));
    }
    // Not live for this browser: why, for the page to say.
    let why = client
        .query_opt(
            "select revoked_at is not null, expires_at <= now() from connect_links
             where token_hash = $1",
            &[&token_hash],
        )
        .await?;
    Ok(match why {
        None => Opened::Unknown,
        Some(r) if r.try_get::<_, bool>(0)? => Opened::Revoked,
        Some(r) if r.try_get::<_, bool>(1)? => Opened::Expired,
        Some(_) => Opened::Used,
    })
}
