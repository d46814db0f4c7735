//! Daily rollups maintenance outside the ingest path.

use uuid::Uuid;

use crate::{Db, Result};

/// Rebuilds all of a user's rollups from their samples (after a reprocess).
pub async fn rebuild_user(db: &Db, user_id: Uuid) -> Result<()> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    tx.execute("delete from daily_rollups where user_id = $1", &[&user_id]).await?;
    tx.execute(
        "insert into daily_rollups (user_id, series_type_id, data_source_id, local_date,
             sample_count, value_sum, value_min, value_max, total_count, total_sum)
         select user_id, series_type_id, data_source_id,
                (ts at time zone 'UTC' + make_interval(mins => coalesce(zone_offset, 0)::int))::date,
                count(*) filter (where not coalesce(is_daily_total, false)),
                coalesce(sum(value) filter (where not coalesce(is_daily_total, false)), 0),
                min(value) filter (where not coalesce(is_daily_total, false)),
                max(value) filter (where not coalesce(is_daily_total, false)),
                count(*) filter (where is_daily_total),
                coalesce(sum(value) filter (where is_daily_total), 0)
         from samples where user_id = $1
         group by 1, 2, 3, 4",
        &[&user_id],
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
