//! The body now: latest slow-changing measurements, recent averages, and readings of the last
//! hours.
//!
//! Each value is the most recent one; when two sources measured on the same latest day (a scale
//! and the app it syncs through), the better-ranked source's. Every value says its source in
//! `metric_sources`, instead of one label for values from several devices.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use schema::summaries::Reading;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::ranking::ByDay;
use crate::series::SeriesId;
use crate::{Ranking, SourceOut, Sources, round1, series};

#[derive(Debug, Clone, Default, PartialEq, Serialize, ToSchema)]
pub struct SlowChanging {
    pub weight_kg: Option<f64>,
    pub height_cm: Option<f64>,
    pub body_fat_percent: Option<f64>,
    pub muscle_mass_kg: Option<f64>,
    pub lean_body_mass_kg: Option<f64>,
    /// Stored, else computed from the latest weight and height.
    pub bmi: Option<f64>,
    /// Not collected by wearhouse.
    pub age: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Averaged {
    pub period_days: i64,
    pub resting_heart_rate_bpm: Option<f64>,
    pub avg_hrv_sdnn_ms: Option<f64>,
    pub avg_hrv_rmssd_ms: Option<f64>,
    pub period_start: NaiveDate,
    pub period_end: NaiveDate,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BloodPressure {
    pub avg_systolic_mmhg: f64,
    pub avg_diastolic_mmhg: f64,
    pub max_systolic_mmhg: Option<f64>,
    pub max_diastolic_mmhg: Option<f64>,
    pub min_systolic_mmhg: Option<f64>,
    pub min_diastolic_mmhg: Option<f64>,
    pub reading_count: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, ToSchema)]
pub struct Latest {
    pub body_temperature_celsius: Option<f64>,
    pub body_temperature_measured_at: Option<DateTime<Utc>>,
    pub skin_temperature_celsius: Option<f64>,
    pub skin_temperature_measured_at: Option<DateTime<Utc>>,
    pub blood_pressure: Option<BloodPressure>,
    pub blood_pressure_measured_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BodySummary {
    /// The source of the weight (or, without one, of the first value).
    pub source: Option<SourceOut>,
    pub slow_changing: SlowChanging,
    pub averaged: Averaged,
    pub latest: Latest,
    #[schema(value_type = Object)]
    pub metric_sources: BTreeMap<&'static str, SourceOut>,
}

/// Stores one slow-changing value.
type Setter = fn(&mut SlowChanging, f64);

/// The slow-changing series: field name, series, and where the value goes.
pub const SLOW: [(&str, SeriesId, Setter); 6] = [
    ("weight_kg", series::WEIGHT, |s, v| s.weight_kg = Some(v)),
    ("height_cm", series::HEIGHT, |s, v| s.height_cm = Some(v)),
    ("body_fat_percent", series::BODY_FAT, |s, v| s.body_fat_percent = Some(v)),
    ("muscle_mass_kg", series::MUSCLE_MASS, |s, v| s.muscle_mass_kg = Some(v)),
    ("lean_body_mass_kg", series::LEAN_BODY_MASS, |s, v| s.lean_body_mass_kg = Some(v)),
    ("bmi", series::BMI, |s, v| s.bmi = Some(v)),
];

/// The averaged series: field name and series.
pub const AVERAGED: [(&str, SeriesId); 3] = [
    ("resting_heart_rate_bpm", series::RESTING_HEART_RATE),
    ("avg_hrv_sdnn_ms", series::HRV_SDNN),
    ("avg_hrv_rmssd_ms", series::HRV_RMSSD),
];

/// Of the last day each source measured a series (`(source, day)`), the day and source to read
/// the latest value from: the latest day, the best-ranked source on it.
pub fn latest_source(days: &[(Uuid, NaiveDate)], ranking: &Ranking) -> Option<(Uuid, NaiveDate)> {
    let last = days.iter().map(|(_, d)| *d).max()?;
    days.iter().filter(|(_, d)| *d == last).min_by_key(|(s, _)| ranking.rank(*s)).copied()
}

/// A diastolic reading belongs to a systolic one when the same source took it within five
/// seconds.
pub fn same_measurement(systolic: &Reading, diastolic: &Reading) -> bool {
    systolic.data_source_id == diastolic.data_source_id
        && (diastolic.ts - systolic.ts).num_seconds().abs() <= 5
}

/// The earliest time a diastolic reading of `systolic`'s measurement can have.
pub fn diastolic_since(systolic: &Reading) -> DateTime<Utc> {
    systolic.ts - Duration::seconds(5)
}

/// What a body summary is made of, as read.
#[derive(Debug, Clone, Default)]
pub struct BodyReadings {
    /// The latest value of each of [`SLOW`], in its order.
    pub slow: [Option<Reading>; 6],
    /// The rollups of [`AVERAGED`] over the period.
    pub period: ByDay,
    pub body_temperature: Option<Reading>,
    pub skin_temperature: Option<Reading>,
    pub blood_pressure: Option<(Reading, Reading)>,
}

/// The summary of what was read; `None` when there is nothing.
pub fn summary(
    r: &BodyReadings,
    (first, last): (NaiveDate, NaiveDate),
    ranking: &Ranking,
    sources: &Sources,
) -> Option<BodySummary> {
    let mut from: BTreeMap<&'static str, Uuid> = BTreeMap::new();
    let mut slow = SlowChanging::default();
    for ((field, _, set), reading) in SLOW.iter().zip(&r.slow) {
        let Some(reading) = reading else { continue };
        set(&mut slow, round1(reading.value));
        from.insert(field, reading.data_source_id);
    }
    if slow.bmi.is_none()
        && let (Some(w), Some(h)) = (slow.weight_kg, slow.height_cm.filter(|h| *h > 0.0))
    {
        slow.bmi = Some(round1(w / (h / 100.0).powi(2)));
    }
    // Averages of the day means of the best-ranked source, over the period.
    let mut means: [Option<f64>; 3] = [None; 3];
    for (i, (field, id)) in AVERAGED.iter().enumerate() {
        let day_means: Vec<f64> = r
            .period
            .values()
            .filter_map(|d| ranking.best(d.get(id).into_iter().flatten()))
            .filter_map(|row| {
                from.entry(field).or_insert(row.data_source_id);
                row.figures.mean()
            })
            .collect();
        if !day_means.is_empty() {
            means[i] = Some(round1(day_means.iter().sum::<f64>() / day_means.len() as f64));
        }
    }
    let mut latest = Latest::default();
    if let Some(t) = &r.body_temperature {
        latest.body_temperature_celsius = Some(round1(t.value));
        latest.body_temperature_measured_at = Some(t.ts);
        from.insert("body_temperature_celsius", t.data_source_id);
    }
    if let Some(t) = &r.skin_temperature {
        latest.skin_temperature_celsius = Some(round1(t.value));
        latest.skin_temperature_measured_at = Some(t.ts);
        from.insert("skin_temperature_celsius", t.data_source_id);
    }
    if let Some((sys, dia)) = &r.blood_pressure {
        latest.blood_pressure = Some(BloodPressure {
            avg_systolic_mmhg: sys.value,
            avg_diastolic_mmhg: dia.value,
            max_systolic_mmhg: None,
            max_diastolic_mmhg: None,
            min_systolic_mmhg: None,
            min_diastolic_mmhg: None,
            reading_count: 1,
        });
        latest.blood_pressure_measured_at = Some(sys.ts);
        from.insert("blood_pressure", sys.data_source_id);
    }
    if from.is_empty() {
        return None;
    }
    let lead = from.get("weight_kg").or_else(|| from.values().next()).copied();
    Some(BodySummary {
        source: lead.map(|id| sources.get(id)),
        slow_changing: slow,
        averaged: Averaged {
            period_days: (last - first).num_days() + 1,
            resting_heart_rate_bpm: means[0],
            avg_hrv_sdnn_ms: means[1],
            avg_hrv_rmssd_ms: means[2],
            period_start: first,
            period_end: last,
        },
        latest,
        metric_sources: from.into_iter().map(|(k, id)| (k, sources.get(id))).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranking::by_day;
    use crate::ranking::tests::{rollup, source};
    use crate::sleep::tests::at;

    fn reading(source: u128, value: f64, ts: &str) -> Reading {
        Reading { ts: at(ts), value, zone_offset: None, data_source_id: Uuid::from_u128(source) }
    }

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap_or_default()
    }

    #[test]
    fn the_latest_day_then_the_best_source() {
        let ranking = Ranking::new(vec![(source(1, "withings"), 1), (source(2, "apple"), 2)]);
        let days = [
            (Uuid::from_u128(2), d("2026-03-11")),
            (Uuid::from_u128(1), d("2026-03-10")),
            (Uuid::from_u128(3), d("2026-03-11")),
        ];
        assert_eq!(latest_source(&days, &ranking), Some((Uuid::from_u128(2), d("2026-03-11"))));
        assert_eq!(latest_source(&[], &ranking), None);
    }

    #[test]
    fn a_summary_computes_bmi_averages_day_means_and_pairs_blood_pressure() {
        let ranking = Ranking::new(vec![(source(1, "withings"), 1), (source(2, "apple"), 2)]);
        let sources = Sources::new(&ranking.sources);
        let (first, last) = (d("2026-03-05"), d("2026-03-11"));
        let sys = reading(2, 121.0, "2026-03-11T08:00:00Z");
        let dia = reading(2, 79.0, "2026-03-11T08:00:03Z");
        assert!(same_measurement(&sys, &dia));
        assert!(!same_measurement(&sys, &reading(1, 79.0, "2026-03-11T08:00:03Z")));
        assert!(!same_measurement(&sys, &reading(2, 79.0, "2026-03-11T08:00:09Z")));
        assert_eq!(diastolic_since(&sys), at("2026-03-11T07:59:55Z"));
        let r = BodyReadings {
            slow: [
                Some(reading(1, 70.04, "2026-03-11T07:00:00Z")),
                Some(reading(2, 175.0, "2026-01-01T07:00:00Z")),
                None,
                None,
                None,
                None,
            ],
            period: by_day(vec![
                rollup(1, series::RESTING_HEART_RATE, d("2026-03-10"), 120.0, 2),
                rollup(2, series::RESTING_HEART_RATE, d("2026-03-10"), 200.0, 2),
                rollup(2, series::RESTING_HEART_RATE, d("2026-03-11"), 64.0, 1),
            ]),
            body_temperature: None,
            skin_temperature: Some(reading(2, 33.27, "2026-03-11T06:00:00Z")),
            blood_pressure: Some((sys, dia)),
        };
        let s = summary(&r, (first, last), &ranking, &sources).expect("a summary");
        assert_eq!(s.slow_changing.weight_kg, Some(70.0));
        assert_eq!(s.slow_changing.bmi, Some(22.9), "70.04 / 1.75²");
        // Day means of the best source each day: 60 (withings on the 10th), 64 on the 11th.
        assert_eq!(s.averaged.resting_heart_rate_bpm, Some(62.0));
        assert_eq!(s.averaged.period_days, 7);
        assert_eq!(s.latest.skin_temperature_celsius, Some(33.3));
        assert_eq!(s.latest.blood_pressure.map(|b| b.avg_diastolic_mmhg), Some(79.0));
        assert_eq!(s.source.map(|x| x.provider), Some("withings".into()));
        assert_eq!(s.metric_sources["height_cm"].provider, "apple");
        assert_eq!(summary(&BodyReadings::default(), (first, last), &ranking, &sources), None);
    }
}
