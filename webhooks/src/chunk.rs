//! Splitting a timeseries event: at most 2,500 samples per event, and every request body under
//! 1 MB, as consecutive events with `chunk_index` (from 0) and `total_chunks`; `sample_count` is
//! the batch's total on every chunk.

use serde_json::{Map, Value, json};

pub(crate) const MAX_SAMPLES: usize = 2_500;
pub(crate) const MAX_BODY_BYTES: usize = 1_000_000;

/// The `{type, data}` bodies of one timeseries event. `data` holds every field but the
/// samples. A lone sample larger than the byte limit still goes, alone in its chunk.
pub(crate) fn timeseries_bodies(
    event_type: &str,
    data: &Map<String, Value>,
    samples: &[Value],
    max_samples: usize,
    max_bytes: usize,
) -> Vec<Value> {
    let envelope = |part: &[Value], index: usize, total: usize| -> Value {
        let mut d = data.clone();
        d.insert("sample_count".into(), json!(samples.len()));
        d.insert("samples".into(), Value::Array(part.to_vec()));
        if total > 1 {
            d.insert("chunk_index".into(), json!(index));
            d.insert("total_chunks".into(), json!(total));
        }
        json!({ "type": event_type, "data": d })
    };
    // Room for the envelope with the largest chunk fields, then each sample and its comma.
    let overhead = envelope(&[], 99_999, 99_999).to_string().len();
    let mut bounds = Vec::new();
    let (mut start, mut bytes) = (0, overhead);
    for (i, s) in samples.iter().enumerate() {
        let size = s.to_string().len() + 1;
        if i > start && (i - start == max_samples.max(1) || bytes + size > max_bytes) {
            bounds.push((start, i));
            (start, bytes) = (i, overhead);
        }
        bytes += size;
    }
    bounds.push((start, samples.len()));
    let total = bounds.len();
    bounds.iter().enumerate().map(|(k, (a, b))| envelope(&samples[*a..*b], k, total)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> Map<String, Value> {
        let v = json!({"user_id": "u", "provider": "phonehealth", "series_type": "heart_rate",
                       "start_time": "2026-03-10T00:00:00Z", "end_time": "2026-03-10T01:40:00Z"});
        v.as_object().cloned().unwrap_or_default()
    }

    fn sample(i: usize, pad: usize) -> Value {
        json!({"timestamp": format!("2026-03-10T00:00:{:02}Z", i % 60), "zone_offset": null,
               "type": "heart_rate", "value": 60 + i % 40, "unit": "bpm",
               "source": {"provider": "phonehealth", "device": "x".repeat(pad)},
               "is_daily_total": null})
    }

    #[test]
    fn six_thousand_and_one_samples_make_three_events() {
        let samples: Vec<Value> = (0..6001).map(|i| sample(i, 8)).collect();
        let bodies =
            timeseries_bodies("heart_rate.created", &data(), &samples, MAX_SAMPLES, MAX_BODY_BYTES);
        assert_eq!(bodies.len(), 3);
        let sizes: Vec<usize> =
            bodies.iter().map(|b| b["data"]["samples"].as_array().map_or(0, Vec::len)).collect();
        assert_eq!(sizes, [2500, 2500, 1001]);
        for (k, b) in bodies.iter().enumerate() {
            assert_eq!(b["type"], "heart_rate.created");
            assert_eq!(b["data"]["sample_count"], 6001);
            assert_eq!(b["data"]["chunk_index"], k);
            assert_eq!(b["data"]["total_chunks"], 3);
            assert_eq!(b["data"]["series_type"], "heart_rate");
        }
        // Consecutive and complete.
        assert_eq!(bodies[1]["data"]["samples"][0], samples[2500]);
        assert_eq!(bodies[2]["data"]["samples"][1000], samples[6000]);
    }

    #[test]
    fn a_small_batch_is_one_event_without_chunk_fields() {
        let samples: Vec<Value> = (0..10).map(|i| sample(i, 8)).collect();
        let bodies =
            timeseries_bodies("heart_rate.created", &data(), &samples, MAX_SAMPLES, MAX_BODY_BYTES);
        assert_eq!(bodies.len(), 1);
        assert_eq!(bodies[0]["data"]["sample_count"], 10);
        assert!(bodies[0]["data"].get("chunk_index").is_none());
        let none = timeseries_bodies("steps.created", &data(), &[], MAX_SAMPLES, MAX_BODY_BYTES);
        assert_eq!(none.len(), 1);
    }

    #[test]
    fn every_body_stays_under_the_byte_limit() {
        // 1 KB samples: 2,500 of them would be 2.5 MB.
        let samples: Vec<Value> = (0..5000).map(|i| sample(i, 1000)).collect();
        let bodies =
            timeseries_bodies("heart_rate.created", &data(), &samples, MAX_SAMPLES, MAX_BODY_BYTES);
        assert!(bodies.len() >= 6, "{}", bodies.len());
        let mut seen = 0;
        for b in &bodies {
            assert!(b.to_string().len() < MAX_BODY_BYTES);
            seen += b["data"]["samples"].as_array().map_or(0, Vec::len);
            assert_eq!(b["data"]["total_chunks"], bodies.len());
        }
        assert_eq!(seen, 5000);
    }
}
