//! A sealed block's UTC day rollups (what `1day` pages read), kept in its row as `day_figures`
//! instead of `utc_day_rollups` rows: a row a day (~210 bytes with its key) cost more than a
//! sparse series' day of samples, and an array element a day per figure still ~35 bytes.
//!
//! As with the hours ([`super::hours`]), a day's figures nearly always follow from its samples
//! counted in time order, so only the days whose stored figures differ to the bit (summed batch
//! by batch in another order) or that have none are written out.
//!
//! Layout, after a version byte, per day kept: its index from the block's first day (`u16`),
//! 0 for a day without figures or 1 and its figures: the intraday count (`i32`) and sum, the
//! daily-total count (`i32`) and sum, the maximum (`f64`), and the least zone offset (0 for
//! none, or 1 and the `i16`). Fixed widths, big-endian, as PostgreSQL's `int4send` and
//! `float8send` write them: migration V26 writes the figures of the blocks sealed before it so.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::codec::{BlockSample, CodecError, Reader};
use super::hours::{count_by, slot};
use crate::rollups::HourFigures;

const VERSION: u8 = 1;
const DAY: i64 = 86_400;
/// A block's day figures, by the day's index from its first day.
pub(crate) type SpanDays = BTreeMap<u16, HourFigures>;

/// Each day's figures counted from a block's samples in time order (its first `span` days from
/// `first`, a UTC midnight).
pub(super) fn derive(first: DateTime<Utc>, span: u16, samples: &[BlockSample]) -> SpanDays {
    count_by(samples, |ts| slot(first, DAY, span, ts))
}

/// The rule of which blocks keep every day's figures written out: those with more than 64
/// samples a day with figures.
fn dense(samples: usize, days: usize) -> bool {
    samples > 64 * days
}

/// How a block of `span` days from `first` keeps `stored`, its days' figures, beside its
/// `samples`: the days [`derive`] does not give as stored.
pub(super) fn store(
    first: DateTime<Utc>,
    span: u16,
    samples: &[BlockSample],
    stored: &SpanDays,
) -> Vec<u8> {
    // A dense block keeps every day's figures: a page of days then reads them without decoding
    // its samples (a few bytes against thousands of samples).
    let dense = dense(samples.len(), stored.len());
    let derived = derive(first, span, samples);
    let mut out = vec![VERSION];
    let days: std::collections::BTreeSet<u16> =
        derived.keys().chain(stored.range(..span).map(|(d, _)| d)).copied().collect();
    for d in days {
        match (stored.get(&d), derived.get(&d)) {
            (Some(f), Some(g)) if !dense && f.same(g) => {}
            (None, _) => {
                out.extend_from_slice(&d.to_be_bytes());
                out.push(0);
            }
            (Some(f), _) => {
                out.extend_from_slice(&d.to_be_bytes());
                out.push(1);
                out.extend_from_slice(&f.sample_count.to_be_bytes());
                out.extend_from_slice(&f.value_sum.to_be_bytes());
                out.extend_from_slice(&f.total_count.to_be_bytes());
                out.extend_from_slice(&f.total_sum.to_be_bytes());
                out.extend_from_slice(&f.value_max.to_be_bytes());
                match f.zone_offset {
                    None => out.push(0),
                    Some(o) => {
                        out.push(1);
                        out.extend_from_slice(&o.to_be_bytes());
                    }
                }
            }
        }
    }
    out
}

/// The `days` bits of a block of `span` days whose days have `stored` figures, as text:
/// character `d` is `1` when day `d` has figures.
pub(super) fn bits(span: u16, stored: &SpanDays) -> String {
    (0..span).map(|d| if stored.contains_key(&d) { '1' } else { '0' }).collect()
}

/// The day figures a block row keeps, when they are all written out (a dense block's, see
/// [`store`]): `bits` is its `days` as text. `None` when some are to be derived from its
/// samples ([`load`]).
pub(crate) fn load_written(
    span: u16,
    bits: &str,
    bytes: &[u8],
) -> Result<Option<SpanDays>, CodecError> {
    let written = load(DateTime::<Utc>::MIN_UTC, span, &[], bytes)?;
    let all = bits
        .bytes()
        .enumerate()
        .all(|(d, b)| b != b'1' || u16::try_from(d).is_ok_and(|d| written.contains_key(&d)));
    Ok(all.then_some(written))
}

/// The day figures a block row keeps (see [`store`]).
pub(super) fn load(
    first: DateTime<Utc>,
    span: u16,
    samples: &[BlockSample],
    bytes: &[u8],
) -> Result<SpanDays, CodecError> {
    let mut days = derive(first, span, samples);
    let mut r = Reader::new(bytes);
    let version = r.byte()?;
    if version != VERSION {
        return Err(CodecError::Version(version));
    }
    let be = |bytes: &[u8]| -> Result<[u8; 8], CodecError> {
        bytes.try_into().map_err(|_| CodecError::Truncated)
    };
    let int = |r: &mut Reader<'_>| -> Result<i32, CodecError> {
        Ok(i32::from_be_bytes(r.take(4)?.try_into().map_err(|_| CodecError::Truncated)?))
    };
    let float =
        |r: &mut Reader<'_>| -> Result<f64, CodecError> { Ok(f64::from_be_bytes(be(r.take(8)?)?)) };
    while !r.is_done() {
        let d = u16::from_be_bytes(r.take(2)?.try_into().map_err(|_| CodecError::Truncated)?);
        if d >= span {
            return Err(CodecError::Corrupt("day"));
        }
        match r.byte()? {
            0 => {
                days.remove(&d);
            }
            1 => {
                let sample_count = int(&mut r)?;
                let value_sum = float(&mut r)?;
                let total_count = int(&mut r)?;
                let total_sum = float(&mut r)?;
                let value_max = float(&mut r)?;
                let zone_offset = match r.byte()? {
                    0 => None,
                    1 => Some(i16::from_be_bytes(
                        r.take(2)?.try_into().map_err(|_| CodecError::Truncated)?,
                    )),
                    _ => return Err(CodecError::Corrupt("day offset")),
                };
                let f = HourFigures {
                    sample_count,
                    value_sum,
                    total_count,
                    total_sum,
                    value_max,
                    zone_offset,
                };
                days.insert(d, f);
            }
            _ => return Err(CodecError::Corrupt("day kind")),
        }
    }
    Ok(days)
}

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use proptest::prelude::*;

    use super::*;

    fn first() -> DateTime<Utc> {
        DateTime::from_timestamp(20_000 * DAY, 0).unwrap_or_default()
    }

    fn sample(secs: i64, value: f64, total: Option<bool>, offset: Option<i16>) -> BlockSample {
        BlockSample {
            ts: first() + Duration::seconds(secs),
            value,
            zone_offset: offset,
            is_daily_total: total,
            batch_id: None,
        }
    }

    fn same(a: &SpanDays, b: &SpanDays) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|((h, f), (k, g))| h == k && f.same(g))
    }

    #[test]
    fn days_the_samples_give_cost_a_byte() {
        let samples = [sample(10, 1.5, None, Some(60)), sample(2 * DAY + 5, 9.0, Some(true), None)];
        let stored = derive(first(), 3, &samples);
        assert_eq!(store(first(), 3, &samples, &stored), vec![VERSION]);
        let back = load(first(), 3, &samples, &[VERSION]).expect("load");
        assert!(same(&back, &stored));
        assert_eq!((back[&2].total_count, back[&2].total_sum), (1, 9.0));
    }

    /// What migration V26 writes for a block of a day sealed before it, in SQL:
    /// `'\x01'::bytea || '\x0000' || '\x01' || int4send(..) || float8send(..) || ...`.
    #[test]
    fn the_migrations_layout_reads_back() {
        let samples = [sample(10, 2.0, None, None)];
        let mut bytes = vec![VERSION, 0, 0, 1];
        bytes.extend_from_slice(&7i32.to_be_bytes());
        bytes.extend_from_slice(&0.3f64.to_be_bytes());
        bytes.extend_from_slice(&0i32.to_be_bytes());
        bytes.extend_from_slice(&0f64.to_be_bytes());
        bytes.extend_from_slice(&5f64.to_be_bytes());
        bytes.extend_from_slice(&[1, 0xff, 0x88]);
        let back = load(first(), 1, &samples, &bytes).expect("load");
        assert_eq!(back[&0].sample_count, 7);
        assert_eq!(back[&0].value_sum, 0.3);
        assert_eq!(back[&0].zone_offset, Some(-120));
    }

    #[test]
    fn a_dense_blocks_days_read_without_its_samples() {
        let samples: Vec<BlockSample> = (0..200).map(|i| sample(i * 60, 1.0, None, None)).collect();
        let stored = derive(first(), 2, &samples);
        let kept = store(first(), 2, &samples, &stored);
        let read = load_written(2, &bits(2, &stored), &kept).expect("load");
        assert!(read.is_some_and(|r| same(&r, &stored)));
        // A sparse one's are derived.
        let sparse = [sample(5, 1.0, None, None)];
        let stored = derive(first(), 1, &sparse);
        let kept = store(first(), 1, &sparse, &stored);
        assert_eq!(load_written(1, &bits(1, &stored), &kept).expect("load"), None);
    }

    #[test]
    fn corrupt_figures_are_errors() {
        let samples = [sample(0, 1.0, None, None)];
        assert!(load(first(), 1, &samples, &[]).is_err());
        assert!(load(first(), 1, &samples, &[9]).is_err());
        assert!(load(first(), 1, &samples, &[VERSION, 0, 3, 0]).is_err());
        assert!(load(first(), 1, &samples, &[VERSION, 0, 0, 7]).is_err());
        assert!(load(first(), 1, &samples, &[VERSION, 0, 0, 1, 0]).is_err());
    }

    proptest! {
        #[test]
        fn any_stored_days_come_back_to_the_bit(
            span in 1..40u16,
            samples in proptest::collection::vec(
                (0..40 * DAY, any::<f64>(), proptest::option::of(any::<bool>()),
                 proptest::option::of(-900..900i16)),
                0..60),
            changes in proptest::collection::vec((0..40u16, any::<f64>(), any::<i32>()), 0..6),
            drops in proptest::collection::vec(0..40u16, 0..4),
        ) {
            let mut samples: Vec<BlockSample> = samples
                .into_iter()
                .filter(|(s, ..)| *s < i64::from(span) * DAY)
                .map(|(s, v, t, o)| sample(s, v, t, o))
                .collect();
            samples.sort_by_key(|s| s.ts);
            let mut stored = derive(first(), span, &samples);
            for (d, v, n) in changes.into_iter().filter(|c| c.0 < span) {
                let f = stored.entry(d).or_insert(HourFigures::of(v, None, Some(-60)));
                f.value_sum = v;
                f.total_count = n;
            }
            for d in drops {
                stored.remove(&d);
            }
            let kept = store(first(), span, &samples, &stored);
            let back = load(first(), span, &samples, &kept);
            prop_assert!(back.is_ok_and(|b| same(&b, &stored)));
        }
    }
}
