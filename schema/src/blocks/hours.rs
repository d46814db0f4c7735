//! A sealed block's hourly rollups, kept in its row instead of `hourly_rollups` rows (a sparse
//! series had as many hour rows as samples: most of what sealing left on disk).
//!
//! Nearly every hour's figures follow from the block's samples, counted in time order as
//! ingest counts a batch ([`HourFigures::add`]), so only two things are stored: `hours`, a bit
//! per hour of the block's span telling which have figures (SQL reads it to know where a source
//! has samples), and `hour_exceptions`, the few hours whose stored figures differ from that
//! count to the bit (a sum gathered over several batches in another order). The figures read
//! back are the stored ones exactly, so every page built from them answers as before.
//!
//! Exceptions' layout, after a version byte, per hour: its index from the block's first hour
//! (LEB128; a single byte below 128, as version 1 wrote it for a block of one day), the
//! intraday count (LEB128) and sum, the daily-total count and sum, the maximum (`f64`
//! little-endian), and the least zone offset (0 for none, or 1 and the `i16` little-endian).

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use super::codec::{BlockSample, CodecError, Reader, put_varint};
use crate::rollups::HourFigures;

const VERSION: u8 = 1;
const HOUR: i64 = 3600;
/// The hours of a UTC day.
pub(crate) const DAY_HOURS: u16 = 24;
/// The figures of a block's hours, by the hour's index from its first day's midnight (for a
/// single day, 0–23).
pub(crate) type SpanHours = BTreeMap<u16, HourFigures>;

/// The index of the slot of `width` seconds that `ts` falls in, counted from `first`, if it is
/// one of the first `slots`: an hour or a day of a block.
pub(super) fn slot(first: DateTime<Utc>, width: i64, slots: u16, ts: DateTime<Utc>) -> Option<u16> {
    let secs = (ts - first).num_seconds();
    if !(0..i64::from(slots) * width).contains(&secs) {
        return None;
    }
    u16::try_from(secs / width).ok()
}

/// Each slot's figures counted from a block's samples in time order, as ingest counts a batch
/// (`slot` gives a sample's, or none).
pub(super) fn count_by(
    samples: &[BlockSample],
    slot: impl Fn(DateTime<Utc>) -> Option<u16>,
) -> BTreeMap<u16, HourFigures> {
    let mut out: BTreeMap<u16, HourFigures> = BTreeMap::new();
    for s in samples {
        let Some(i) = slot(s.ts) else { continue };
        match out.get_mut(&i) {
            Some(f) => f.add(s.value, s.is_daily_total, s.zone_offset),
            None => {
                out.insert(i, HourFigures::of(s.value, s.is_daily_total, s.zone_offset));
            }
        }
    }
    out
}

/// The index of the hour `ts` falls in, counted from `day`, if it is one of the first `hours`.
pub(super) fn index(day: DateTime<Utc>, hours: u16, ts: DateTime<Utc>) -> Option<u16> {
    slot(day, HOUR, hours, ts)
}

/// The start of hour `index` from `day`.
pub(super) fn start(day: DateTime<Utc>, index: u16) -> DateTime<Utc> {
    day + Duration::hours(i64::from(index))
}

/// Each hour's figures counted from a block's samples in time order (its first `hours` hours
/// from `day`).
pub(super) fn derive(day: DateTime<Utc>, hours: u16, samples: &[BlockSample]) -> SpanHours {
    count_by(samples, |ts| index(day, hours, ts))
}

/// A block's hours as its row keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stored {
    /// `hours` as text: character `h` is `1` when hour `h` has figures.
    pub bits: String,
    /// The hours whose figures [`derive`] does not give; none when it gives them all.
    pub exceptions: Option<Vec<u8>>,
}

/// How to keep `stored`, the hourly rollups of a block of `hours` hours from `day`, beside its
/// `samples`. Hours past the span are not kept (there are none: sealing keeps a day's hours).
pub(super) fn store(
    day: DateTime<Utc>,
    hours: u16,
    samples: &[BlockSample],
    stored: &SpanHours,
) -> Stored {
    let derived = derive(day, hours, samples);
    let mut bits = vec![b'0'; usize::from(hours)];
    let mut exceptions = vec![VERSION];
    for (&h, f) in stored.range(..hours) {
        bits[usize::from(h)] = b'1';
        if derived.get(&h).is_some_and(|d| d.same(f)) {
            continue;
        }
        put_varint(&mut exceptions, u64::from(h));
        put_varint(&mut exceptions, u64::from(f.sample_count as u32));
        exceptions.extend_from_slice(&f.value_sum.to_le_bytes());
        put_varint(&mut exceptions, u64::from(f.total_count as u32));
        exceptions.extend_from_slice(&f.total_sum.to_le_bytes());
        exceptions.extend_from_slice(&f.value_max.to_le_bytes());
        match f.zone_offset {
            None => exceptions.push(0),
            Some(o) => {
                exceptions.push(1);
                exceptions.extend_from_slice(&o.to_le_bytes());
            }
        }
    }
    Stored {
        bits: String::from_utf8(bits).unwrap_or_default(),
        exceptions: (exceptions.len() > 1).then_some(exceptions),
    }
}

/// The hourly rollups a block row keeps (see [`store`]): `bits` is its `hours` as text.
pub(super) fn load(
    day: DateTime<Utc>,
    samples: &[BlockSample],
    bits: &str,
    exceptions: Option<&[u8]>,
) -> Result<SpanHours, CodecError> {
    let span = u16::try_from(bits.len()).map_err(|_| CodecError::Corrupt("hours"))?;
    let set = |h: u16| bits.as_bytes().get(usize::from(h)) == Some(&b'1');
    let mut hours = derive(day, span, samples);
    hours.retain(|h, _| set(*h));
    if let Some(bytes) = exceptions {
        let mut r = Reader::new(bytes);
        let version = r.byte()?;
        if version != VERSION {
            return Err(CodecError::Version(version));
        }
        while !r.is_done() {
            let h = u16::try_from(r.varint()?).map_err(|_| CodecError::Corrupt("hour"))?;
            if !set(h) {
                return Err(CodecError::Corrupt("hour"));
            }
            // Counts go as their 32 bits.
            let count = |v: u64| {
                u32::try_from(v).map(|v| v as i32).map_err(|_| CodecError::Corrupt("hour count"))
            };
            let sample_count = count(r.varint()?)?;
            let value_sum = r.f64()?;
            let total_count = count(r.varint()?)?;
            let total_sum = r.f64()?;
            let value_max = r.f64()?;
            let zone_offset = match r.byte()? {
                0 => None,
                1 => Some(i16::from_le_bytes(
                    r.take(2)?.try_into().map_err(|_| CodecError::Truncated)?,
                )),
                _ => return Err(CodecError::Corrupt("hour offset")),
            };
            hours.insert(
                h,
                HourFigures {
                    sample_count,
                    value_sum,
                    total_count,
                    total_sum,
                    value_max,
                    zone_offset,
                },
            );
        }
    }
    if hours.len() != bits.bytes().filter(|b| *b == b'1').count() {
        return Err(CodecError::Corrupt("hour bits"));
    }
    Ok(hours)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn day() -> DateTime<Utc> {
        DateTime::from_timestamp(20_000 * 86_400, 0).unwrap_or_default()
    }

    fn sample(secs: i64, value: f64, total: Option<bool>, offset: Option<i16>) -> BlockSample {
        BlockSample {
            ts: day() + Duration::seconds(secs),
            value,
            zone_offset: offset,
            is_daily_total: total,
            batch_id: None,
        }
    }

    /// A day's bits with `hours` set.
    fn bits(hours: &[usize]) -> String {
        (0..24).map(|h| if hours.contains(&h) { '1' } else { '0' }).collect()
    }

    fn same(a: &SpanHours, b: &SpanHours) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|((h, f), (k, g))| h == k && f.same(g))
    }

    #[test]
    fn hours_the_samples_give_cost_nothing_but_their_bits() {
        let samples = [
            sample(10, 1.5, None, Some(60)),
            sample(20, 2.5, None, None),
            sample(7300, 9.0, Some(true), None),
        ];
        let stored = derive(day(), DAY_HOURS, &samples);
        let kept = store(day(), DAY_HOURS, &samples, &stored);
        assert_eq!(kept, Stored { bits: bits(&[0, 2]), exceptions: None });
        let back = load(day(), &samples, &kept.bits, None).expect("load");
        assert!(same(&back, &stored));
        assert_eq!(back[&0].zone_offset, Some(60));
        assert_eq!((back[&2].total_count, back[&2].total_sum), (1, 9.0));
    }

    #[test]
    fn a_sum_counted_in_another_order_comes_back_as_stored() {
        let samples =
            [sample(0, 0.1, None, None), sample(1, 0.2, None, None), sample(2, 0.3, None, None)];
        let mut stored = derive(day(), DAY_HOURS, &samples);
        // (0.3 + 0.2) + 0.1 is not (0.1 + 0.2) + 0.3 in the last bit.
        let other = 0.3 + 0.2 + 0.1;
        assert_ne!(other, stored[&0].value_sum);
        stored.get_mut(&0).expect("hour 0").value_sum = other;
        // And an hour the samples do not give at all.
        stored.insert(5, HourFigures::of(-0.0, Some(false), Some(-300)));
        let kept = store(day(), DAY_HOURS, &samples, &stored);
        assert_eq!(kept.bits, bits(&[0, 5]));
        let back = load(day(), &samples, &kept.bits, kept.exceptions.as_deref()).expect("load");
        assert!(same(&back, &stored));
    }

    #[test]
    fn hours_without_figures_are_left_out() {
        let samples = [sample(0, 1.0, None, None), sample(3600, 2.0, None, None)];
        let mut stored = derive(day(), DAY_HOURS, &samples);
        stored.remove(&1);
        let kept = store(day(), DAY_HOURS, &samples, &stored);
        let back = load(day(), &samples, &kept.bits, kept.exceptions.as_deref()).expect("load");
        assert!(same(&back, &stored));
    }

    #[test]
    fn corrupt_exceptions_are_errors() {
        let samples = [sample(0, 1.0, None, None)];
        assert!(load(day(), &samples, &bits(&[0, 1]), None).is_err());
        assert!(load(day(), &samples, &bits(&[0]), Some(&[VERSION, 30])).is_err());
        assert!(load(day(), &samples, &bits(&[0]), Some(&[VERSION, 0, 1])).is_err());
        assert!(load(day(), &samples, &bits(&[0]), Some(&[9])).is_err());
    }

    proptest! {
        #[test]
        fn any_stored_hours_come_back_to_the_bit(
            days in 1..40u16,
            samples in proptest::collection::vec(
                (0..40 * 86_400i64, any::<f64>(), proptest::option::of(any::<bool>()),
                 proptest::option::of(-900..900i16)),
                0..60),
            changes in proptest::collection::vec((0..40 * 24u16, any::<f64>(), any::<i32>()), 0..6),
            drops in proptest::collection::vec(0..40 * 24u16, 0..4),
        ) {
            // A block of `days` days holds only samples and hours of its span.
            let hours = days * DAY_HOURS;
            let mut samples: Vec<BlockSample> = samples
                .into_iter()
                .filter(|(s, ..)| *s < i64::from(days) * 86_400)
                .map(|(s, v, t, o)| sample(s, v, t, o))
                .collect();
            samples.sort_by_key(|s| s.ts);
            let changes = changes.into_iter().filter(|c| c.0 < hours);
            let mut stored = derive(day(), hours, &samples);
            for (h, v, n) in changes {
                let f = stored.entry(h).or_insert(HourFigures::of(v, None, None));
                f.value_sum = v;
                f.total_count = n;
            }
            for h in drops {
                stored.remove(&h);
            }
            let kept = store(day(), hours, &samples, &stored);
            prop_assert_eq!(kept.bits.len(), usize::from(hours));
            let back = load(day(), &samples, &kept.bits, kept.exceptions.as_deref());
            prop_assert!(back.is_ok_and(|b| same(&b, &stored)));
        }
    }
}
