//! Refresh tokens of the mobile SDK. Stored hashed; every refresh revokes the presented token
//! and issues a new one (rotation), atomically, so a token works at most once. Tokens expire
//! (the lifetime slides with each refresh) and belong to a family, the chain rotated from one
//! issue: a rotated-out token presented again means someone holds a copy, and the whole family
//! is revoked (OAuth 2.0 Security BCP, RFC 9700 §4.14.2).

use chrono::Duration;
use uuid::Uuid;

use crate::ids::UserId;
use crate::{Db, Result, interval_secs, secret_hash};

/// What presenting a refresh token led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rotation {
    /// The token was live: the new one replaces it, for this user.
    Rotated(UserId),
    /// Unknown, expired, or signed out.
    Refused,
    /// Already rotated out: presented again, it revoked its family (this user's).
    FamilyRevoked(UserId),
}

pub async fn insert(
    db: &Db,
    token: &str,
    user_id: UserId,
    issued_by: &str,
    lifetime: Duration,
) -> Result<()> {
    let client = db.client().await?;
    client
        .execute(
            "insert into sdk_refresh_tokens (token_hash, user_id, issued_by, family_id, expires_at)
             values ($1, $2, $3, $4, now() + make_interval(secs => $5))",
            &[&secret_hash(token), &user_id, &issued_by, &Uuid::new_v4(), &interval_secs(lifetime)],
        )
        .await?;
    Ok(())
}

/// Presents `old`: when it is live, revokes it and stores `new` in its family for `lifetime`.
pub async fn rotate(db: &Db, old: &str, new: &str, lifetime: Duration) -> Result<Rotation> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let Some(row) = tx
        .query_opt(
            "select user_id, issued_by, family_id, revoked_at is null and expires_at > now(),
                    replaced_by is not null
             from sdk_refresh_tokens where token_hash = $1 for update",
            &[&secret_hash(old)],
        )
        .await?
    else {
        return Ok(Rotation::Refused);
    };
    let (user_id, issued_by, family): (UserId, String, Uuid) =
        (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
    let (live, rotated_out): (bool, bool) = (row.try_get(3)?, row.try_get(4)?);
    if !live {
        if rotated_out {
            tx.execute(
                "update sdk_refresh_tokens set revoked_at = coalesce(revoked_at, now())
                 where family_id = $1",
                &[&family],
            )
            .await?;
            tx.commit().await?;
            return Ok(Rotation::FamilyRevoked(user_id));
        }
        return Ok(Rotation::Refused);
    }
    let new_hash = secret_hash(new);
    tx.execute(
        "update sdk_refresh_tokens set revoked_at = now(), last_used_at = now(), replaced_by = $2
         where token_hash = $1",
        &[&secret_hash(old), &new_hash],
    )
    .await?;
    tx.execute(
        "insert into sdk_refresh_tokens (token_hash, user_id, issued_by, family_id, expires_at)
         values ($1, $2, $3, $4, now() + make_interval(secs => $5))",
        &[&new_hash, &user_id, &issued_by, &family, &interval_secs(lifetime)],
    )
    .await?;
    tx.commit().await?;
    Ok(Rotation::Rotated(user_id))
}

/// Revokes a token; false when it is unknown or already revoked.
pub async fn revoke(db: &Db, token: &str) -> Result<bool> {
    let client = db.client().await?;
    let n = client
        .execute(
            "update sdk_refresh_tokens set revoked_at = now()
             where token_hash = $1 and revoked_at is null",
            &[&secret_hash(token)],
        )
        .await?;
    Ok(n == 1)
}
