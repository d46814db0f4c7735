//! `GET /summaries/recovery`: per local day, the night's sleep, resting heart rate, HRV, SpO2
//! and a recovery score, for every user.
//!
//! The score is the vendor's where a source sent one (`recovery_score` samples). Otherwise it is
//! computed from the stored data (see `score` and the README): HRV and resting heart rate
//! against the user's own 28-day baseline, last night's sleep, and SpO2.

use std::collections::{BTreeMap, HashMap};

use axum::Json;
use axum::extract::{Path, State};
use chrono::{Duration, NaiveDate};
use schema::summaries::DayRollup;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Ranking, by_day, day_paging, page_days, round1, series};
use crate::AppState;
use crate::error::{ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::pagination::{CursorPage, PageMetadata};
use crate::routes::existing_user;
use crate::source::{SourceOut, Sources};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(recovery))
}

/// Days of history a baseline looks at, and the fewest it needs.
const BASELINE_DAYS: i64 = 28;
const BASELINE_MIN_DAYS: usize = 7;

#[derive(Debug, Serialize, ToSchema)]
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
    pub score_method: Option<&'static str>,
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

fn internal() -> SourceOut {
    SourceOut {
        provider: "internal".into(),
        source: Some("wearhouse".into()),
        device: None,
        device_type: None,
        device_name: None,
    }
}

/// Recovery per local day in `[start_date, end_date]`, in date order, with `total_count`.
#[utoipa::path(get, path = "/users/{user_id}/summaries/recovery", tag = "summaries",
    params(("user_id" = String, Path), ("start_date" = String, Query), ("end_date" = String, Query),
        ("cursor" = Option<String>, Query), ("limit" = Option<i64>, Query, description = "1 to 100, default 50")),
    responses(
        (status = 200, body = CursorPage<RecoveryDay>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn recovery(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    Query(params): Query,
) -> ApiResult<Json<CursorPage<RecoveryDay>>> {
    let user_id = existing_user(&state, &user_id).await?;
    let paging = day_paging(params, 100)?;
    let days = paging.days;
    let ranking = Ranking::load(&state, user_id).await?;
    let sources = Sources::new(&ranking.sources);
    let [rhr_id, sdnn_id, rmssd_id, spo2_id, vendor_id] = [
        "resting_heart_rate",
        "heart_rate_variability_sdnn",
        "heart_rate_variability_rmssd",
        "oxygen_saturation",
        "recovery_score",
    ]
    .map(series);
    let history = days.first - Duration::days(BASELINE_DAYS);
    let rows = schema::summaries::rollups(
        &state.db,
        user_id,
        &[rhr_id, sdnn_id, rmssd_id, spo2_id, vendor_id],
        history,
        days.last,
    )
    .await?;
    let rollups = by_day(rows);
    let nights = super::sleep::nights(&state, user_id, days.first, days.last, &ranking).await?;

    // Per day and series: the best-ranked source's rollup.
    let best = |d: &HashMap<i16, Vec<DayRollup>>, id: i16| -> Option<DayRollup> {
        ranking.best(d.get(&id).into_iter().flatten()).cloned()
    };
    let mean_of = |date: NaiveDate, id: i16| -> Option<f64> {
        rollups.get(&date).and_then(|d| best(d, id)).and_then(|r| r.mean())
    };
    let history_of = |date: NaiveDate, id: i16| -> Vec<f64> {
        (1..=BASELINE_DAYS).filter_map(|k| mean_of(date - Duration::days(k), id)).collect()
    };

    let mut items: BTreeMap<NaiveDate, RecoveryDay> = BTreeMap::new();
    let mut date = days.first;
    while date <= days.last {
        let night = nights.get(&date);
        let summary = night.map(|s| super::sleep::day(date, s, &sources));
        let (rhr, sdnn, rmssd, spo2) = (
            mean_of(date, rhr_id),
            mean_of(date, sdnn_id),
            mean_of(date, rmssd_id),
            mean_of(date, spo2_id),
        );
        let vendor = rollups.get(&date).and_then(|d| best(d, vendor_id));
        let sleep_seconds = summary.as_ref().map(|s| s.duration_minutes * 60).filter(|s| *s > 0);
        let efficiency = summary.as_ref().and_then(|s| s.efficiency_percent);
        let has_data = sleep_seconds.is_some()
            || rhr.is_some()
            || sdnn.is_some()
            || rmssd.is_some()
            || spo2.is_some()
            || vendor.is_some();
        if has_data {
            // RMSSD where the day and its baseline have it, else SDNN: never mixed.
            let rmssd_base = baseline(&history_of(date, rmssd_id));
            let (hrv, hrv_base) = match (rmssd, rmssd_base) {
                (Some(v), Some(b)) => (Some(v), Some(b)),
                _ => (sdnn, baseline(&history_of(date, sdnn_id))),
            };
            let inputs = Inputs {
                sleep_seconds: sleep_seconds.map(|s| s as f64),
                efficiency,
                rhr,
                hrv,
                spo2,
            };
            let computed = score(&inputs, hrv_base, baseline(&history_of(date, rhr_id)));
            let (source, value, method) = match vendor.as_ref().and_then(|v| Some((v, v.mean()?))) {
                Some((v, value)) => {
                    (sources.get(v.data_source_id), Some(value.round() as i64), Some("vendor"))
                }
                None => (internal(), computed, computed.map(|_| "computed")),
            };
            items.insert(
                date,
                RecoveryDay {
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
                },
            );
        }
        date += Duration::days(1);
    }
    let total = items.len() as i64;
    let (page, mut pagination) = page_days(items, &paging);
    pagination.total_count = Some(total);
    let data: Vec<RecoveryDay> = page.into_iter().map(|(_, d)| d).collect();
    let metadata = PageMetadata {
        resolution: Some("1day".into()),
        sample_count: data.len() as i64,
        start_time: Some(days.start),
        end_time: Some(days.end),
    };
    Ok(Json(CursorPage { data, pagination, metadata }))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
