//! The per-user-local-day rollups of samples, beyond what the ingest statement maintains by
//! itself: exact recounts of days whose samples changed, and full rebuilds.

use deadpool_postgres::Transaction;
use uuid::Uuid;

use crate::{Db, Result};

const CLEAR: &str = include_str!("../queries/rollups_clear.sql");
const RECOUNT: &str = include_str!("../queries/rollups_recount.sql");

/// Recounts, from the raw samples, the days listed in the session's `samples_touched` (and
/// their neighbours).
pub(crate) async fn recount_touched(tx: &Transaction<'_>, user_id: Uuid) -> Result<()> {
    tx.execute(CLEAR, &[&user_id]).await?;
    tx.execute(RECOUNT, &[&user_id]).await?;
    Ok(())
}

/// Rebuilds all of a user's rollups from their samples (after a reprocess).
pub async fn rebuild_user(db: &Db, user_id: Uuid) -> Result<()> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    tx.execute("delete from daily_rollups where user_id = $1", &[&user_id]).await?;
    tx.execute(
        "insert into samples_touched (series_type_id, data_source_id, local_date)
         select distinct series_type_id, data_source_id, local_day(ts, zone_offset)
         from samples where user_id = $1",
        &[&user_id],
    )
    .await?;
    recount_touched(&tx, user_id).await?;
    tx.commit().await?;
    Ok(())
}
