//! Refresh tokens of the mobile SDK. Stored hashed; every refresh revokes the presented token
//! and issues a new one (rotation), atomically, so a token works at most once.

use uuid::Uuid;

use crate::{Db, Result, secret_hash};

pub async fn insert(db: &Db, token: &str, user_id: Uuid, issued_by: &str) -> Result<()> {
    let client = db.client().await?;
    client
        .execute(
            "insert into sdk_refresh_tokens (token_hash, user_id, issued_by) values ($1, $2, $3)",
            &[&secret_hash(token), &user_id, &issued_by],
        )
        .await?;
    Ok(())
}

/// Revokes `old` and stores `new` for the same user. Returns that user, or `None` when `old` is
/// unknown, already used or revoked (or its user is gone).
pub async fn rotate(db: &Db, old: &str, new: &str) -> Result<Option<Uuid>> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let Some(row) = tx
        .query_opt(
            "update sdk_refresh_tokens set revoked_at = now(), last_used_at = now()
             where token_hash = $1 and revoked_at is null
             returning user_id, issued_by",
            &[&secret_hash(old)],
        )
        .await?
    else {
        return Ok(None);
    };
    let user_id: Uuid = row.try_get(0)?;
    let issued_by: String = row.try_get(1)?;
    tx.execute(
        "insert into sdk_refresh_tokens (token_hash, user_id, issued_by) values ($1, $2, $3)",
        &[&secret_hash(new), &user_id, &issued_by],
    )
    .await?;
    tx.commit().await?;
    Ok(Some(user_id))
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
