//! The sample as every writer hands it on (ingest builds it; `samples` stores it, `rollups`
//! counts it, `blocks` seals it): its own module, so none of those depends on another for it.

use crate::ids::SeriesId;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// One sample, normalised: canonical unit, known series, known source.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRow {
    pub series_type_id: SeriesId,
    pub data_source_id: Uuid,
    pub ts: DateTime<Utc>,
    pub value: f64,
    /// Minutes east of UTC.
    pub zone_offset: Option<i16>,
    pub is_daily_total: Option<bool>,
}
