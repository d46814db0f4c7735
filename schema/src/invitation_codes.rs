//! Invitation codes: a mobile app onboards a user by redeeming a short code for the user's SDK
//! tokens. Stored hashed; single use; expiring; a new code revokes the user's older ones.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use crate::ids::UserId;
use crate::{Db, Result, interval_secs, secret_hash};

/// A code as made (the code itself is shown once, by the caller).
#[derive(Debug, Clone)]
pub struct Invitation {
    pub id: Uuid,
    pub user_id: UserId,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// Stores `code` for `user_id` for `lifetime`, revoking the user's codes not redeemed yet, in
/// one transaction (two codes made at once: the later one stands).
pub async fn create(
    db: &Db,
    code: &str,
    user_id: UserId,
    created_by: &str,
    lifetime: Duration,
) -> Result<Invitation> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    tx.execute(
        "update invitation_codes set revoked_at = now()
         where user_id = $1 and redeemed_at is null and revoked_at is null",
        &[&user_id],
    )
    .await?;
    let id = Uuid::now_v7();
    let row = tx
        .query_one(
            "insert into invitation_codes (id, code_hash, user_id, created_by, expires_at)
             values ($1, $2, $3, $4, now() + make_interval(secs => $5))
             returning created_at, expires_at",
            &[&id, &secret_hash(code), &user_id, &created_by, &interval_secs(lifetime)],
        )
        .await?;
    let invitation =
        Invitation { id, user_id, created_at: row.try_get(0)?, expires_at: row.try_get(1)? };
    tx.commit().await?;
    Ok(invitation)
}

/// Redeems `code`: the user it was made for when it is live (then never again), else `None`.
pub async fn redeem(db: &Db, code: &str) -> Result<Option<UserId>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "update invitation_codes set redeemed_at = now()
             where code_hash = $1 and redeemed_at is null and revoked_at is null
               and expires_at > now()
             returning user_id",
            &[&secret_hash(code)],
        )
        .await?;
    row.map(|r| r.try_get(0)).transpose().map_err(Into::into)
}
