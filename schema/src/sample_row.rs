//! The sample as every writer hands it on (ingest builds it; `samples` stores it, `rollups`
//! counts it, `blocks` seals it), with the columns it is copied in as and the staging tables
//! every pooled connection gets (`db`): its own module, so none of those depends on another
//! for it.

use crate::ids::SeriesId;
use chrono::{DateTime, Utc};
use tokio_postgres::types::Type;
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

/// The per-session staging tables, created on every new pooled connection (`Db::connect`).
pub(crate) const STAGING: &str = "
    create temp table if not exists samples_in (
        series_type_id smallint, data_source_id uuid, ts timestamptz, value double precision,
        zone_offset smallint, is_daily_total boolean
    ) on commit delete rows;
    create temp table if not exists samples_touched (
        series_type_id smallint, data_source_id uuid, local_date date, hour timestamptz
    ) on commit delete rows;";

/// The columns a batch's rows are copied in; straight into the hypertable, the user and batch
/// follow.
pub(crate) const COLUMNS: &str =
    "series_type_id, data_source_id, ts, value, zone_offset, is_daily_total";
pub(crate) const TYPES: [Type; 8] = [
    Type::INT2,
    Type::UUID,
    Type::TIMESTAMPTZ,
    Type::FLOAT8,
    Type::INT2,
    Type::BOOL,
    Type::UUID,
    Type::UUID,
];
