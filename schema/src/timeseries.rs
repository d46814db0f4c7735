//! Timeseries reads: one user's samples of some series in a time window, in pages ordered by
//! (time, series type, source), raw or downsampled into UTC buckets, optionally with
//! cross-source duplicates resolved by source priority.
//!
//! Each series is read by its own index range scan (`samples_dedup_key` leads with user and
//! series), merged and cut to the page: the cost of a page does not grow with the window or with
//! how far into it the cursor is. Series the user has no rollup for in the window are skipped
//! without touching the hypertable.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use uuid::Uuid;

use crate::catalogue::series_types::{self, Aggregation};
use crate::{Db, Result};

const RAW: &str = include_str!("../queries/timeseries_raw.sql");
const BUCKETED: &str = include_str!("../queries/timeseries_bucketed.sql");

/// Where a page starts: the last row seen (exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub ts: DateTime<Utc>,
    pub series_type_id: i16,
    pub data_source_id: Uuid,
}

#[derive(Debug, Clone)]
pub struct SeriesQuery {
    pub user_id: Uuid,
    /// Series type ids; empty means every series.
    pub types: Vec<i16>,
    pub start: DateTime<Utc>,
    /// Exclusive.
    pub end: DateTime<Utc>,
    pub after: Option<Position>,
    /// Read towards older rows from `after` (a `prev_` cursor); rows come nearest first.
    pub backward: bool,
    /// Rows to fetch (the caller asks one more than it shows, to know whether more exist).
    pub fetch: i64,
    /// Bucket width in seconds; `None` for raw samples.
    pub bucket_seconds: Option<i64>,
    /// The user's sources and their ranks (`ids`, `ranks`; lower wins).
    pub sources: (Vec<Uuid>, Vec<i32>),
    /// Leave a sample out when a better-ranked source has samples of the same series in the
    /// same hour (or bucket, if wider).
    pub resolve: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SeriesPoint {
    pub ts: DateTime<Utc>,
    pub series_type_id: i16,
    pub data_source_id: Uuid,
    pub value: f64,
    pub zone_offset: Option<i16>,
    pub is_daily_total: Option<bool>,
}

fn aggregation(id: i16) -> &'static str {
    series_types::by_id(id).map(|t| t.aggregation).unwrap_or(Aggregation::Avg).as_str()
}

/// One page of samples (see `SeriesQuery`).
pub async fn page(db: &Db, q: &SeriesQuery) -> Result<Vec<SeriesPoint>> {
    let client = db.client().await?;
    read(&client, q).await
}

/// The statement for a direction and bucket width (widths come from a fixed list, never from
/// input text).
fn render(bucket_seconds: Option<i64>, backward: bool) -> String {
    let (cmp, dir) = if backward { ("<", "desc") } else { (">", "asc") };
    match bucket_seconds {
        None => RAW.replace("{cmp}", cmp).replace("{dir}", dir),
        Some(secs) => {
            let width = format!("interval '{secs} seconds'");
            let bound = if backward { format!("s.ts < $6 + {width}") } else { "s.ts >= $6".into() };
            BUCKETED
                .replace("{bound}", &bound)
                .replace("{cmp}", cmp)
                .replace("{dir}", dir)
                .replace("{width}", &width)
        }
    }
}

pub async fn read(client: &impl GenericClient, q: &SeriesQuery) -> Result<Vec<SeriesPoint>> {
    let types: Vec<i16> = if q.types.is_empty() {
        series_types::SERIES_TYPES.iter().map(|t| t.id).collect()
    } else {
        q.types.clone()
    };
    let aggs: Vec<&str> = types.iter().map(|id| aggregation(*id)).collect();
    // Without a cursor, the window's edge stands for one: before (or after) every row in it.
    let (c_ts, c_series, c_source) = match q.after {
        Some(p) => (p.ts, p.series_type_id, p.data_source_id),
        None if q.backward => (q.end, i16::MAX, Uuid::max()),
        None => (q.start, i16::MIN, Uuid::nil()),
    };
    let (ids, ranks) = q.sources.clone();
    // Duplicates are resolved per hour, or per bucket when buckets are wider.
    let window = q.bucket_seconds.unwrap_or(3600).max(3600) as f64;
    let statement = client.prepare_cached(&render(q.bucket_seconds, q.backward)).await?;
    let rows = client
        .query(
            &statement,
            &[
                &q.user_id, &types, &aggs, &q.start, &q.end, &c_ts, &c_series, &c_source, &q.fetch,
                &q.resolve, &ids, &ranks, &window,
            ],
        )
        .await?;
    rows.iter()
        .map(|r| {
            Ok(SeriesPoint {
                ts: r.try_get("ts")?,
                series_type_id: r.try_get("series_type_id")?,
                data_source_id: r.try_get("data_source_id")?,
                value: r.try_get("value")?,
                zone_offset: r.try_get("zone_offset")?,
                is_daily_total: r.try_get("is_daily_total")?,
            })
        })
        .collect()
}
