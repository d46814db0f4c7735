//! `GET /api/v1/users/{user_id}/health-scores`: scores, newest first, offset-paged.
//!
//! Two kinds: vendor scores stored as samples (`recovery_score`, Garmin's body battery and
//! stress level), and a sleep score we compute for every night of every user from the sleep
//! sessions (provider `internal`), so it exists whatever device a user wears. Nights recorded by
//! two sources count once, by the source-priority rule of the sleep summary.
//!
//! The sleep score (0–100) weighs, over the night's sessions (naps aside):
//! - duration (0.50): time asleep against 8 hours, capped at 100;
//! - efficiency (0.25): time asleep over time in bed, 60 % scoring 0 and 95 % and above 100;
//! - restoration (0.25): deep + REM sleep over time asleep, 40 % and above scoring 100.
//!
//! Components without data are left out and the others' weights rescaled.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use super::summaries::sleep::{SleepDay, day, longest_night, night_span, resolve, wake_date};
use super::summaries::{Ranking, round1, series};
use crate::AppState;
use crate::error::{ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::pagination::{CursorPage, CursorPagination, PageMetadata};
use crate::routes::existing_user;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(health_scores))
}

const CATEGORIES: &[&str] = &[
    "sleep",
    "recovery",
    "readiness",
    "activity",
    "stress",
    "resilience",
    "body_battery",
    "strain",
];

/// Vendor score series and the category each is listed under.
const VENDOR_SERIES: &[(&str, &str)] = &[
    ("recovery_score", "recovery"),
    ("garmin_body_battery", "body_battery"),
    ("garmin_stress_level", "stress"),
];

/// The deepest an offset may go: pages past it are better read with a date window.
const MAX_OFFSET: i64 = 100_000;

#[derive(Debug, Serialize, ToSchema)]
pub struct Component {
    pub value: f64,
    pub qualifier: &'static str,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HealthScore {
    /// Stable: derived from what the score is of, so the same score keeps its id.
    pub id: Uuid,
    pub category: &'static str,
    pub value: Option<f64>,
    pub qualifier: Option<&'static str>,
    /// Local time with the zone offset.
    pub recorded_at: String,
    pub zone_offset: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub components: Option<Value>,
    pub data_source_id: Uuid,
    pub provider: String,
    #[serde(skip)]
    at: DateTime<Utc>,
}

/// Words for a 0–100 score.
pub fn qualifier(score: f64) -> &'static str {
    match score {
        s if s >= 85.0 => "excellent",
        s if s >= 70.0 => "good",
        s if s >= 50.0 => "fair",
        _ => "poor",
    }
}

/// The sleep score of one wake-up day and its components; `None` without night sleep.
pub fn sleep_score(night: &SleepDay) -> Option<(f64, Vec<(&'static str, f64)>)> {
    if night.duration_minutes <= 0 {
        return None;
    }
    let clamp = |v: f64| v.clamp(0.0, 100.0);
    let asleep = night.duration_minutes as f64;
    let mut parts = vec![("duration", clamp(asleep / 480.0 * 100.0), 0.50)];
    if let Some(e) = night.efficiency_percent {
        parts.push(("efficiency", clamp((e - 60.0) / 35.0 * 100.0), 0.25));
    }
    if let Some(s) = &night.stages {
        let restorative = (s.deep + s.rem) as f64 / asleep;
        parts.push(("restoration", clamp(restorative / 0.40 * 100.0), 0.25));
    }
    let weight: f64 = parts.iter().map(|(_, _, w)| w).sum();
    let score = parts.iter().map(|(_, v, w)| v * w).sum::<f64>() / weight;
    Some((score.round(), parts.into_iter().map(|(n, v, _)| (n, round1(v))).collect()))
}

/// Sleep scores of the nights whose wake-up falls in `[from, to)`.
async fn sleep_scores(
    state: &AppState,
    user_id: Uuid,
    ranking: &Ranking,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
) -> ApiResult<Vec<HealthScore>> {
    let from = from.unwrap_or(DateTime::UNIX_EPOCH);
    let to = to.unwrap_or(DateTime::<Utc>::MAX_UTC);
    let sessions = schema::summaries::sleep_ending(&state.db, user_id, from, to).await?;
    let mut by_day: BTreeMap<NaiveDate, Vec<_>> = BTreeMap::new();
    for s in resolve(sessions, ranking) {
        by_day.entry(wake_date(&s)).or_default().push(s);
    }
    let sources = crate::source::Sources::new(&ranking.sources);
    let mut out = Vec::new();
    for (date, sessions) in by_day {
        let night = day(date, &sessions, &sources);
        let Some((score, components)) = sleep_score(&night) else { continue };
        // The night's longest session stands for it: its id, source and offset; the score is
        // recorded at the night's last wake-up.
        let (Some(main), Some((_, end))) = (longest_night(&sessions), night_span(&sessions)) else {
            continue;
        };
        let components: serde_json::Map<String, Value> = components
            .into_iter()
            .map(|(n, v)| (n.to_string(), json!(Component { value: v, qualifier: qualifier(v) })))
            .collect();
        out.push(HealthScore {
            id: Uuid::new_v5(&main.id, b"sleep-score"),
            category: "sleep",
            value: Some(score),
            qualifier: Some(qualifier(score)),
            recorded_at: schema::zone::local_time(end, main.zone_offset),
            zone_offset: main.zone_offset.map(schema::zone::format),
            components: Some(Value::Object(components)),
            data_source_id: main.data_source_id,
            provider: "internal".into(),
            at: end,
        });
    }
    Ok(out)
}

/// Health scores newest first; `total_count` counts every match, cursors are always null.
#[utoipa::path(get, path = "/users/{user_id}/health-scores", tag = "health scores",
    params(("user_id" = String, Path),
        ("start_date" = Option<String>, Query), ("end_date" = Option<String>, Query),
        ("category" = Option<String>, Query, description = "sleep, recovery, readiness, activity, stress, resilience, body_battery or strain"),
        ("provider" = Option<String>, Query, description = "a provider, or `internal` for the scores computed here"),
        ("limit" = Option<i64>, Query, description = "1 to 1000, default 50"),
        ("offset" = Option<i64>, Query, description = "0 to 100000, default 0")),
    responses(
        (status = 200, body = CursorPage<HealthScore>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn health_scores(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    Query(mut params): Query,
) -> ApiResult<Json<CursorPage<HealthScore>>> {
    let user_id = existing_user(&state, &user_id).await?;
    let window = params.window("start_date", "end_date", false);
    let category =
        params.raw("category").is_some().then(|| params.choice("category", CATEGORIES, ""));
    let mut providers: Vec<&str> =
        schema::catalogue::providers::PROVIDERS.iter().map(|p| p.slug).collect();
    providers.push("internal");
    let provider =
        params.raw("provider").is_some().then(|| params.choice("provider", &providers, ""));
    let limit = params.limit(50, 1000);
    let offset = params.int("offset", 0, 0, MAX_OFFSET);
    params.finish()?;
    let (from, to) = window.unzip();

    let ranking = Ranking::load(&state, user_id).await?;
    let wanted = |c: &str| category.is_none_or(|x| x == c);
    let mut scores = Vec::new();
    let mut total = 0;
    if wanted("sleep") && provider.is_none_or(|p| p == "internal") {
        scores = sleep_scores(&state, user_id, &ranking, from, to).await?;
        total += scores.len() as i64;
    }
    let vendor: Vec<(i16, &'static str)> =
        VENDOR_SERIES.iter().filter(|(_, c)| wanted(c)).map(|(s, c)| (series(s), *c)).collect();
    if !vendor.is_empty() && provider != Some("internal") {
        let ids: Vec<i16> = vendor.iter().map(|(s, _)| *s).collect();
        let sources: Option<Vec<Uuid>> = provider
            .map(|p| ranking.sources.iter().filter(|s| s.provider == p).map(|s| s.id).collect());
        let (rows, count) = schema::summaries::newest_readings(
            &state.db,
            user_id,
            &ids,
            sources.as_deref(),
            from,
            to,
            offset + limit,
        )
        .await?;
        total += count;
        let provider_of = |id: Uuid| {
            ranking
                .sources
                .iter()
                .find(|s| s.id == id)
                .map(|s| s.provider.clone())
                .unwrap_or_default()
        };
        for row in rows {
            let r = row.reading;
            let category = vendor.iter().find(|(s, _)| *s == row.series_type_id).map(|(_, c)| *c);
            let Some(category) = category else { continue };
            let key =
                format!("{}|{}|{}", row.series_type_id, r.data_source_id, r.ts.timestamp_micros());
            scores.push(HealthScore {
                id: Uuid::new_v5(&user_id, key.as_bytes()),
                category,
                value: Some(r.value),
                qualifier: None,
                recorded_at: schema::zone::local_time(r.ts, r.zone_offset),
                zone_offset: r.zone_offset.map(schema::zone::format),
                components: None,
                data_source_id: r.data_source_id,
                provider: provider_of(r.data_source_id),
                at: r.ts,
            });
        }
    }
    scores.sort_by(|a, b| b.at.cmp(&a.at).then(a.id.cmp(&b.id)));
    let data: Vec<HealthScore> =
        scores.into_iter().skip(offset as usize).take(limit as usize).collect();
    let has_more = offset + (data.len() as i64) < total;
    let metadata = PageMetadata {
        resolution: None,
        sample_count: data.len() as i64,
        start_time: from,
        end_time: to,
    };
    let pagination = CursorPagination {
        next_cursor: None,
        previous_cursor: None,
        has_more,
        total_count: Some(total),
    };
    Ok(Json(CursorPage { data, pagination, metadata }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routes::summaries::sleep::StageMinutes;

    fn night(minutes: i64, efficiency: Option<f64>, stages: Option<(i64, i64)>) -> SleepDay {
        SleepDay {
            date: NaiveDate::default(),
            source: None,
            start_time: None,
            end_time: None,
            zone_offset: None,
            duration_minutes: minutes,
            total_duration_minutes: minutes,
            time_in_bed_minutes: None,
            efficiency_percent: efficiency,
            stages: stages.map(|(deep, rem)| StageMinutes { awake: 0, light: 0, deep, rem }),
            interruptions_count: None,
            nap_count: 0,
            nap_duration_minutes: 0,
            sessions: Vec::new(),
            avg_heart_rate_bpm: None,
            avg_hrv_sdnn_ms: None,
            avg_hrv_rmssd_ms: None,
            avg_respiratory_rate: None,
            avg_spo2_percent: None,
        }
    }

    #[test]
    fn sleep_score_weighs_its_parts() {
        // 6 h asleep: duration 75; efficiency 88 %: 80; deep+rem 144 of 360 min = 40 %: 100.
        let (score, parts) =
            sleep_score(&night(360, Some(88.0), Some((72, 72)))).unwrap_or_default();
        assert_eq!(score, (0.5f64 * 75.0 + 0.25 * 80.0 + 0.25 * 100.0).round());
        assert_eq!(parts, vec![("duration", 75.0), ("efficiency", 80.0), ("restoration", 100.0)]);
        // Duration alone: its weight is rescaled to all.
        assert_eq!(sleep_score(&night(600, None, None)).map(|s| s.0), Some(100.0));
        assert_eq!(sleep_score(&night(0, Some(90.0), None)), None);
    }

    #[test]
    fn qualifiers() {
        assert_eq!([90.0, 75.0, 55.0, 10.0].map(qualifier), ["excellent", "good", "fair", "poor"]);
    }
}
