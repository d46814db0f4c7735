//! `GET /summaries/body`: the user's body now: latest slow-changing measurements, recent
//! averages, and readings of the last hours. JSON `null` when there is nothing.
//!
//! Each value is the most recent one; when two sources measured on the same latest day (a scale
//! and the app it syncs through), the better-ranked source's. Every value says its source in
//! `metric_sources`, instead of one label for values from several devices.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use schema::summaries::Reading;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use super::{Ranking, by_day, round1, series};
use crate::AppState;
use crate::error::{ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::routes::existing_user;
use crate::source::{SourceOut, Sources};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(body_summary))
}

#[derive(Debug, Default, Serialize, ToSchema)]
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

#[derive(Debug, Serialize, ToSchema)]
pub struct Averaged {
    pub period_days: i64,
    pub resting_heart_rate_bpm: Option<f64>,
    pub avg_hrv_sdnn_ms: Option<f64>,
    pub avg_hrv_rmssd_ms: Option<f64>,
    pub period_start: NaiveDate,
    pub period_end: NaiveDate,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BloodPressure {
    pub avg_systolic_mmhg: f64,
    pub avg_diastolic_mmhg: f64,
    pub max_systolic_mmhg: Option<f64>,
    pub max_diastolic_mmhg: Option<f64>,
    pub min_systolic_mmhg: Option<f64>,
    pub min_diastolic_mmhg: Option<f64>,
    pub reading_count: i64,
}

#[derive(Debug, Default, Serialize, ToSchema)]
pub struct Latest {
    pub body_temperature_celsius: Option<f64>,
    pub body_temperature_measured_at: Option<DateTime<Utc>>,
    pub skin_temperature_celsius: Option<f64>,
    pub skin_temperature_measured_at: Option<DateTime<Utc>>,
    pub blood_pressure: Option<BloodPressure>,
    pub blood_pressure_measured_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize, ToSchema)]
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

/// The latest value of a series: its latest day, and on that day the best-ranked source.
async fn latest_value(
    state: &AppState,
    user_id: Uuid,
    slug: &str,
    ranking: &Ranking,
) -> ApiResult<Option<Reading>> {
    let id = series(slug);
    let days = schema::summaries::last_days(&state.db, user_id, id).await?;
    let Some(last) = days.iter().map(|(_, d)| *d).max() else { return Ok(None) };
    let Some((source, _)) =
        days.iter().filter(|(_, d)| *d == last).min_by_key(|(s, _)| ranking.rank(*s))
    else {
        return Ok(None);
    };
    let since = super::midnight(last) - Duration::days(1);
    Ok(schema::summaries::latest(&state.db, user_id, id, Some(*source), since).await?)
}

/// Body measurements: the latest weight, height, body fat, muscle mass and BMI; resting heart
/// rate and HRV averaged over the last `average_period` days (1–7, default 7); temperatures and
/// blood pressure of the last `latest_window_hours` (1–24, default 4). `null` without data.
#[utoipa::path(get, path = "/users/{user_id}/summaries/body", tag = "summaries",
    params(("user_id" = String, Path), ("average_period" = Option<i64>, Query),
        ("latest_window_hours" = Option<i64>, Query)),
    responses(
        (status = 200, body = Option<BodySummary>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn body_summary(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    Query(mut params): Query,
) -> ApiResult<Json<Option<BodySummary>>> {
    let user_id = existing_user(&state, &user_id).await?;
    let period = params.int("average_period", 7, 1, 7);
    let hours = params.int("latest_window_hours", 4, 1, 24);
    params.finish()?;
    let ranking = Ranking::load(&state, user_id).await?;
    let sources = Sources::new(&ranking.sources);
    let mut from: BTreeMap<&'static str, Uuid> = BTreeMap::new();
    let mut found = false;

    let mut slow = SlowChanging::default();
    let fields: [(&'static str, &str, Setter); 6] = [
        ("weight_kg", "weight", |s, v| s.weight_kg = Some(v)),
        ("height_cm", "height", |s, v| s.height_cm = Some(v)),
        ("body_fat_percent", "body_fat_percentage", |s, v| s.body_fat_percent = Some(v)),
        ("muscle_mass_kg", "skeletal_muscle_mass", |s, v| s.muscle_mass_kg = Some(v)),
        ("lean_body_mass_kg", "lean_body_mass", |s, v| s.lean_body_mass_kg = Some(v)),
        ("bmi", "body_mass_index", |s, v| s.bmi = Some(v)),
    ];
    for (field, slug, set) in fields {
        if let Some(r) = latest_value(&state, user_id, slug, &ranking).await? {
            set(&mut slow, round1(r.value));
            from.insert(field, r.data_source_id);
            found = true;
        }
    }
    if slow.bmi.is_none()
        && let (Some(w), Some(h)) = (slow.weight_kg, slow.height_cm.filter(|h| *h > 0.0))
    {
        slow.bmi = Some(round1(w / (h / 100.0).powi(2)));
    }

    // Averages of the day means of the best-ranked source, over the period.
    let today = Utc::now().date_naive();
    let first = today - Duration::days(period - 1);
    let ids = ["resting_heart_rate", "heart_rate_variability_sdnn", "heart_rate_variability_rmssd"]
        .map(series);
    let rows = schema::summaries::rollups(&state.db, user_id, &ids, first, today).await?;
    let days = by_day(rows);
    let mut means: [Option<f64>; 3] = [None; 3];
    for (i, id) in ids.iter().enumerate() {
        let day_means: Vec<f64> = days
            .values()
            .filter_map(|d| ranking.best(d.get(id).into_iter().flatten()))
            .filter_map(|r| {
                from.entry(["resting_heart_rate_bpm", "avg_hrv_sdnn_ms", "avg_hrv_rmssd_ms"][i])
                    .or_insert(r.data_source_id);
                r.mean()
            })
            .collect();
        if !day_means.is_empty() {
            means[i] = Some(round1(day_means.iter().sum::<f64>() / day_means.len() as f64));
            found = true;
        }
    }

    let since = Utc::now() - Duration::hours(hours);
    let mut latest = Latest::default();
    if let Some(r) =
        schema::summaries::latest(&state.db, user_id, series("body_temperature"), None, since)
            .await?
    {
        latest.body_temperature_celsius = Some(round1(r.value));
        latest.body_temperature_measured_at = Some(r.ts);
        from.insert("body_temperature_celsius", r.data_source_id);
        found = true;
    }
    if let Some(r) =
        schema::summaries::latest(&state.db, user_id, series("skin_temperature"), None, since)
            .await?
    {
        latest.skin_temperature_celsius = Some(round1(r.value));
        latest.skin_temperature_measured_at = Some(r.ts);
        from.insert("skin_temperature_celsius", r.data_source_id);
        found = true;
    }
    let systolic = schema::summaries::latest(
        &state.db,
        user_id,
        series("blood_pressure_systolic"),
        None,
        since,
    )
    .await?;
    if let Some(sys) = systolic {
        // The diastolic reading of the same measurement: same source, within five seconds.
        let near = sys.ts - Duration::seconds(5);
        let dia = schema::summaries::latest(
            &state.db,
            user_id,
            series("blood_pressure_diastolic"),
            Some(sys.data_source_id),
            near,
        )
        .await?
        .filter(|d| (d.ts - sys.ts).num_seconds().abs() <= 5);
        if let Some(dia) = dia {
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
            found = true;
        }
    }
    if !found {
        return Ok(Json(None));
    }
    let lead = from.get("weight_kg").or_else(|| from.values().next()).copied();
    Ok(Json(Some(BodySummary {
        source: lead.map(|id| sources.get(id)),
        slow_changing: slow,
        averaged: Averaged {
            period_days: period,
            resting_heart_rate_bpm: means[0],
            avg_hrv_sdnn_ms: means[1],
            avg_hrv_rmssd_ms: means[2],
            period_start: first,
            period_end: today,
        },
        latest,
        metric_sources: from.into_iter().map(|(k, id)| (k, sources.get(id))).collect(),
    })))
}
