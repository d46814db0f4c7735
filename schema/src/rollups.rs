//! The rollups of samples, per user-local day (`daily_rollups`, what summaries read), per UTC
//! hour (`hourly_rollups`, what downsampled timeseries pages read) and per UTC day
//! (`utc_day_rollups`, the sum of a day's hours, what `1day` pages read): what new samples add,
//! exact recounts of the days and hours whose samples changed, and full rebuilds.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use chrono::{DateTime, NaiveDate, Utc};
use deadpool_postgres::Transaction;
use futures::pin_mut;
use postgres_types::{ToSql, Type};
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use uuid::Uuid;

use crate::ids::SeriesId;
use crate::ids::UserId;
use crate::sample_row::SampleRow;
use crate::{Result, zone};

const ADD: &str = include_str!("../queries/rollups_add.sql");
const CLEAR: &str = include_str!("../queries/rollups_clear.sql");
const RECOUNT: &str = include_str!("../queries/rollups_recount.sql");
const HOURLY_ADD: &str = include_str!("../queries/hourly_rollups_add.sql");
const HOURLY_CLEAR: &str = include_str!("../queries/hourly_rollups_clear.sql");
const HOURLY_RECOUNT: &str = include_str!("../queries/hourly_rollups_recount.sql");
const UTC_DAY_ADD: &str = include_str!("../queries/utc_day_rollups_add.sql");
const UTC_DAY_RECOUNT: &str = include_str!("../queries/utc_day_rollups_recount.sql");

/// One local day's figures: intraday samples (count, sum, min, max) and samples that are a whole
/// day's total (count, sum) kept apart, as summaries read them. What a `daily_rollups` row holds,
/// and a sealed block for the local days it keeps (`blocks::local_days`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DayFigures {
    pub sample_count: i64,
    pub value_sum: f64,
    pub value_min: Option<f64>,
    pub value_max: Option<f64>,
    pub total_count: i32,
    pub total_sum: f64,
}

impl DayFigures {
    /// The day's total of an additive series: the source's own daily total where it gave one,
    /// else the sum of its intraday samples (never both: they count the same steps).
    pub fn total(&self) -> f64 {
        if self.total_count > 0 { self.total_sum } else { self.value_sum }
    }

    /// The day's mean of a level.
    pub fn mean(&self) -> Option<f64> {
        if self.sample_count > 0 {
            Some(self.value_sum / self.sample_count as f64)
        } else if self.total_count > 0 {
            Some(self.total_sum / f64::from(self.total_count))
        } else {
            None
        }
    }

    /// Figures from a row's `sample_count, value_sum, value_min, value_max, total_count,
    /// total_sum`, from column `at` on.
    pub(crate) fn from_row(r: &tokio_postgres::Row, at: usize) -> Result<DayFigures> {
        Ok(DayFigures {
            sample_count: r.try_get(at)?,
            value_sum: r.try_get(at + 1)?,
            value_min: r.try_get(at + 2)?,
            value_max: r.try_get(at + 3)?,
            total_count: r.try_get(at + 4)?,
            total_sum: r.try_get(at + 5)?,
        })
    }
}

/// Local day figures by (series, source, local date): what `daily_rollups` rows hold.
pub(crate) type LocalDays = BTreeMap<(SeriesId, Uuid, NaiveDate), DayFigures>;

/// One UTC hour's figures: sums of intraday samples and of daily totals apart; the maximum and
/// the least zone offset over every sample. What `hourly_rollups` holds, and a sealed day's
/// block for its hours (`blocks::hours`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HourFigures {
    pub sample_count: i32,
    pub value_sum: f64,
    pub total_count: i32,
    pub total_sum: f64,
    pub value_max: f64,
    pub zone_offset: Option<i16>,
}

impl HourFigures {
    /// The figures of an hour whose first sample (in the order they are counted) is this one.
    pub fn of(value: f64, is_daily_total: Option<bool>, zone_offset: Option<i16>) -> HourFigures {
        let mut f = HourFigures {
            sample_count: 0,
            value_sum: 0.0,
            total_count: 0,
            total_sum: 0.0,
            value_max: value,
            zone_offset,
        };
        f.add(value, is_daily_total, zone_offset);
        f
    }

    /// Counts one more sample of the hour in.
    pub fn add(&mut self, value: f64, is_daily_total: Option<bool>, zone_offset: Option<i16>) {
        if is_daily_total == Some(true) {
            self.total_count += 1;
            self.total_sum += value;
        } else {
            self.sample_count += 1;
            self.value_sum += value;
        }
        self.value_max = self.value_max.max(value);
        self.zone_offset = least(self.zone_offset, zone_offset);
    }

    /// Counts another span's figures in (an hour's into its UTC day's), as SQL's `sum`, `max`
    /// and `min` over the hours do.
    pub fn merge(&mut self, other: &HourFigures) {
        self.sample_count += other.sample_count;
        self.value_sum += other.value_sum;
        self.total_count += other.total_count;
        self.total_sum += other.total_sum;
        self.value_max = self.value_max.max(other.value_max);
        self.zone_offset = least(self.zone_offset, other.zone_offset);
    }

    /// The same figures to the bit (`-0.0` is not `0.0` here).
    pub fn same(&self, other: &HourFigures) -> bool {
        self.sample_count == other.sample_count
            && self.value_sum.to_bits() == other.value_sum.to_bits()
            && self.total_count == other.total_count
            && self.total_sum.to_bits() == other.total_sum.to_bits()
            && self.value_max.to_bits() == other.value_max.to_bits()
            && self.zone_offset == other.zone_offset
    }
}

/// SQL's `least()` of two zone offsets: an unknown one counts for nothing.
fn least(a: Option<i16>, b: Option<i16>) -> Option<i16> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Hours' figures of one user as the parallel arrays the hourly rollups' statements read
/// ([`HourRows::params`]: series, source, hour, then the figures in `hourly_rollups`' order).
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct HourRows {
    pub series: Vec<SeriesId>,
    pub sources: Vec<Uuid>,
    pub hours: Vec<DateTime<Utc>>,
    pub counts: Vec<i32>,
    pub sums: Vec<f64>,
    pub total_counts: Vec<i32>,
    pub total_sums: Vec<f64>,
    pub maxes: Vec<f64>,
    pub offsets: Vec<Option<i16>>,
}

impl HourRows {
    pub(crate) fn push(
        &mut self,
        series: SeriesId,
        source: Uuid,
        hour: DateTime<Utc>,
        f: &HourFigures,
    ) {
        self.series.push(series);
        self.sources.push(source);
        self.hours.push(hour);
        self.counts.push(f.sample_count);
        self.sums.push(f.value_sum);
        self.total_counts.push(f.total_count);
        self.total_sums.push(f.total_sum);
        self.maxes.push(f.value_max);
        self.offsets.push(f.zone_offset);
    }

    pub(crate) fn len(&self) -> usize {
        self.hours.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.hours.is_empty()
    }

    /// Sorts the rows by series, source and hour.
    pub(crate) fn sort(&mut self) {
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_by_key(|&i| (self.series[i], self.sources[i], self.hours[i]));
        fn by<T: Clone>(v: &[T], order: &[usize]) -> Vec<T> {
            order.iter().map(|&i| v[i].clone()).collect()
        }
        *self = HourRows {
            series: by(&self.series, &order),
            sources: by(&self.sources, &order),
            hours: by(&self.hours, &order),
            counts: by(&self.counts, &order),
            sums: by(&self.sums, &order),
            total_counts: by(&self.total_counts, &order),
            total_sums: by(&self.total_sums, &order),
            maxes: by(&self.maxes, &order),
            offsets: by(&self.offsets, &order),
        };
    }

    /// The arrays: series, source, hour, intraday count and sum, daily-total count and sum,
    /// maximum, least zone offset.
    pub(crate) fn params(&self) -> [&(dyn ToSql + Sync); 9] {
        [
            &self.series,
            &self.sources,
            &self.hours,
            &self.counts,
            &self.sums,
            &self.total_counts,
            &self.total_sums,
            &self.maxes,
            &self.offsets,
        ]
    }

    /// Writes the rows as new rows of `user_id` of the rollups of `span` (spans that have
    /// none), marked changed now.
    pub(crate) async fn insert(
        &self,
        tx: &Transaction<'_>,
        user_id: UserId,
        span: Span,
    ) -> Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        let (table, column) = match span {
            Span::Hour => ("hourly_rollups", "hour"),
            Span::UtcDay => ("utc_day_rollups", "day"),
        };
        let params = [&[&user_id as &(dyn ToSql + Sync)][..], &self.params()[..]].concat();
        let sql = format!(
            "insert into {table}
                 (user_id, series_type_id, data_source_id, {column}, sample_count, value_sum,
                  total_count, total_sum, value_max, zone_offset)
             select $1, * from unnest($2::smallint[], $3::uuid[], $4::timestamptz[],
                                      $5::integer[], $6::float8[], $7::integer[], $8::float8[],
                                      $9::float8[], $10::smallint[])"
        );
        tx.execute(&sql, &params[..]).await?;
        Ok(())
    }
}

impl<'a> FromIterator<(&'a HourKey, &'a HourFigures)> for HourRows {
    fn from_iter<I: IntoIterator<Item = (&'a HourKey, &'a HourFigures)>>(rows: I) -> HourRows {
        let mut out = HourRows::default();
        for (&(series, source, hour), f) in rows {
            out.push(series, source, hour, f);
        }
        out
    }
}

/// The span a row of [`HourRows`] stands for: an hour (`hourly_rollups`) or a UTC day
/// (`utc_day_rollups`, whose columns are the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    Hour,
    UtcDay,
}

/// A rollup's key: series, source, and the hour (or UTC day) it starts.
type HourKey = (SeriesId, Uuid, DateTime<Utc>);

/// The UTC hour a sample belongs to.
pub(crate) fn hour_of(ts: DateTime<Utc>) -> DateTime<Utc> {
    floor_to(ts, 3600)
}

/// The start of the UTC bucket of `width` seconds that holds `ts` (as `time_bucket` has it, for
/// widths that divide a day).
pub(crate) fn floor_to(ts: DateTime<Utc>, width: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(ts.timestamp().div_euclid(width) * width, 0).unwrap_or(ts)
}

/// What new samples add to their (series, source, local day) and (series, source, UTC hour)
/// rollups, gathered before one statement each writes them.
#[derive(Debug, Default)]
pub(crate) struct Additions {
    days: LocalDays,
    hours: BTreeMap<HourKey, HourFigures>,
}

impl Additions {
    /// Counts a newly stored sample into its day and its hour.
    pub(crate) fn add(&mut self, r: &SampleRow) {
        let day = zone::local_day(r.ts, r.zone_offset);
        let f = self.days.entry((r.series_type_id, r.data_source_id, day)).or_default();
        let total = r.is_daily_total == Some(true);
        if total {
            f.total_count += 1;
            f.total_sum += r.value;
        } else {
            f.sample_count += 1;
            f.value_sum += r.value;
            f.value_min = Some(f.value_min.map_or(r.value, |m| m.min(r.value)));
            f.value_max = Some(f.value_max.map_or(r.value, |m| m.max(r.value)));
        }
        let hour = (r.series_type_id, r.data_source_id, hour_of(r.ts));
        match self.hours.entry(hour) {
            Entry::Vacant(v) => {
                v.insert(HourFigures::of(r.value, r.is_daily_total, r.zone_offset));
            }
            Entry::Occupied(mut o) => o.get_mut().add(r.value, r.is_daily_total, r.zone_offset),
        }
    }

    /// Adds the gathered figures to the stored rollups; returns the rows written.
    pub(crate) async fn write(self, tx: &Transaction<'_>, user_id: UserId) -> Result<u64> {
        let hours = write_hours(tx, user_id, self.hours).await?;
        Ok(hours + write_days(tx, user_id, self.days).await?)
    }
}

/// Adds `days` to the stored local day rollups (a day without a row gets one); returns the rows
/// written.
pub(crate) async fn write_days(
    tx: &Transaction<'_>,
    user_id: UserId,
    days: LocalDays,
) -> Result<u64> {
    if days.is_empty() {
        return Ok(0);
    }
    let n = days.len();
    let mut keys = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let mut intraday = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut extremes = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut totals = (Vec::with_capacity(n), Vec::with_capacity(n));
    for ((series, source, day), f) in days {
        keys.0.push(series);
        keys.1.push(source);
        keys.2.push(day);
        intraday.0.push(f.sample_count);
        intraday.1.push(f.value_sum);
        extremes.0.push(f.value_min);
        extremes.1.push(f.value_max);
        totals.0.push(f.total_count);
        totals.1.push(f.total_sum);
    }
    let add = tx.prepare_cached(ADD).await?;
    Ok(tx
        .execute(
            &add,
            &[
                &user_id,
                &keys.0,
                &keys.1,
                &keys.2,
                &intraday.0,
                &intraday.1,
                &extremes.0,
                &extremes.1,
                &totals.0,
                &totals.1,
            ],
        )
        .await?)
}

async fn write_hours(
    tx: &Transaction<'_>,
    user_id: UserId,
    hours: BTreeMap<HourKey, HourFigures>,
) -> Result<u64> {
    if hours.is_empty() {
        return Ok(0);
    }
    // The hours between a series' first and last of the batch are new unless another batch
    // stored samples in them: copied in as new rows (half the cost of the upsert), the rest
    // upserted. An import's chunks split a series' run between them, so a chunk's first and
    // last hour of each series may hold samples of the chunk before or after it.
    let (edges, inner) = edges_and_inner(&hours);
    let mut written = 0;
    let upserts = if inner.len() >= COPY_HOURS_FROM && copy_new_hours(tx, user_id, &inner).await? {
        written += inner.len() as u64;
        edges
    } else {
        hours.iter().collect()
    };
    // The hours, then their days, summed here from the same figures (the hours come in key
    // order, so a day's hours are adjacent and summed in time order): a day's row is sent
    // instead of its hours a second time.
    let days = utc_days(&hours);
    for (sql, rows) in [(HOURLY_ADD, &upserts), (UTC_DAY_ADD, &days)] {
        if rows.is_empty() {
            continue;
        }
        let params = [&[&user_id as &(dyn ToSql + Sync)][..], &rows.params()[..]].concat();
        let add = tx.prepare_cached(sql).await?;
        written += tx.execute(&add, &params[..]).await?;
    }
    Ok(written)
}

/// Below this many hours between the edges a batch's hours are all upserted: the savepoint and
/// COPY of [`copy_new_hours`] pay off for an import's chunk, not for a phone's batch.
const COPY_HOURS_FROM: usize = 256;

/// `hours` split into each (series, source)'s first and last hour, and the hours between them,
/// both in key order.
fn edges_and_inner(hours: &BTreeMap<HourKey, HourFigures>) -> (HourRows, HourRows) {
    let (mut edges, mut inner) = (HourRows::default(), HourRows::default());
    let keys: Vec<(&HourKey, &HourFigures)> = hours.iter().collect();
    let run = |i: usize| keys.get(i).map(|((series, source, _), _)| (*series, *source));
    for (i, &(&(series, source, hour), f)) in keys.iter().enumerate() {
        let first = i == 0 || run(i - 1) != Some((series, source));
        let last = run(i + 1) != Some((series, source));
        let rows = if first || last { &mut edges } else { &mut inner };
        rows.push(series, source, hour, f);
    }
    (edges, inner)
}

/// Copies hours that no row holds yet straight into `hourly_rollups`; `false` when one of them
/// is there already, and nothing is written then (the savepoint is rolled back).
async fn copy_new_hours(tx: &Transaction<'_>, user_id: UserId, rows: &HourRows) -> Result<bool> {
    crate::db::copied_if_new(tx, "hours_new", copy_hours(tx, user_id, rows)).await
}

async fn copy_hours(
    tx: &Transaction<'_>,
    user_id: UserId,
    rows: &HourRows,
) -> Result<(), tokio_postgres::Error> {
    const TYPES: [Type; 10] = [
        Type::UUID,
        Type::INT2,
        Type::UUID,
        Type::TIMESTAMPTZ,
        Type::INT4,
        Type::FLOAT8,
        Type::INT4,
        Type::FLOAT8,
        Type::FLOAT8,
        Type::INT2,
    ];
    let sink = tx
        .copy_in(
            "copy hourly_rollups (user_id, series_type_id, data_source_id, hour, sample_count,
                 value_sum, total_count, total_sum, value_max, zone_offset) from stdin binary",
        )
        .await?;
    let writer = BinaryCopyInWriter::new(sink, &TYPES);
    pin_mut!(writer);
    for i in 0..rows.len() {
        writer
            .as_mut()
            .write(&[
                &user_id,
                &rows.series[i],
                &rows.sources[i],
                &rows.hours[i],
                &rows.counts[i],
                &rows.sums[i],
                &rows.total_counts[i],
                &rows.total_sums[i],
                &rows.maxes[i],
                &rows.offsets[i],
            ])
            .await?;
    }
    writer.finish().await?;
    Ok(())
}

/// The UTC days of `hours`, each the sum of its hours, in key order.
fn utc_days(hours: &BTreeMap<HourKey, HourFigures>) -> HourRows {
    let mut days: Vec<(HourKey, HourFigures)> = Vec::new();
    for (&(series, source, hour), f) in hours {
        let key = (series, source, floor_to(hour, 86_400));
        match days.last_mut() {
            Some((last, sum)) if *last == key => sum.merge(f),
            _ => days.push((key, *f)),
        }
    }
    days.iter().map(|(key, f)| (key, f)).collect()
}

/// Recounts, from the raw samples, the days listed in the session's `samples_touched` (and
/// their neighbours).
pub(crate) async fn recount_touched(tx: &Transaction<'_>, user_id: UserId) -> Result<()> {
    for statement in [CLEAR, RECOUNT, HOURLY_CLEAR, HOURLY_RECOUNT, UTC_DAY_RECOUNT] {
        tx.execute(statement, &[&user_id]).await?;
    }
    Ok(())
}

/// Recounts, from the raw samples, the local day rollups of the days listed in the session's
/// `samples_touched` and their neighbours (not their hours or UTC days).
pub(crate) async fn recount_local_days(tx: &Transaction<'_>, user_id: UserId) -> Result<()> {
    for statement in [CLEAR, RECOUNT] {
        tx.execute(statement, &[&user_id]).await?;
    }
    Ok(())
}

/// Rebuilds all of a user's rollups from their row-wise samples. The caller holds the user's
/// exclusive writer lock and has moved sealed days back into rows
/// ([`crate::samples::rebuild_rollups`]).
pub(crate) async fn rebuild_all(tx: &Transaction<'_>, user_id: UserId) -> Result<()> {
    for table in ["daily_rollups", "hourly_rollups", "utc_day_rollups"] {
        tx.execute(&format!("delete from {table} where user_id = $1"), &[&user_id]).await?;
    }
    tx.execute(
        "insert into samples_touched (series_type_id, data_source_id, local_date, hour)
         select distinct series_type_id, data_source_id, local_day(ts, zone_offset),
                time_bucket(interval '1 hour', ts)
         from samples where user_id = $1",
        &[&user_id],
    )
    .await?;
    recount_touched(tx, user_id).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(hours: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_767_225_600 + hours * 3600, 0).unwrap_or_default()
    }

    fn hours(keys: &[(i16, u128, i64, f64, Option<i16>)]) -> BTreeMap<HourKey, HourFigures> {
        let mut out = BTreeMap::new();
        for &(series, source, hour, value, offset) in keys {
            out.insert(
                (SeriesId(series), Uuid::from_u128(source), at(hour)),
                HourFigures::of(value, None, offset),
            );
        }
        out
    }

    #[test]
    fn a_utc_day_is_the_sum_of_its_hours() {
        // 2026-01-01T00:00Z is hour 0: hours 0 and 23 are one day, 24 the next.
        let h = hours(&[
            (1, 1, 0, 60.0, Some(60)),
            (1, 1, 23, 80.0, Some(-300)),
            (1, 1, 24, 70.0, None),
            (1, 2, 5, 10.0, None),
            (2, 1, 5, 3.0, None),
        ]);
        let days = utc_days(&h);
        assert_eq!(days.hours, [at(0), at(24), at(0), at(0)]);
        assert_eq!(days.series, [1, 1, 1, 2].map(SeriesId));
        assert_eq!(days.sources[..3], [Uuid::from_u128(1), Uuid::from_u128(1), Uuid::from_u128(2)]);
        assert_eq!(days.counts, [2, 1, 1, 1]);
        assert_eq!(days.sums, [140.0, 70.0, 10.0, 3.0]);
        assert_eq!(days.maxes, [80.0, 70.0, 10.0, 3.0]);
        assert_eq!(days.offsets, [Some(-300), None, None, None]);
    }

    #[test]
    fn a_series_first_and_last_hours_are_its_edges() {
        let h = hours(&[
            (1, 1, 0, 1.0, None),
            (1, 1, 1, 1.0, None),
            (1, 1, 2, 1.0, None),
            (1, 1, 3, 1.0, None),
            (1, 2, 1, 1.0, None),
            (2, 1, 0, 1.0, None),
            (2, 1, 1, 1.0, None),
            (2, 1, 2, 1.0, None),
        ]);
        let (edges, inner) = edges_and_inner(&h);
        assert_eq!(inner.series, [1, 1, 2].map(SeriesId));
        assert_eq!(inner.hours, [at(1), at(2), at(1)]);
        assert_eq!(edges.series, [1, 1, 1, 2, 2].map(SeriesId));
        assert_eq!(edges.hours, [at(0), at(3), at(1), at(0), at(2)]);
        assert_eq!(edges.len() + inner.len(), h.len());
    }
}
