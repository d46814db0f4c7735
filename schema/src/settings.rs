//! Server-generated settings shared by every process of a deployment. Secret ones are stored
//! sealed under the master key (`crate::sealed`).

use crate::sealed::MasterKeys;
use crate::{Db, Error, Result};

/// The settings that hold secrets.
pub(crate) const SECRETS: [&str; 1] = ["jwt_secret"];

fn context(key: &str) -> String {
    format!("server_settings:{key}")
}

/// The stored value of `key`; when there is none yet, stores `generate()` and returns it.
/// Concurrent callers all get the value that was stored first.
async fn get_or_init(db: &Db, key: &str, generate: impl FnOnce() -> String) -> Result<String> {
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

/// The secret setting `key`, opened; when there is none yet, `generate()` is stored sealed.
pub async fn secret(
    db: &Db,
    keys: &MasterKeys,
    key: &str,
    generate: impl FnOnce() -> String,
) -> Result<String> {
    let context = context(key);
    let stored = get_or_init(db, key, || keys.seal(&context, &generate())).await?;
    keys.open(&context, &stored).map_err(|source| Error::Sealed { what: context, source })
}

/// Seals again every secret setting in clear or under an older key; returns how many.
pub(crate) async fn reseal(db: &Db, keys: &MasterKeys) -> Result<u64> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let rows = tx
        .query(
            "select key, value from server_settings where key = any($1) for update",
            &[&&SECRETS[..]],
        )
        .await?;
    let mut n = 0;
    for row in rows {
        let (key, value): (String, String) = (row.try_get(0)?, row.try_get(1)?);
        if keys.needs_sealing(&value) {
            let context = context(&key);
            let sealed = keys
                .reseal(&context, &value)
                .map_err(|source| Error::Sealed { what: context, source })?;
            tx.execute("update server_settings set value = $2 where key = $1", &[&key, &sealed])
                .await?;
            n += 1;
        }
    }
    tx.commit().await?;
    Ok(n)
}
