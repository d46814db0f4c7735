//! Reading sealed samples beside the rows: a read decodes the blocks its window touches and
//! hands them to its statement as parallel arrays, and the statement reads [`samples_sql`] where
//! it read `samples`, so each statement keeps its own SQL and every answer stays as it was.
//!
//! The blocks and the rows must be read in one snapshot ([`snapshot`]): a day sealed between
//! the two reads would otherwise be missed (or, unsealed, counted twice).

use chrono::{DateTime, Duration, Utc};
use deadpool_postgres::{GenericClient, Object, Transaction};
use tokio_postgres::IsolationLevel;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use super::codec;
use crate::Result;

/// The earliest and latest instants a scope means (years 1 and 9999): an open window's bounds,
/// well inside what PostgreSQL and chrono both hold.
pub fn earliest() -> DateTime<Utc> {
    DateTime::from_timestamp(-62_135_596_800, 0).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// See [`earliest`].
pub fn latest() -> DateTime<Utc> {
    DateTime::from_timestamp(253_402_300_799, 0).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// Which sealed samples a read needs.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub user_id: Uuid,
    /// `None`: every series.
    pub series: Option<&'a [i16]>,
    /// `None`: every source.
    pub sources: Option<&'a [Uuid]>,
    pub from: DateTime<Utc>,
    /// Exclusive.
    pub to: DateTime<Utc>,
}

/// Sealed samples, decoded, as the parallel arrays [`samples_sql`] reads.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SealedRows {
    pub series: Vec<i16>,
    pub sources: Vec<Uuid>,
    pub ts: Vec<DateTime<Utc>>,
    pub values: Vec<f64>,
    pub offsets: Vec<Option<i16>>,
    pub flags: Vec<Option<bool>>,
    pub batches: Vec<Option<Uuid>>,
}

impl SealedRows {
    pub fn len(&self) -> usize {
        self.ts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ts.is_empty()
    }

    /// The statement's parameters, in [`samples_sql`]'s order.
    pub fn params(&self) -> [&(dyn ToSql + Sync); 7] {
        [
            &self.series,
            &self.sources,
            &self.ts,
            &self.values,
            &self.offsets,
            &self.flags,
            &self.batches,
        ]
    }

    /// Adds another read's samples.
    pub fn extend(&mut self, other: SealedRows) {
        self.series.extend(other.series);
        self.sources.extend(other.sources);
        self.ts.extend(other.ts);
        self.values.extend(other.values);
        self.offsets.extend(other.offsets);
        self.flags.extend(other.flags);
        self.batches.extend(other.batches);
    }
}

/// SQL standing for the `samples` table with the sealed samples of parameters `$first` to
/// `$first + 6` ([`SealedRows::params`]) added, for a read of user `$1`. Aliased by the caller
/// (`from {samples} s`).
pub fn samples_sql(first: usize) -> String {
    let p = |i: usize| format!("${}", first + i);
    format!(
        "(select user_id, series_type_id, data_source_id, ts, value, zone_offset,
                 is_daily_total, batch_id
          from samples
          union all
          select $1::uuid, u.*
          from unnest({}::smallint[], {}::uuid[], {}::timestamptz[], {}::float8[],
                      {}::smallint[], {}::boolean[], {}::uuid[])
               as u(series_type_id, data_source_id, ts, value, zone_offset, is_daily_total,
                    batch_id))",
        p(0),
        p(1),
        p(2),
        p(3),
        p(4),
        p(5),
        p(6)
    )
}

/// The sealed samples in `scope`, by series, source and time.
pub async fn fetch(client: &impl GenericClient, scope: Scope<'_>) -> Result<SealedRows> {
    let mut out = SealedRows::default();
    let scope = Scope { from: scope.from.max(earliest()), to: scope.to.min(latest()), ..scope };
    if scope.from >= scope.to {
        return Ok(out);
    }
    let statement = client
        .prepare_cached(
            "select series_type_id, data_source_id, data from sample_blocks
             where user_id = $1
               and ($2::smallint[] is null or series_type_id = any($2))
               and ($3::uuid[] is null or data_source_id = any($3))
               and day > $4 and day < $5 and last_ts >= $6 and first_ts < $5
             order by series_type_id, data_source_id, day",
        )
        .await?;
    let series = scope.series.map(<[i16]>::to_vec);
    let sources = scope.sources.map(<[Uuid]>::to_vec);
    let day_before = scope.from - Duration::days(1);
    let rows = client
        .query(
            &statement,
            &[&scope.user_id, &series, &sources, &day_before, &scope.to, &scope.from],
        )
        .await?;
    decode_into(&mut out, &rows, |_, ts| ts >= scope.from && ts < scope.to)?;
    Ok(out)
}

/// The sealed samples in `[from, to)` of the blocks that lie only partly inside it (the
/// window's edge days), every series and source; the blocks wholly inside are counted by their
/// `sample_count` instead.
pub async fn fetch_edges(
    client: &impl GenericClient,
    user_id: Uuid,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<SealedRows> {
    let mut out = SealedRows::default();
    let (from, to) = (from.max(earliest()), to.min(latest()));
    if from >= to {
        return Ok(out);
    }
    let statement = client
        .prepare_cached(
            "select series_type_id, data_source_id, data from sample_blocks
             where user_id = $1 and last_ts >= $2 and first_ts < $3
               and day > $4 and day < $3 and not (first_ts >= $2 and last_ts < $3)
             order by series_type_id, data_source_id, day",
        )
        .await?;
    let day_before = from - Duration::days(1);
    let rows = client.query(&statement, &[&user_id, &from, &to, &day_before]).await?;
    decode_into(&mut out, &rows, |_, ts| ts >= from && ts < to)?;
    Ok(out)
}

/// The sealed samples of `series` inside each window `(source, from, to)`, each sample once
/// however many windows hold it.
pub async fn fetch_windows(
    client: &impl GenericClient,
    user_id: Uuid,
    series: i16,
    windows: &[(Uuid, DateTime<Utc>, DateTime<Utc>)],
) -> Result<SealedRows> {
    let mut out = SealedRows::default();
    if windows.is_empty() {
        return Ok(out);
    }
    let sources: Vec<Uuid> = windows.iter().map(|w| w.0).collect();
    let starts: Vec<DateTime<Utc>> = windows.iter().map(|w| w.1).collect();
    let ends: Vec<DateTime<Utc>> = windows.iter().map(|w| w.2).collect();
    let statement = client
        .prepare_cached(
            "select distinct b.series_type_id, b.data_source_id, b.data, b.day
             from unnest($3::uuid[], $4::timestamptz[], $5::timestamptz[]) as w(src, a, z)
             join sample_blocks b
               on b.user_id = $1 and b.series_type_id = $2 and b.data_source_id = w.src
              and b.day > w.a - interval '1 day' and b.day < w.z
              and b.last_ts >= w.a and b.first_ts < w.z
             order by 1, 2, 4",
        )
        .await?;
    let rows = client.query(&statement, &[&user_id, &series, &sources, &starts, &ends]).await?;
    decode_into(&mut out, &rows, |source, ts| {
        windows.iter().any(|(src, a, z)| *src == source && ts >= *a && ts < *z)
    })?;
    Ok(out)
}

/// Decodes blocks (`series_type_id, data_source_id, data`) into `out`, keeping the samples
/// `keep(source, time)` wants.
fn decode_into(
    out: &mut SealedRows,
    rows: &[tokio_postgres::Row],
    keep: impl Fn(Uuid, DateTime<Utc>) -> bool,
) -> Result<()> {
    for r in rows {
        let (series, source): (i16, Uuid) = (r.try_get(0)?, r.try_get(1)?);
        for s in codec::decode(r.try_get(2)?)? {
            if !keep(source, s.ts) {
                continue;
            }
            out.series.push(series);
            out.sources.push(source);
            out.ts.push(s.ts);
            out.values.push(s.value);
            out.offsets.push(s.zone_offset);
            out.flags.push(s.is_daily_total);
            out.batches.push(s.batch_id);
        }
    }
    Ok(())
}

/// A read-only transaction in one snapshot, for a read of blocks and rows together.
pub async fn snapshot(client: &mut Object) -> Result<Transaction<'_>> {
    Ok(client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await?)
}
