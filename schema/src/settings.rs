//! Server-generated settings shared by every process of a deployment.

use crate::{Db, Result};

/// The stored value of `key`; when there is none yet, stores `generate()` and returns it.
/// Concurrent callers all get the value that was stored first.
pub async fn get_or_init(db: &Db, key: &str, generate: impl FnOnce() -> String) -> Result<String> {
    let client = db.client().await?;
    client
        .execute(
            "insert into server_settings (key, value) values ($1, $2) on conflict (key) do nothing",
            &[&key, &generate()],
        )
        .await?;
    let row = client.query_one("select value from server_settings where key = $1", &[&key]).await?;
    Ok(row.try_get(0)?)
}
