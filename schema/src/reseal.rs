//! Re-sealing the stored secrets under the current master key: the tables that hold sealed
//! values, each by its own function. Here, not in `sealed`, so the cipher depends on no table.

use crate::sealed::MasterKeys;

/// Seals again, under the current key, every stored secret that is in clear (written before
/// secrets were sealed) or under the previous key. Run at start-up, before serving; returns
/// how many values changed.
pub async fn reseal_all(db: &crate::Db, keys: &MasterKeys) -> crate::Result<u64> {
    Ok(crate::settings::reseal(db, keys).await?
        + crate::webhook_endpoints::reseal(db, keys).await?
        + crate::connections::reseal(db, keys).await?)
}
