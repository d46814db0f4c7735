//! Where a user's samples lie: per series, the first and last UTC day holding samples, how many
//! days and samples, read from the UTC day rollups (a row per series, source and day, sealed or
//! not) without reading a sample. What the portal opens its charts on.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{Db, Result};

/// One series of a user: from one source, or from all (`data_source_id` null).
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesCoverage {
    pub series_type_id: i16,
    pub data_source_id: Option<Uuid>,
    /// The UTC midnights of the first and last days holding samples.
    pub first_day: DateTime<Utc>,
    pub last_day: DateTime<Utc>,
    pub days: i64,
    /// Samples, daily totals included.
    pub samples: i64,
}

/// Every series of the user with samples: for each, first its figures over all sources, then
/// each source's.
pub async fn of_user(db: &Db, user_id: Uuid) -> Result<Vec<SeriesCoverage>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "select series_type_id, data_source_id, min(day), max(day), count(distinct day),
                    sum(sample_count + total_count)::int8
             from utc_day_rollups where user_id = $1
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
                first_day: r.try_get(2)?,
                last_day: r.try_get(3)?,
                days: r.try_get(4)?,
                samples: r.try_get(5)?,
            })
        })
        .collect()
}
