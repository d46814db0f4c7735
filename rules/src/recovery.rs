//! Recovery per local day: the night's sleep, resting heart rate, HRV, SpO2 and a recovery
//! score, for every user.
//!
//! The score is the vendor's where a source sent one (`recovery_score` samples). Otherwise it is
//! computed from the stored data (see [`score`] and the README): HRV and resting heart rate
//! against the user's own 28-day baseline, last night's sleep, and SpO2.

use std::collections::BTreeMap;

use chrono::{Duration, NaiveDate};
use schema::sessions::Sleep;
use serde::Serialize;
use utoipa::ToSchema;

use crate::ranking::{ByDay, best_of};
use crate::series::SeriesId;
use crate::{Ranking, SourceOut, Sources, round1, series, sleep};

/// Days of history a baseline looks at, and the fewest it needs.
pub const BASELINE_DAYS: i64 = 28;
const BASELINE_MIN_DAYS: usize = 7;

/// The series recovery reads, for the days asked and the baseline before them.
pub const SERIES: [SeriesId; 5] = [
    series::RESTING_HEART_RATE,
    series::HRV_SDNN,
    series::HRV_RMSSD,
    series::OXYGEN_SATURATION,
    series::RECOVERY_SCORE,
];

/// How a day's score came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScoreMethod {
    /// A vendor's own score.
    Vendor,
    /// Computed here from the stored data.
    Computed,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RecoveryDay {
    pub date: NaiveDate,
    /// The vendor's source for a vendor score; `internal` for a computed one.
    pub source: SourceOut,
    pub sleep_duration_seconds: Option<i64>,
    pub sleep_efficiency_percent: Option<f64>,
    pub resting_heart_rate_bpm: Option<f64>,
    pub avg_hrv_sdnn_ms: Option<f64>,
    pub avg_hrv_rmssd_ms: Option<f64>,
    pub avg_spo2_percent: Option<f64>,
    /// 0–100; null when there is too little data to compute one.
    pub recovery_score: Option<i64>,
    /// `vendor` or `computed`.
    pub score_method: Option<ScoreMethod>,
}

/// A day's inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Inputs {
    pub sleep_seconds: Option<f64>,
    pub efficiency: Option<f64>,
    pub rhr: Option<f64>,
    pub hrv: Option<f64>,
    pub spo2: Option<f64>,
}

/// Mean and standard deviation of a baseline; `None` below the minimum number of days.
pub fn baseline(values: &[f64]) -> Option<(f64, f64)> {
    if values.len() < BASELINE_MIN_DAYS {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    // A very steady baseline must not turn small changes into extreme scores.
    Some((mean, sd.max(mean.abs() * 0.05).max(1e-6)))
}

/// The computed recovery score, 0–100:
/// - HRV (weight 0.40): 50 + 20 z against the 28-day baseline (higher is better);
/// - resting heart rate (0.25): 50 − 20 z (lower is better);
/// - sleep (0.25): 70 % duration against 8 hours (capped), 30 % efficiency;
/// - SpO2 (0.10): 90 % scores 0, 98 % and above 100.
///
/// Components without data are left out and the weights of the rest rescaled; without an HRV
/// or resting-heart-rate component (each needs 7 days of baseline) there is no score.
pub fn score(
    day: &Inputs,
    hrv_base: Option<(f64, f64)>,
    rhr_base: Option<(f64, f64)>,
) -> Option<i64> {
    let clamp = |v: f64| v.clamp(0.0, 100.0);
    let hrv = day.hrv.zip(hrv_base).map(|(v, (m, sd))| clamp(50.0 + 20.0 * (v - m) / sd));
    let rhr = day.rhr.zip(rhr_base).map(|(v, (m, sd))| clamp(50.0 - 20.0 * (v - m) / sd));
    hrv.or(rhr)?;
    let sleep = day.sleep_seconds.map(|s| {
        let duration = clamp(s / (8.0 * 3600.0) * 100.0);
        match day.efficiency {
            Some(e) => 0.7 * duration + 0.3 * clamp(e),
            None => duration,
        }
    });
    let spo2 = day.spo2.map(|v| clamp((v - 90.0) / 8.0 * 100.0));
    let parts = [(hrv, 0.40), (rhr, 0.25), (sleep, 0.25), (spo2, 0.10)];
    let (sum, weight) = parts
        .iter()
        .filter_map(|(v, w)| v.map(|v| (v * w, *w)))
        .fold((0.0, 0.0), |(s, t), (v, w)| (s + v, t + w));
    Some((sum / weight).round() as i64)
}

/// The source of what wearhouse computes itself.
pub fn internal() -> SourceOut {
    SourceOut {
        provider: "internal".into(),
        source: Some("wearhouse".into()),
        device: None,
        device_type: None,
        device_name: None,
    }
}

/// Recovery for each of `dates`: the days with data, as `schema::summaries::data_days` picks
/// them (a rollup of [`SERIES`] or a night). `rollups` must reach `BASELINE_DAYS` before the
/// first of them (the baselines); `nights` are the resolved nights by wake-up day.
pub fn days(
    dates: &[NaiveDate],
    rollups: &ByDay,
    nights: &BTreeMap<NaiveDate, Vec<Sleep>>,
    ranking: &Ranking,
    sources: &Sources,
) -> BTreeMap<NaiveDate, RecoveryDay> {
    // Per day and series: the best-ranked source's mean.
    let mean_of = |date: NaiveDate, id: SeriesId| -> Option<f64> {
        best_of(ranking, rollups.get(&date), id).and_then(|r| r.figures.mean())
    };
    let history_of = |date: NaiveDate, id: SeriesId| -> Vec<f64> {
        (1..=BASELINE_DAYS).filter_map(|k| mean_of(date - Duration::days(k), id)).collect()
    };
    let mut items = BTreeMap::new();
    for &date in dates {
        let summary = nights.get(&date).map(|s| sleep::day(date, s, sources));
        let rhr = mean_of(date, series::RESTING_HEART_RATE);
        let sdnn = mean_of(date, series::HRV_SDNN);
        let rmssd = mean_of(date, series::HRV_RMSSD);
        let spo2 = mean_of(date, series::OXYGEN_SATURATION);
        let vendor = best_of(ranking, rollups.get(&date), series::RECOVERY_SCORE)
            .and_then(|v| Some((v.data_source_id, v.figures.mean()?)));
        let sleep_seconds = summary.as_ref().map(|s| s.duration_minutes * 60).filter(|s| *s > 0);
        let efficiency = summary.as_ref().and_then(|s| s.efficiency_percent);
        // RMSSD where the day and its baseline have it, else SDNN: never mixed.
        let rmssd_base = baseline(&history_of(date, series::HRV_RMSSD));
        let (hrv, hrv_base) = match (rmssd, rmssd_base) {
            (Some(v), Some(b)) => (Some(v), Some(b)),
            _ => (sdnn, baseline(&history_of(date, series::HRV_SDNN))),
        };
        let inputs =
            Inputs { sleep_seconds: sleep_seconds.map(|s| s as f64), efficiency, rhr, hrv, spo2 };
        let rhr_base = baseline(&history_of(date, series::RESTING_HEART_RATE));
        let computed = score(&inputs, hrv_base, rhr_base);
        let (source, value, method) = match vendor {
            Some((id, value)) => {
                (sources.get(id), Some(value.round() as i64), Some(ScoreMethod::Vendor))
            }
            None => (internal(), computed, computed.map(|_| ScoreMethod::Computed)),
        };
        let day = RecoveryDay {
            date,
            source,
            sleep_duration_seconds: sleep_seconds,
            sleep_efficiency_percent: efficiency,
            resting_heart_rate_bpm: rhr.map(round1),
            avg_hrv_sdnn_ms: sdnn.map(round1),
            avg_hrv_rmssd_ms: rmssd.map(round1),
            avg_spo2_percent: spo2.map(round1),
            recovery_score: value,
            score_method: method,
        };
        items.insert(date, day);
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranking::by_day;
    use crate::ranking::tests::{rollup, source};

    #[test]
    fn baselines_need_a_week_and_a_floor_on_spread() {
        assert_eq!(baseline(&[50.0; 6]), None);
        assert_eq!(baseline(&[50.0; 7]), Some((50.0, 2.5)));
        let (m, sd) =
            baseline(&[40.0, 60.0, 40.0, 60.0, 40.0, 60.0, 40.0, 60.0]).unwrap_or_default();
        assert_eq!((m, sd), (50.0, 10.0));
    }

    #[test]
    fn scores_by_hand() {
        let base = Some((50.0, 10.0));
        let rhr_base = Some((60.0, 3.0));
        // On baseline, 8 hours at 90 % efficiency, SpO2 97 %:
        // 0.4·50 + 0.25·50 + 0.25·(0.7·100 + 0.3·90) + 0.1·87.5 = 20 + 12.5 + 24.25 + 8.75 = 65.5.
        let day = Inputs {
            sleep_seconds: Some(28_800.0),
            efficiency: Some(90.0),
            rhr: Some(60.0),
            hrv: Some(50.0),
            spo2: Some(97.0),
        };
        assert_eq!(score(&day, base, rhr_base), Some(66));
        // HRV one sd up, resting heart rate one sd down: 70 and 70.
        // 0.4·70 + 0.25·70 + 24.25 + 8.75 = 78.5.
        let good = Inputs { hrv: Some(60.0), rhr: Some(57.0), ..day };
        assert_eq!(score(&good, base, rhr_base), Some(79));
        // Only HRV: the HRV component alone.
        let hrv_only = Inputs { hrv: Some(40.0), ..Inputs::default() };
        assert_eq!(score(&hrv_only, base, None), Some(30));
        // Sleep alone is not enough.
        let sleep_only = Inputs { sleep_seconds: Some(28_800.0), ..Inputs::default() };
        assert_eq!(score(&sleep_only, None, None), None);
        // Clamped to 0–100.
        let awful = Inputs { hrv: Some(0.0), rhr: Some(90.0), ..Inputs::default() };
        assert_eq!(score(&awful, base, rhr_base), Some(0));
    }

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap_or_default()
    }

    #[test]
    fn days_take_the_vendor_score_else_compute_one_against_the_baseline() {
        let ranking = Ranking::new(vec![(source(1, "apple"), 1), (source(2, "whoop"), 2)]);
        let sources = Sources::new(&ranking.sources);
        let (first, last) = (d("2026-03-29"), d("2026-03-30"));
        let mut rows = Vec::new();
        // Four weeks of RMSSD alternating 40 and 60 (baseline 50 ± 10), resting HR 60 ± 3.
        for k in 1..=28 {
            let day = first - Duration::days(k);
            rows.push(rollup(1, series::HRV_RMSSD, day, if k % 2 == 0 { 40.0 } else { 60.0 }, 1));
            rows.push(rollup(
                1,
                series::RESTING_HEART_RATE,
                day,
                if k % 2 == 0 { 57.0 } else { 63.0 },
                1,
            ));
        }
        // The 29th: HRV one sd up (70), resting HR on baseline (50): (0.4·70 + 0.25·50) / 0.65 = 62.3.
        rows.push(rollup(1, series::HRV_RMSSD, first, 60.0, 1));
        rows.push(rollup(1, series::RESTING_HEART_RATE, first, 60.0, 1));
        // The 30th: a vendor's score wins over computing one.
        rows.push(rollup(2, series::RECOVERY_SCORE, last, 81.6, 1));
        rows.push(rollup(1, series::HRV_RMSSD, last, 60.0, 1));
        let out = days(&[first, last], &by_day(rows), &BTreeMap::new(), &ranking, &sources);
        let computed = &out[&first];
        assert_eq!(computed.recovery_score, Some(62));
        assert_eq!(computed.score_method, Some(ScoreMethod::Computed));
        assert_eq!(computed.source.provider, "internal");
        assert_eq!(computed.avg_hrv_rmssd_ms, Some(60.0));
        let vendor = &out[&last];
        assert_eq!(vendor.recovery_score, Some(82));
        assert_eq!(vendor.score_method, Some(ScoreMethod::Vendor));
        assert_eq!(vendor.source.provider, "whoop");
    }
}
