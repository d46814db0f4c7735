//! `GET /summaries/activity`: one item per local day with activity data, from the rollups.
//!
//! Per day and metric, the best-ranked source that reported the metric that day is used, whole:
//! its daily total where it sent one, else the sum of its intraday samples. Sources are never
//! added together (a phone and a watch count the same steps) and never silently dropped: a metric
//! only one source has is taken from it, and `metric_sources` says where each came from.

use std::collections::{BTreeMap, HashMap};

use axum::Json;
use axum::extract::{Path, State};
use chrono::NaiveDate;
use schema::summaries::DayRollup;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use super::{DayPaging, Ranking, by_day, day_paging, page_days, round1, series};
use crate::AppState;
use crate::error::{ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::pagination::{CursorPage, PageMetadata};
use crate::routes::existing_user;
use crate::source::{SourceOut, Sources};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(activity))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HeartRateDay {
    pub avg_bpm: Option<i64>,
    pub max_bpm: Option<i64>,
    pub min_bpm: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ActivityDay {
    /// The user's local date.
    pub date: NaiveDate,
    /// The source of the day's steps (or, without steps, of its first metric).
    pub source: Option<SourceOut>,
    pub steps: Option<i64>,
    pub distance_meters: Option<f64>,
    pub floors_climbed: Option<i64>,
    pub active_calories_kcal: Option<f64>,
    pub basal_calories_kcal: Option<f64>,
    /// Active plus basal energy, or the source's own total; null when basal energy is unknown
    /// (active energy alone is not a total).
    pub total_calories_kcal: Option<f64>,
    /// Active time as the source measures it (exercise minutes, active minutes).
    pub active_minutes: Option<i64>,
    pub stand_minutes: Option<i64>,
    pub heart_rate: Option<HeartRateDay>,
    /// Where each metric came from, by field name.
    #[schema(value_type = Object)]
    pub metric_sources: BTreeMap<&'static str, SourceOut>,
}

/// Additive metrics: field name and series slugs, preferred first.
const TOTALS: &[(&str, &[&str])] = &[
    ("steps", &["steps"]),
    ("distance_meters", &["distance_walking_running"]),
    ("floors_climbed", &["flights_climbed"]),
    ("active_calories_kcal", &["energy"]),
    ("basal_calories_kcal", &["basal_energy"]),
    ("total_energy", &["total_energy"]),
    ("active_minutes", &["exercise_time", "active_time", "move_time"]),
    ("stand_minutes", &["stand_time"]),
];

fn slugs() -> Vec<i16> {
    let mut ids: Vec<i16> = TOTALS.iter().flat_map(|(_, s)| s.iter().map(|s| series(s))).collect();
    ids.push(series("heart_rate"));
    ids
}

/// One day from its rollups (by series).
fn day(
    date: NaiveDate,
    rows: &HashMap<i16, Vec<DayRollup>>,
    ranking: &Ranking,
    sources: &Sources,
) -> ActivityDay {
    let mut values: HashMap<&str, f64> = HashMap::new();
    let mut from: BTreeMap<&'static str, Uuid> = BTreeMap::new();
    for (field, slugs) in TOTALS {
        let best =
            slugs.iter().find_map(|s| ranking.best(rows.get(&series(s)).into_iter().flatten()));
        if let Some(r) = best {
            values.insert(field, r.total());
            from.insert(field, r.data_source_id);
        }
    }
    let hr = ranking.best(rows.get(&series("heart_rate")).into_iter().flatten()).and_then(|r| {
        let avg = r.mean()?;
        from.insert("heart_rate", r.data_source_id);
        Some(HeartRateDay {
            avg_bpm: Some(avg.round() as i64),
            max_bpm: r.value_max.map(|v| v.round() as i64),
            min_bpm: r.value_min.map(|v| v.round() as i64),
        })
    });
    let active = values.get("active_calories_kcal").copied();
    let basal = values.get("basal_calories_kcal").copied();
    let total = match (active, basal, values.get("total_energy")) {
        (Some(a), Some(b), _) => Some(a + b),
        (_, _, Some(t)) => Some(*t),
        _ => None,
    };
    if total.is_some() && basal.is_none() {
        from.insert("total_calories_kcal", from.get("total_energy").copied().unwrap_or_default());
    }
    from.remove("total_energy");
    let lead = from.get("steps").or_else(|| from.values().next()).copied();
    ActivityDay {
        date,
        source: lead.map(|id| sources.get(id)),
        steps: values.get("steps").map(|v| v.round() as i64),
        distance_meters: values.get("distance_meters").map(|v| round1(*v)),
        floors_climbed: values.get("floors_climbed").map(|v| v.round() as i64),
        active_calories_kcal: active.map(round1),
        basal_calories_kcal: basal.map(round1),
        total_calories_kcal: total.map(round1),
        active_minutes: values.get("active_minutes").map(|v| v.round() as i64),
        stand_minutes: values.get("stand_minutes").map(|v| v.round() as i64),
        heart_rate: hr,
        metric_sources: from.into_iter().map(|(k, id)| (k, sources.get(id))).collect(),
    }
}

/// Activity per local day in `[start_date, end_date]` (a date-only end includes its day), in
/// date order; days without activity data are left out.
#[utoipa::path(get, path = "/users/{user_id}/summaries/activity", tag = "summaries",
    params(("user_id" = String, Path), ("start_date" = String, Query), ("end_date" = String, Query),
        ("cursor" = Option<String>, Query), ("limit" = Option<i64>, Query, description = "1 to 100, default 50")),
    responses(
        (status = 200, body = CursorPage<ActivityDay>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn activity(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    Query(params): Query,
) -> ApiResult<Json<CursorPage<ActivityDay>>> {
    let user_id = existing_user(&state, &user_id).await?;
    let paging: DayPaging = day_paging(params, 100)?;
    let days = paging.days;
    let (rows, ranking) = tokio::try_join!(
        async {
            Ok(schema::summaries::rollups(&state.db, user_id, &slugs(), days.first, days.last)
                .await?)
        },
        Ranking::load(&state, user_id)
    )?;
    let (page, pagination) = page_days(by_day(rows), &paging);
    let sources = Sources::new(&ranking.sources);
    let data: Vec<ActivityDay> =
        page.iter().map(|(d, rows)| day(*d, rows, &ranking, &sources)).collect();
    let metadata = PageMetadata {
        resolution: Some("1day".into()),
        sample_count: data.len() as i64,
        start_time: Some(days.start),
        end_time: Some(days.end),
    };
    Ok(Json(CursorPage { data, pagination, metadata }))
}
