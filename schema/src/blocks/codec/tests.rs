use proptest::prelude::*;

use super::*;

fn sample(
    ts_micros: i64,
    value: f64,
    offset: Option<i16>,
    flag: Option<bool>,
    batch: u8,
) -> BlockSample {
    BlockSample {
        ts: DateTime::from_timestamp_micros(ts_micros).unwrap_or_default(),
        value,
        zone_offset: offset,
        is_daily_total: flag,
        // Batch 0: a row stored without one.
        batch_id: (batch != 0).then(|| Uuid::from_bytes([batch; 16])),
    }
}

/// Bit-exact equality (`-0.0` is not `0.0` here).
fn same(a: &[BlockSample], b: &[BlockSample]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.ts == y.ts
                && x.value.to_bits() == y.value.to_bits()
                && x.zone_offset == y.zone_offset
                && x.is_daily_total == y.is_daily_total
                && x.batch_id == y.batch_id
        })
}

#[test]
fn empty_and_single_blocks_round_trip() {
    for samples in [vec![], vec![sample(1_773_100_000_000_000, 61.0, Some(60), None, 1)]] {
        let bytes = encode(&samples).unwrap_or_default();
        assert!(same(&decode(&bytes).unwrap_or_default(), &samples));
    }
}

/// A day of a watch's heart rate every 5 s (whole bpm, one offset, one batch): what a sealed
/// block costs a sample.
#[test]
fn a_day_of_heart_rate_costs_a_byte_or_two_a_sample() {
    let start = 1_773_100_800_000_000_i64;
    let samples: Vec<BlockSample> = (0..17_280_i64)
        .map(|i| {
            let bpm = 60.0 + ((i * 7919) % 41) as f64 + if i % 1000 < 60 { 40.0 } else { 0.0 };
            sample(start + i * 5_000_000, bpm, Some(60), None, 3)
        })
        .collect();
    let bytes = encode(&samples).unwrap_or_default();
    let per_sample = bytes.len() as f64 / samples.len() as f64;
    assert!(per_sample < 2.0, "{per_sample:.2} bytes a sample ({} bytes)", bytes.len());
    assert!(same(&decode(&bytes).unwrap_or_default(), &samples));
}

/// A sparse series' day (heart rate every 2 hours, whole bpm): a few bytes a sample, where
/// pco's headers alone cost tens of bytes a column.
#[test]
fn a_sparse_day_is_stored_plain_in_a_few_bytes_a_sample() {
    let start = 1_773_100_800_000_000_i64;
    let samples: Vec<BlockSample> = (0..12_i64)
        .map(|i| sample(start + i * 7_200_000_000, 55.0 + ((i * 13) % 60) as f64, None, None, 0))
        .collect();
    let bytes = encode(&samples).unwrap_or_default();
    let pco = encode_as(&samples, VERSION_PCO).unwrap_or_default();
    assert!(bytes.len() < 60, "{} bytes (pco: {})", bytes.len(), pco.len());
    assert!(bytes.len() * 2 < pco.len(), "{} bytes (pco: {})", bytes.len(), pco.len());
    assert!(same(&decode(&bytes).unwrap_or_default(), &samples));
}

#[test]
fn corrupt_and_truncated_blocks_are_errors() {
    let samples: Vec<BlockSample> = (0..100)
        .map(|i| {
            let ts = 1_773_100_800_000_000 + i * 1_000_000;
            sample(ts, i as f64, None, Some(true), (i % 3) as u8)
        })
        .collect();
    let bytes = encode(&samples).unwrap_or_default();
    for cut in 0..bytes.len() {
        assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    assert_eq!(decode(&[3]), Err(CodecError::Version(3)));
    // A count no block has: refused before anything is allocated for it.
    let mut huge = vec![1];
    put_varint(&mut huge, u64::MAX);
    assert!(decode(&huge).is_err());
}

fn any_sample() -> impl Strategy<Value = BlockSample> {
    (
        // Any instant a sample may carry (1900 to 2199), to the microsecond.
        -2_208_988_800_000_000_i64..7_258_118_400_000_000_i64,
        any::<f64>().prop_filter("finite", |v| v.is_finite()),
        proptest::option::of(-840_i16..=840),
        proptest::option::of(any::<bool>()),
        0_u8..4,
    )
        .prop_map(|(ts, value, offset, flag, batch)| sample(ts, value, offset, flag, batch))
}

/// Samples the plain columns take: whole seconds or milliseconds, whole values (and their
/// edges: `-0.0`, ±2^53, fractions).
fn plain_sample() -> impl Strategy<Value = BlockSample> {
    (
        -2_208_988_800_i64..7_258_118_400_i64,
        prop_oneof![Just(1_000_000_i64), Just(1_000), Just(1)],
        0_i64..1_000_000,
        prop_oneof![
            (-1000_i64..1000).prop_map(|v| v as f64),
            Just(-0.0),
            Just(WHOLE_LIMIT),
            Just(-WHOLE_LIMIT),
            Just(0.5),
        ],
        0_u8..2,
    )
        .prop_map(|(secs, unit, micros, value, batch)| {
            sample(secs * 1_000_000 + micros / unit * unit, value, Some(60), None, batch)
        })
}

proptest! {
    #[test]
    fn plain_columns_round_trip(samples in proptest::collection::vec(plain_sample(), 0..40)) {
        let bytes = encode(&samples).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back = decode(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(same(&back, &samples));
    }

    #[test]
    fn blocks_of_version_1_still_decode(samples in proptest::collection::vec(any_sample(), 0..50)) {
        let bytes = encode_as(&samples, VERSION_PCO).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back = decode(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(same(&back, &samples));
    }

    #[test]
    fn any_samples_in_any_order_round_trip(samples in proptest::collection::vec(any_sample(), 0..300)) {
        let bytes = encode(&samples).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back = decode(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(same(&back, &samples));
    }

    #[test]
    fn any_bytes_decode_to_an_error_or_samples_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode(&bytes);
    }
}
