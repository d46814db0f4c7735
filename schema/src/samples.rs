//! Writing samples: binary COPY into a per-connection staging table, then one statement that
//! deduplicates, upserts into the hypertable, maintains the daily rollups and writes the
//! outbox events (`queries/samples_upsert.sql`).

use chrono::{DateTime, Utc};
use deadpool_postgres::Transaction;
use futures::pin_mut;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::Type;
use uuid::Uuid;

use crate::Result;

/// One sample, normalised: canonical unit, known series, known source.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRow {
    pub series_type_id: i16,
    pub data_source_id: Uuid,
    pub ts: DateTime<Utc>,
    pub value: f64,
    /// Minutes east of UTC.
    pub zone_offset: Option<i16>,
    pub is_daily_total: Option<bool>,
}

/// What storing a batch of samples did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stored {
    /// Rows after collapsing duplicates within the batch.
    pub distinct: i64,
    pub inserted: i64,
    /// Rows already stored with another value (or zone), now replaced.
    pub updated: i64,
    /// Rows already stored exactly so.
    pub unchanged: i64,
    pub events: i64,
}

/// The per-session staging tables, created on every new pooled connection (`Db::connect`).
pub(crate) const STAGING: &str = "
    create temp table if not exists samples_in (
        series_type_id smallint, data_source_id uuid, ts timestamptz, value double precision,
        zone_offset smallint, is_daily_total boolean
    ) on commit delete rows;
    create temp table if not exists samples_touched (
        series_type_id smallint, data_source_id uuid, local_date date
    ) on commit delete rows;";

const COPY: &str = "copy samples_in (series_type_id, data_source_id, ts, value, zone_offset, \
                    is_daily_total) from stdin binary";
const COPY_TYPES: &[Type] =
    &[Type::INT2, Type::UUID, Type::TIMESTAMPTZ, Type::FLOAT8, Type::INT2, Type::BOOL];

const UPSERT: &str = include_str!("../queries/samples_upsert.sql");

/// The rows with one per dedup key (series, time, source), the last one sent winning, in key
/// order (which also suits the index they go into).
fn dedup(rows: &[SampleRow]) -> Vec<&SampleRow> {
    let mut sorted: Vec<&SampleRow> = rows.iter().collect();
    // Stable: among equal keys the order sent is kept, so the last is the latest.
    sorted.sort_by_key(|r| (r.series_type_id, r.ts, r.data_source_id));
    let mut out: Vec<&SampleRow> = Vec::with_capacity(sorted.len());
    for r in sorted {
        match out.last_mut() {
            Some(last)
                if (last.series_type_id, last.ts, last.data_source_id)
                    == (r.series_type_id, r.ts, r.data_source_id) =>
            {
                *last = r;
            }
            _ => out.push(r),
        }
    }
    out
}

/// Stores `rows` for one user inside the caller's transaction. `events`: whether to write one
/// outbox event per series type for the rows inserted or changed.
pub async fn store(
    tx: &Transaction<'_>,
    user_id: Uuid,
    batch_id: Uuid,
    provider: &str,
    rows: &[SampleRow],
    events: bool,
) -> Result<Stored> {
    if rows.is_empty() {
        return Ok(Stored::default());
    }
    let rows = dedup(rows);
    let sink = tx.copy_in(COPY).await?;
    let writer = BinaryCopyInWriter::new(sink, COPY_TYPES);
    pin_mut!(writer);
    for r in &rows {
        writer
            .as_mut()
            .write(&[
                &r.series_type_id,
                &r.data_source_id,
                &r.ts,
                &r.value,
                &r.zone_offset,
                &r.is_daily_total,
            ])
            .await?;
    }
    writer.finish().await?;

    let upsert = tx.prepare_cached(UPSERT).await?;
    let row = tx.query_one(&upsert, &[&user_id, &batch_id, &provider, &events]).await?;
    let distinct = rows.len() as i64;
    let inserted: i64 = row.try_get("inserted")?;
    let updated: i64 = row.try_get("updated")?;
    let events: i64 = row.try_get("events")?;
    if updated > 0 {
        crate::rollups::recount_touched(tx, user_id).await?;
    }
    Ok(Stored { distinct, inserted, updated, unchanged: distinct - inserted - updated, events })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(series: i16, secs: i64, value: f64) -> SampleRow {
        SampleRow {
            series_type_id: series,
            data_source_id: Uuid::nil(),
            ts: DateTime::from_timestamp(secs, 0).unwrap_or_default(),
            value,
            zone_offset: None,
            is_daily_total: None,
        }
    }

    #[test]
    fn the_last_duplicate_wins() {
        let rows = [row(1, 10, 1.0), row(2, 5, 2.0), row(1, 10, 3.0), row(1, 5, 4.0)];
        let out: Vec<(i16, f64)> =
            dedup(&rows).iter().map(|r| (r.series_type_id, r.value)).collect();
        assert_eq!(out, vec![(1, 4.0), (1, 3.0), (2, 2.0)]);
    }
}
