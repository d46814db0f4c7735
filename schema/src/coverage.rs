//! Where a user's samples lie: per series, the first and last UTC day holding samples, how many
//! days and samples, read from the UTC day rollups (a row per series, source and day, sealed or
//! not) without reading a sample. What the portal opens its charts on.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{Db, Result};

/// One series of a user.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesCoverage {
    pub series_type_id: i16,
    /// The UTC midnights of the first and last days holding samples.
    pub first_day: DateTime<Utc>,
    pub last_day: DateTime<Utc>,
    pub days: i64,
    /// Samples, daily totals included.
    pub samples: i64,
}

/// Every series of the user with samples, by series id.
pub async fn of_user(db: &Db, user_id: Uuid) -> Result<Vec<SeriesCoverage>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "select series_type_id, min(day), max(day), count(distinct day),
                    sum(sample_count + total_count)::int8
             from utc_day_rollups where user_id = $1
             group by series_type_id order by series_type_id",
            &[&user_id],
        )
        .await?;
    rows.iter()
        .map(|r| {
            Ok(SeriesCoverage {
                series_type_id: r.try_get(0)?,
                first_day: r.try_get(1)?,
                last_day: r.try_get(2)?,
                days: r.try_get(3)?,
                samples: r.try_get(4)?,
            })
        })
        .collect()
}
