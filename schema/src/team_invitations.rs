//! Invitations to join the team: a link whose token is stored hashed, works once and expires.
//! Accepting one creates the developer with the invited role in the same transaction.

use chrono::{DateTime, Duration, Utc};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::developers::{self, Developer, Role};
use crate::{Db, Result, interval_secs, secret_hash};

#[derive(Debug, Clone)]
pub struct Invitation {
    pub id: Uuid,
    pub email: String,
    pub role: Role,
    pub invited_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, email, role, invited_by, created_at, expires_at";

fn from_row(row: &Row) -> Result<Invitation> {
    Ok(Invitation {
        id: row.try_get("id")?,
        email: row.try_get("email")?,
        role: row.try_get("role")?,
        invited_by: row.try_get("invited_by")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
    })
}

/// Stores an invitation of `email` as `role` under `token` (shown once, by the caller), live
/// for `lifetime`. An earlier invitation of the same address still pending is revoked: the
/// newest link is the one that works.
pub async fn create(
    db: &Db,
    token: &str,
    email: &str,
    role: Role,
    invited_by: Uuid,
    lifetime: Duration,
) -> Result<Invitation> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    tx.execute(
        "update team_invitations set revoked_at = now()
         where lower(email) = lower($1) and accepted_at is null and revoked_at is null",
        &[&email],
    )
    .await?;
    let sql = format!(
        "insert into team_invitations (id, token_hash, email, role, invited_by, expires_at)
         values ($1, $2, $3, $4, $5, now() + make_interval(secs => $6)) returning {COLUMNS}"
    );
    let row = tx
        .query_one(
            &sql,
            &[
                &Uuid::now_v7(),
                &secret_hash(token),
                &email,
                &role,
                &invited_by,
                &interval_secs(lifetime),
            ],
        )
        .await?;
    let invitation = from_row(&row)?;
    tx.commit().await?;
    Ok(invitation)
}

/// Invitations neither accepted, revoked nor expired, newest first.
pub async fn pending(db: &Db) -> Result<Vec<Invitation>> {
    let client = db.client().await?;
    let sql = format!(
        "select {COLUMNS} from team_invitations
         where accepted_at is null and revoked_at is null and expires_at > now()
         order by created_at desc, id desc"
    );
    client.query(&sql, &[]).await?.iter().map(from_row).collect()
}

/// The pending invitation `id`, if any.
pub async fn get_pending(db: &Db, id: Uuid) -> Result<Option<Invitation>> {
    let client = db.client().await?;
    let sql = format!(
        "select {COLUMNS} from team_invitations
         where id = $1 and accepted_at is null and revoked_at is null and expires_at > now()"
    );
    client.query_opt(&sql, &[&id]).await?.as_ref().map(from_row).transpose()
}

/// Revokes a pending invitation; whether there was one.
pub async fn revoke(db: &Db, id: Uuid) -> Result<bool> {
    let client = db.client().await?;
    let n = client
        .execute(
            "update team_invitations set revoked_at = now()
             where id = $1 and accepted_at is null and revoked_at is null",
            &[&id],
        )
        .await?;
    Ok(n == 1)
}

/// The live invitation of `token` (for the page that accepts it), if any.
pub async fn find_live(db: &Db, token: &str) -> Result<Option<Invitation>> {
    let client = db.client().await?;
    let sql = format!(
        "select {COLUMNS} from team_invitations
         where token_hash = $1 and accepted_at is null and revoked_at is null
           and expires_at > now()"
    );
    client.query_opt(&sql, &[&secret_hash(token)]).await?.as_ref().map(from_row).transpose()
}

/// Accepts the invitation of `token`: the developer it makes, with `password_hash`, or `None`
/// when the token is unknown, used, revoked or expired (then nothing changes). An address
/// taken since the invitation was made is [`crate::error::Conflict::DeveloperEmail`], and the
/// invitation stays unused.
pub async fn accept(db: &Db, token: &str, password_hash: &str) -> Result<Option<Developer>> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let Some(row) = tx
        .query_opt(
            "update team_invitations set accepted_at = now()
             where token_hash = $1 and accepted_at is null and revoked_at is null
               and expires_at > now()
             returning email, role",
            &[&secret_hash(token)],
        )
        .await?
    else {
        return Ok(None);
    };
    let (email, role): (String, Role) = (row.try_get(0)?, row.try_get(1)?);
    let developer = developers::insert_on(&tx, &email, password_hash, role).await?;
    tx.commit().await?;
    Ok(Some(developer))
}
