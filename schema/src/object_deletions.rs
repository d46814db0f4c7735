//! Object-storage prefixes waiting to be emptied (a deleted user's uploads). Recorded in the
//! transaction that deletes the rows, so no deletion is forgotten; emptied by whoever has
//! storage at hand (the API right away, the workers' sweep surely).

use deadpool_postgres::GenericClient;

use crate::{Db, Result};

/// Records a prefix to empty.
pub async fn request(client: &impl GenericClient, prefix: &str) -> Result<()> {
    client
        .execute(
            "insert into object_deletions (prefix) values ($1) on conflict (prefix) do nothing",
            &[&prefix],
        )
        .await?;
    Ok(())
}

/// Up to `limit` prefixes waiting, oldest first, each counted as attempted.
pub async fn take(db: &Db, limit: i64) -> Result<Vec<String>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "update object_deletions set attempts = attempts + 1
             where prefix in (select prefix from object_deletions
                              order by requested_at limit $1 for update skip locked)
             returning prefix",
            &[&limit],
        )
        .await?;
    rows.iter().map(|r| r.try_get(0).map_err(Into::into)).collect()
}

/// The prefix is empty: forget it.
pub async fn done(db: &Db, prefix: &str) -> Result<()> {
    let client = db.client().await?;
    client.execute("delete from object_deletions where prefix = $1", &[&prefix]).await?;
    Ok(())
}

/// Emptying failed this time; the next sweep tries again.
pub async fn failed(db: &Db, prefix: &str, error: &str) -> Result<()> {
    let client = db.client().await?;
    client
        .execute(
            "update object_deletions set last_error = $2 where prefix = $1",
            &[&prefix, &error],
        )
        .await?;
    Ok(())
}
