//! Sealed samples downsampled into a sub-hour page's buckets before its statement reads them.
//!
//! A page of a dense series at `15min` reads fifteen samples a bucket: handed to the statement
//! one by one, they cost it an unnest, a sort and an ordered aggregate each (a heavy user's page
//! spent 3.4 ms in PostgreSQL so, 1,515 samples for 101 buckets). A bucket shorter than an hour
//! lies inside one UTC day, and a day is in rows or in its block, never both: a sealed bucket's
//! samples are all sealed. So the sealed buckets are aggregated here, once, and the statement
//! takes them beside the buckets it aggregates from rows (`timeseries_subhour.sql`).
//!
//! [`Bucket::of`] is that statement's aggregation over one bucket's samples, bit for bit: its
//! sums add in time order as PostgreSQL's `sum(float8)` does (from the first value), its means
//! as `avg(float8)` does (from zero, then divided by the count), its maxima keep the later of
//! equal values as `float8larger` does. Where PostgreSQL would stop with an overflow instead of
//! answering, these samples are not aggregated here ([`SealedBuckets::of`] gives `None`) and go to
//! the statement as samples, so that it answers (or fails) as it always has. The sealing tests
//! compare every sub-hour page before and after sealing, byte for byte.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use super::read::{Runs, SealedRows, runs_sql};
use crate::catalogue::series_types::Aggregation;
use crate::ids::SeriesId;

/// Beyond this magnitude a value's square could overflow PostgreSQL's running sums of `avg`
/// (which errors then): samples of such values are left to the statement.
const SAFE_MAGNITUDE: f64 = 1e100;

/// One bucket's figures, as the statement's `select` has them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Bucket {
    pub value: f64,
    pub zone_offset: Option<i16>,
    pub is_daily_total: Option<bool>,
}

/// A sample of a bucket: its time, value, zone offset and daily-total flag.
pub(crate) type BucketSample = (DateTime<Utc>, f64, Option<i16>, Option<bool>);

impl Bucket {
    /// The figures of a bucket's samples (at least one) of a series aggregated by `agg`:
    /// additive series sum their intraday samples (all of them when every one is a daily
    /// total), levels average, best efforts take the largest. `None` for no sample, or where
    /// PostgreSQL's arithmetic would overflow.
    pub(super) fn of(agg: Aggregation, samples: &mut [BucketSample]) -> Option<Bucket> {
        samples.sort_by_key(|s| s.0);
        let values = || samples.iter().map(|s| s.1);
        let value = match agg {
            Aggregation::Sum => {
                let intraday = samples.iter().filter(|s| !s.3.unwrap_or(false)).map(|s| s.1);
                match sum(intraday) {
                    Some(v) => Some(v),
                    None => sum(values()),
                }
            }
            Aggregation::Max => values().reduce(|max, v| if max > v { max } else { v }),
            Aggregation::Avg => {
                let total = values().fold(0.0, |s, v| s + v);
                (!samples.is_empty()).then(|| total / samples.len() as f64)
            }
        }?;
        if !value.is_finite() {
            return None;
        }
        Some(Bucket {
            value,
            zone_offset: samples.iter().filter_map(|s| s.2).min(),
            is_daily_total: (agg == Aggregation::Sum)
                .then(|| samples.iter().all(|s| s.3 == Some(true))),
        })
    }
}

/// `sum(float8)`: from the first value on (`-0.0` alone stays `-0.0`); `None` for none.
fn sum(values: impl Iterator<Item = f64>) -> Option<f64> {
    values.reduce(|s, v| s + v)
}

/// Sealed buckets, as the parallel arrays [`buckets_sql`] reads: by series, source and time,
/// each (series, source) a run.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct SealedBuckets {
    runs: Runs,
    ts: Vec<DateTime<Utc>>,
    values: Vec<f64>,
    offsets: Vec<Option<i16>>,
    flags: Vec<Option<bool>>,
}

impl SealedBuckets {
    /// The sealed samples aggregated into UTC buckets of `width` seconds (a divisor of an hour),
    /// each series by `agg(series)`. `None` when a value is too large to be summed as
    /// PostgreSQL would (see the module's documentation).
    pub(crate) fn of(
        rows: &SealedRows,
        width: i64,
        agg: impl Fn(SeriesId) -> Aggregation,
    ) -> Option<SealedBuckets> {
        if rows.values.iter().any(|v| v.abs() > SAFE_MAGNITUDE) {
            return None;
        }
        let mut groups: BTreeMap<(SeriesId, Uuid, DateTime<Utc>), Vec<BucketSample>> =
            BTreeMap::new();
        for i in 0..rows.len() {
            let bucket = crate::rollups::floor_to(rows.ts[i], width);
            let sample = (rows.ts[i], rows.values[i], rows.offsets[i], rows.flags[i]);
            groups.entry((rows.series[i], rows.sources[i], bucket)).or_default().push(sample);
        }
        let mut out = SealedBuckets::default();
        for ((series, source, ts), mut samples) in groups {
            let b = Bucket::of(agg(series), &mut samples)?;
            out.runs.note(series, source, out.ts.len());
            out.ts.push(ts);
            out.values.push(b.value);
            out.offsets.push(b.zone_offset);
            out.flags.push(b.is_daily_total);
        }
        Some(out)
    }

    /// The statement's parameters, in [`buckets_sql`]'s order.
    pub(crate) fn params(&self) -> [&(dyn ToSql + Sync); 8] {
        let [series, sources, first, last] = self.runs.params();
        [series, sources, first, last, &self.ts, &self.values, &self.offsets, &self.flags]
    }
}

/// SQL for the sealed buckets of parameters `$first` to `$first + 7` ([`SealedBuckets::params`])
/// of one series and source (the SQL expressions `series` and `source`), with columns `ts`,
/// `value`, `zone_offset` and `is_daily_total`, as `alias`.
pub(crate) fn buckets_sql(first: usize, series: &str, source: &str, alias: &str) -> String {
    let columns = [
        ("ts", "timestamptz"),
        ("value", "float8"),
        ("zone_offset", "smallint"),
        ("is_daily_total", "boolean"),
    ];
    runs_sql(first, &format!("k.s = {series} and k.d = {source}"), &columns, alias)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(s, 0).unwrap_or_default()
    }

    #[test]
    fn sums_add_intraday_samples_in_time_order_from_the_first() {
        // Out of order: added as 0.1 + 0.2 + 0.3 by time, not 0.3 + 0.1 + 0.2.
        let mut s = vec![
            (at(3), 0.3, None, Some(false)),
            (at(1), 0.1, Some(60), None),
            (at(2), 0.2, Some(-60), Some(false)),
        ];
        let b = Bucket::of(Aggregation::Sum, &mut s).expect("a bucket");
        assert_eq!(b.value.to_bits(), (0.1f64 + 0.2 + 0.3).to_bits());
        assert_eq!(b.zone_offset, Some(-60));
        assert_eq!(b.is_daily_total, Some(false));
        // A daily total beside intraday samples is left out; alone, it is the value.
        let mut s = vec![(at(1), 5.0, None, Some(true)), (at(2), 2.0, None, None)];
        assert_eq!(Bucket::of(Aggregation::Sum, &mut s).map(|b| b.value), Some(2.0));
        let mut s = vec![(at(1), 5.0, None, Some(true))];
        let b = Bucket::of(Aggregation::Sum, &mut s).expect("a bucket");
        assert_eq!((b.value, b.is_daily_total), (5.0, Some(true)));
        // -0.0 alone stays -0.0 in a sum, and becomes 0.0 in a mean (added to zero).
        let mut s = vec![(at(1), -0.0, None, None)];
        assert!(Bucket::of(Aggregation::Sum, &mut s).is_some_and(|b| b.value.is_sign_negative()));
        assert!(Bucket::of(Aggregation::Avg, &mut s).is_some_and(|b| b.value.is_sign_positive()));
    }

    #[test]
    fn means_divide_the_sum_from_zero_by_the_count_and_maxima_keep_the_later_of_equals() {
        let mut s =
            vec![(at(2), 0.2, None, None), (at(1), 0.1, None, None), (at(3), 0.4, None, None)];
        let b = Bucket::of(Aggregation::Avg, &mut s).expect("a bucket");
        assert_eq!(b.value.to_bits(), ((0.0 + 0.1 + 0.2 + 0.4) / 3.0f64).to_bits());
        assert_eq!((b.zone_offset, b.is_daily_total), (None, None));
        let mut s = vec![(at(1), 0.0, None, None), (at(2), -0.0, None, None)];
        assert!(Bucket::of(Aggregation::Max, &mut s).is_some_and(|b| b.value.is_sign_negative()));
    }

    #[test]
    fn what_would_overflow_is_left_to_the_statement() {
        let mut s = vec![(at(1), f64::MAX, None, None), (at(2), f64::MAX, None, None)];
        assert_eq!(Bucket::of(Aggregation::Sum, &mut s), None);
        let mut rows = SealedRows::default();
        rows.push_sample(SeriesId(1), Uuid::nil(), (at(1), 1e200, None, None));
        assert_eq!(SealedBuckets::of(&rows, 900, |_| Aggregation::Avg), None);
    }

    #[test]
    fn buckets_lie_by_series_source_and_time_in_runs() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let mut rows = SealedRows::default();
        for (series, source, t, v) in
            [(1, b, 910, 1.0), (1, a, 1000, 2.0), (1, a, 10, 3.0), (1, a, 20, 4.0), (2, a, 5, 5.0)]
        {
            rows.push_sample(SeriesId(series), source, (at(t), v, None, None));
        }
        let got = SealedBuckets::of(&rows, 900, |_| Aggregation::Avg).expect("buckets");
        assert_eq!(got.ts, vec![at(0), at(900), at(900), at(0)]);
        assert_eq!(got.values, vec![3.5, 2.0, 1.0, 5.0]);
        let mut runs = Runs::default();
        for (i, (series, source)) in [(1, a), (1, a), (1, b), (2, a)].into_iter().enumerate() {
            runs.note(SeriesId(series), source, i);
        }
        assert_eq!(got.runs, runs);
    }
}
