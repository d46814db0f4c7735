//! A sealed day's hourly rollups, kept in its block row instead of `hourly_rollups` rows (a
//! sparse series had as many hour rows as samples: most of what sealing left on disk).
//!
//! Nearly every hour's figures follow from the block's samples, counted in time order as
//! ingest counts a batch ([`HourFigures::add`]), so only two things are stored: `hour_mask`,
//! the bits of the hours that have figures (SQL reads it to know where a source has samples),
//! and `hour_exceptions`, the few hours whose stored figures differ from that count to the bit
//! (a sum gathered over several batches in another order). The figures read back are the
//! stored ones exactly, so every page built from them answers as before.
//!
//! Exceptions' layout, after a version byte, per hour: its index in the day, the intraday
//! count (LEB128) and sum, the daily-total count and sum, the maximum (`f64` little-endian),
//! and the least zone offset (0 for none, or 1 and the `i16` little-endian).

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use super::codec::{BlockSample, CodecError, Reader, put_varint};
use crate::rollups::HourFigures;

const VERSION: u8 = 1;
const HOUR: i64 = 3600;
/// The figures of a day's hours, by the hour's index in the UTC day (0–23).
pub type DayHours = BTreeMap<u8, HourFigures>;

/// The index of the UTC hour of `day` that `ts` falls in, if it is in that day.
pub fn index(day: DateTime<Utc>, ts: DateTime<Utc>) -> Option<u8> {
    let secs = (ts - day).num_seconds();
    if !(0..24 * HOUR).contains(&secs) {
        return None;
    }
    u8::try_from(secs / HOUR).ok()
}

/// The start of hour `index` of `day`.
pub fn start(day: DateTime<Utc>, index: u8) -> DateTime<Utc> {
    day + Duration::hours(i64::from(index))
}

/// Each hour's figures counted from a day's samples in time order.
pub fn derive(day: DateTime<Utc>, samples: &[BlockSample]) -> DayHours {
    let mut hours = DayHours::new();
    for s in samples {
        let Some(h) = index(day, s.ts) else { continue };
        match hours.get_mut(&h) {
            Some(f) => f.add(s.value, s.is_daily_total, s.zone_offset),
            None => {
                hours.insert(h, HourFigures::of(s.value, s.is_daily_total, s.zone_offset));
            }
        }
    }
    hours
}

/// A day's hours as its block row keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// Bit `h` set: hour `h` has figures.
    pub mask: i32,
    /// The hours whose figures [`derive`] does not give; none when it gives them all.
    pub exceptions: Option<Vec<u8>>,
}

/// How to keep `stored`, a day's hourly rollups, beside its `samples`.
pub fn store(day: DateTime<Utc>, samples: &[BlockSample], stored: &DayHours) -> Stored {
    let derived = derive(day, samples);
    let mut mask = 0;
    let mut exceptions = vec![VERSION];
    for (&h, f) in stored {
        mask |= 1 << h;
        if derived.get(&h).is_some_and(|d| d.same(f)) {
            continue;
        }
        exceptions.push(h);
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
    Stored { mask, exceptions: (exceptions.len() > 1).then_some(exceptions) }
}

/// The hourly rollups a block row keeps (see [`store`]).
pub fn load(
    day: DateTime<Utc>,
    samples: &[BlockSample],
    mask: i32,
    exceptions: Option<&[u8]>,
) -> Result<DayHours, CodecError> {
    let mut hours = derive(day, samples);
    hours.retain(|h, _| mask & (1 << h) != 0);
    if let Some(bytes) = exceptions {
        let mut r = Reader::new(bytes);
        let version = r.byte()?;
        if version != VERSION {
            return Err(CodecError::Version(version));
        }
        while !r.is_done() {
            let h = r.byte()?;
            if h >= 24 || mask & (1 << h) == 0 {
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
    if hours.len() != mask.count_ones() as usize {
        return Err(CodecError::Corrupt("hour mask"));
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

    fn same(a: &DayHours, b: &DayHours) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|((h, f), (k, g))| h == k && f.same(g))
    }

    #[test]
    fn hours_the_samples_give_cost_nothing_but_their_bits() {
        let samples = [
            sample(10, 1.5, None, Some(60)),
            sample(20, 2.5, None, None),
            sample(7300, 9.0, Some(true), None),
        ];
        let stored = derive(day(), &samples);
        let kept = store(day(), &samples, &stored);
        assert_eq!(kept, Stored { mask: 0b101, exceptions: None });
        let back = load(day(), &samples, kept.mask, None).expect("load");
        assert!(same(&back, &stored));
        assert_eq!(back[&0].zone_offset, Some(60));
        assert_eq!((back[&2].total_count, back[&2].total_sum), (1, 9.0));
    }

    #[test]
    fn a_sum_counted_in_another_order_comes_back_as_stored() {
        let samples =
            [sample(0, 0.1, None, None), sample(1, 0.2, None, None), sample(2, 0.3, None, None)];
        let mut stored = derive(day(), &samples);
        // (0.3 + 0.2) + 0.1 is not (0.1 + 0.2) + 0.3 in the last bit.
        let other = 0.3 + 0.2 + 0.1;
        assert_ne!(other, stored[&0].value_sum);
        stored.get_mut(&0).expect("hour 0").value_sum = other;
        // And an hour the samples do not give at all.
        stored.insert(5, HourFigures::of(-0.0, Some(false), Some(-300)));
        let kept = store(day(), &samples, &stored);
        assert_eq!(kept.mask, 0b100001);
        let back = load(day(), &samples, kept.mask, kept.exceptions.as_deref()).expect("load");
        assert!(same(&back, &stored));
    }

    #[test]
    fn hours_without_figures_are_left_out() {
        let samples = [sample(0, 1.0, None, None), sample(3600, 2.0, None, None)];
        let mut stored = derive(day(), &samples);
        stored.remove(&1);
        let kept = store(day(), &samples, &stored);
        let back = load(day(), &samples, kept.mask, kept.exceptions.as_deref()).expect("load");
        assert!(same(&back, &stored));
    }

    #[test]
    fn corrupt_exceptions_are_errors() {
        let samples = [sample(0, 1.0, None, None)];
        assert!(load(day(), &samples, 0b11, None).is_err());
        assert!(load(day(), &samples, 0b1, Some(&[VERSION, 30])).is_err());
        assert!(load(day(), &samples, 0b1, Some(&[VERSION, 0, 1])).is_err());
        assert!(load(day(), &samples, 0b1, Some(&[9])).is_err());
    }

    proptest! {
        #[test]
        fn any_stored_hours_come_back_to_the_bit(
            samples in proptest::collection::vec(
                (0..86_400i64, any::<f64>(), proptest::option::of(any::<bool>()),
                 proptest::option::of(-900..900i16)),
                0..60),
            changes in proptest::collection::vec((0..24u8, any::<f64>(), any::<i32>()), 0..6),
            drops in proptest::collection::vec(0..24u8, 0..4),
        ) {
            let mut samples: Vec<BlockSample> =
                samples.into_iter().map(|(s, v, t, o)| sample(s, v, t, o)).collect();
            samples.sort_by_key(|s| s.ts);
            let mut stored = derive(day(), &samples);
            for (h, v, n) in changes {
                let f = stored.entry(h).or_insert(HourFigures::of(v, None, None));
                f.value_sum = v;
                f.total_count = n;
            }
            for h in drops {
                stored.remove(&h);
            }
            let kept = store(day(), &samples, &stored);
            let back = load(day(), &samples, kept.mask, kept.exceptions.as_deref());
            prop_assert!(back.is_ok_and(|b| same(&b, &stored)));
        }
    }
}
