//! A sealed block's local day rollups (what summaries read), kept in its row as `local_figures`
//! instead of `daily_rollups` rows: a row costs ~170 bytes with its index, more than a sparse
//! series' day of samples in its block.
//!
//! Which local days a block keeps ([`held`]): a local day takes its samples from the UTC day of
//! its date and the days either side (zone offsets are bounded to 18 hours), so a block of the
//! UTC days `[first, first + span)` keeps the local days `first + 1` to `first + span - 2`.
//! Every sample that counts in them lies in the block, so a writer that could change one
//! unseals the block first, and unsealing gives the days back as rows: a local day is a row or
//! in its block, never both.
//!
//! Layout, after a version byte, per day in date order: the days since the day before (the
//! first: since the block's first day) as a varint, then its figures as stored: the intraday
//! count, sum, minimum and maximum, the daily-total count and sum. Counts as zigzag varints;
//! numbers ([`put_number`]) as a varint when whole, else their 8 bytes: exact to the bit.

use std::collections::BTreeMap;

use chrono::{Days, NaiveDate};

use super::codec::{CodecError, Reader, put_varint};
use crate::rollups::DayFigures;

const VERSION: u8 = 1;
/// A block's local days' figures, by date.
pub(crate) type HeldDays = BTreeMap<NaiveDate, DayFigures>;

/// The local dates a block of `span` UTC days from `first` keeps (inclusive), if any.
pub(crate) fn held(first: NaiveDate, span: u16) -> Option<(NaiveDate, NaiveDate)> {
    if span < 3 {
        return None;
    }
    let lo = first.checked_add_days(Days::new(1))?;
    let hi = first.checked_add_days(Days::new(u64::from(span) - 2))?;
    Some((lo, hi))
}

/// The bytes of `days` (all among those [`held`] names) of a block from `first`.
pub(crate) fn store(first: NaiveDate, days: &HeldDays) -> Vec<u8> {
    let mut out = vec![VERSION];
    let mut before = first;
    for (date, f) in days {
        put_varint(&mut out, (*date - before).num_days().max(0) as u64);
        before = *date;
        put_varint(&mut out, zigzag(f.sample_count));
        put_number(&mut out, Some(f.value_sum));
        put_number(&mut out, f.value_min);
        put_number(&mut out, f.value_max);
        put_varint(&mut out, zigzag(i64::from(f.total_count)));
        put_number(&mut out, Some(f.total_sum));
    }
    out
}

/// The `local_days` bits of a block of `span` days from `first` keeping `days`, as text:
/// character `i` is `1` when the date `first + i` is kept.
pub(crate) fn bits(first: NaiveDate, span: u16, days: &HeldDays) -> String {
    (0..u64::from(span))
        .map(|i| {
            let kept = first.checked_add_days(Days::new(i)).is_some_and(|d| days.contains_key(&d));
            if kept { '1' } else { '0' }
        })
        .collect()
}

/// The samples `days` count (what a raw page's bound counts a block's local days by).
pub(crate) fn samples(days: &HeldDays) -> i32 {
    let n: i64 = days.values().map(|f| f.sample_count + i64::from(f.total_count)).sum();
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// The days a block from `first` keeps (see [`store`]).
pub(crate) fn load(first: NaiveDate, bytes: &[u8]) -> Result<HeldDays, CodecError> {
    let mut r = Reader::new(bytes);
    let version = r.byte()?;
    if version != VERSION {
        return Err(CodecError::Version(version));
    }
    let mut out = HeldDays::new();
    let mut date = first;
    while !r.is_done() {
        let step = r.varint()?;
        date = date.checked_add_days(Days::new(step)).ok_or(CodecError::Corrupt("local day"))?;
        let sample_count = unzigzag(r.varint()?);
        let value_sum = number(&mut r)?.ok_or(CodecError::Corrupt("local day sum"))?;
        let (value_min, value_max) = (number(&mut r)?, number(&mut r)?);
        let total_count = i32::try_from(unzigzag(r.varint()?))
            .map_err(|_| CodecError::Corrupt("local day total count"))?;
        let total_sum = number(&mut r)?.ok_or(CodecError::Corrupt("local day total"))?;
        let f =
            DayFigures { sample_count, value_sum, value_min, value_max, total_count, total_sum };
        out.insert(date, f);
    }
    Ok(out)
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Whole numbers this small are exact as `f64` and as `i64` both ways.
const WHOLE: f64 = 9_007_199_254_740_992.0;

/// A number or none: `0` for none, `1` and its 8 bytes (little-endian), or `2 +` the zigzag of
/// a whole value (when it comes back to the bit: not `-0.0`).
fn put_number(out: &mut Vec<u8>, v: Option<f64>) {
    match v {
        None => put_varint(out, 0),
        Some(v)
            if v.fract() == 0.0
                && v.abs() < WHOLE
                && (v as i64 as f64).to_bits() == v.to_bits() =>
        {
            put_varint(out, 2 + zigzag(v as i64));
        }
        Some(v) => {
            put_varint(out, 1);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

fn number(r: &mut Reader<'_>) -> Result<Option<f64>, CodecError> {
    match r.varint()? {
        0 => Ok(None),
        1 => {
            Ok(Some(f64::from_le_bytes(r.take(8)?.try_into().map_err(|_| CodecError::Truncated)?)))
        }
        v => Ok(Some(unzigzag(v - 2) as f64)),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn date(d: u64) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 1, 1)
            .and_then(|f| f.checked_add_days(Days::new(d)))
            .unwrap_or_default()
    }

    #[test]
    fn a_block_keeps_its_inner_days() {
        assert_eq!(held(date(0), 2), None);
        assert_eq!(held(date(0), 3), Some((date(1), date(1))));
        assert_eq!(held(date(0), 32), Some((date(1), date(30))));
    }

    fn any_number() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>().prop_filter("finite", |v| v.is_finite()),
            (-1_000_000i64..1_000_000).prop_map(|v| v as f64),
            Just(-0.0),
            Just(WHOLE),
            Just(-WHOLE + 1.0),
        ]
    }

    fn any_figures() -> impl Strategy<Value = DayFigures> {
        (
            any::<i64>(),
            any_number(),
            proptest::option::of(any_number()),
            proptest::option::of(any_number()),
            any::<i32>(),
            any_number(),
        )
            .prop_map(
                |(sample_count, value_sum, value_min, value_max, total_count, total_sum)| {
                    DayFigures {
                        sample_count,
                        value_sum,
                        value_min,
                        value_max,
                        total_count,
                        total_sum,
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn days_come_back_to_the_bit(
            span in 3u16..=40,
            days in proptest::collection::btree_map(0u64..40, any_figures(), 0..40),
        ) {
            let first = date(0);
            let days: HeldDays = days
                .into_iter()
                .filter(|(d, _)| *d >= 1 && *d + 2 <= u64::from(span))
                .map(|(d, f)| (date(d), f))
                .collect();
            let bytes = store(first, &days);
            let back = load(first, &bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(back.len(), days.len());
            for ((d, f), (e, g)) in days.iter().zip(&back) {
                prop_assert_eq!(d, e);
                prop_assert_eq!(f.sample_count, g.sample_count);
                prop_assert_eq!(f.value_sum.to_bits(), g.value_sum.to_bits());
                prop_assert_eq!(f.value_min.map(f64::to_bits), g.value_min.map(f64::to_bits));
                prop_assert_eq!(f.value_max.map(f64::to_bits), g.value_max.map(f64::to_bits));
                prop_assert_eq!(f.total_count, g.total_count);
                prop_assert_eq!(f.total_sum.to_bits(), g.total_sum.to_bits());
            }
            let bits = bits(first, span, &days);
            prop_assert_eq!(bits.len(), usize::from(span));
            prop_assert_eq!(bits.matches('1').count(), days.len());
        }

        #[test]
        fn any_bytes_are_an_error_or_days(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = load(date(0), &bytes);
        }
    }
}
