//! Where a user's samples lie: per series (and per source), the first and last UTC day holding
//! samples and how many samples, without reading a sample: the days not sealed yet from their
//! UTC day rollups (a row per series, source and day), the sealed ones from their blocks' first
//! and last instants and counts (a sealed day's rollup row is gone). What the portal opens its
//! charts on.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::ids::SeriesId;
use crate::ids::UserId;
use crate::{Db, Result};

/// One series of a user: from one source, or from all (`data_source_id` null).
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesCoverage {
    pub series_type_id: SeriesId,
    pub data_source_id: Option<Uuid>,
    /// The first and last instants known to hold samples: a rollup's day start, or a block's
    /// first and last sample.
    pub first: DateTime<Utc>,
    pub last: DateTime<Utc>,
    /// Samples, daily totals included.
    pub samples: i64,
}

/// Every series of the user with samples: for each, first its figures over all sources, then
/// each source's.
pub async fn of_user(db: &Db, user_id: UserId) -> Result<Vec<SeriesCoverage>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "with parts as (
                 select series_type_id, data_source_id, day as first, day as last,
                        sample_count + total_count as samples
                 from utc_day_rollups where user_id = $1 and not sealed
                 union all
                 select series_type_id, data_source_id, first_ts, last_ts, sample_count
                 from sample_blocks where user_id = $1)
             select series_type_id, data_source_id, min(first), max(last), sum(samples)::int8
             from parts
             group by grouping sets ((series_type_id), (series_type_id, data_source_id))
             order by series_type_id, data_source_id nulls first",
            &[&user_id],
        )
        .await?;
    rows.iter()
        .map(|r| {
            Ok(SeriesCoverage {
                series_type_id: r.try_get(0)?,
                data_source_id: r.try_get(1)?,
                first: r.try_get(2)?,
                last: r.try_get(3)?,
                samples: r.try_get(4)?,
            })
        })
        .collect()
}
