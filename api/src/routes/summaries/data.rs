//! `GET /summaries/data`: how much data a user has, overall or in a window, by series,
//! workout type and provider.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::Path;
use schema::ids::UserId;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::read_routing::ReadState;
use crate::routes::existing_user;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(data_summary))
}

#[derive(Debug, Default, Serialize, ToSchema)]
pub(super) struct ProviderCounts {
    pub provider: String,
    pub data_points: i64,
    pub series_counts: BTreeMap<String, i64>,
    pub workout_count: i64,
    pub sleep_count: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub(super) struct DataSummary {
    #[schema(value_type = uuid::Uuid)]
    pub user_id: UserId,
    pub total_data_points: i64,
    pub total_workouts: i64,
    pub total_sleep_events: i64,
    pub series_type_counts: BTreeMap<String, i64>,
    pub workout_type_counts: BTreeMap<String, i64>,
    pub by_provider: Vec<ProviderCounts>,
    pub has_womens_health_data: bool,
}

/// Counts of samples (by time), workouts and sleep sessions (by start) in
/// `[start_date, end_date)`, or of everything when both are omitted. Duplicates across sources
/// are counted: this is what is stored, per source.
#[utoipa::path(get, path = "/users/{user_id}/summaries/data", tag = "summaries",
    params(("user_id" = String, Path), ("start_date" = Option<String>, Query), ("end_date" = Option<String>, Query)),
    responses(
        (status = 200, body = DataSummary), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn data_summary(
    _auth: ApiAuth,
    ReadState(state): ReadState,
    Path(user_id): Path<String>,
    Query(mut params): Query,
) -> ApiResult<Json<DataSummary>> {
    let user_id = existing_user(&state, &user_id).await?;
    let start = params.time("start_date", false);
    let end = params.time("end_date", false);
    params.finish()?;
    let window = match (start, end) {
        (None, None) => None,
        (s, e) => Some((
            s.map(|s| s.at).unwrap_or(chrono::DateTime::<chrono::Utc>::UNIX_EPOCH),
            e.map(crate::dates::end_bound)
                .unwrap_or_else(|| chrono::Utc::now() + chrono::Duration::days(3650)),
        )),
    };
    let (counts, sources) = tokio::try_join!(
        schema::summaries::counts(&state.db, user_id, window),
        schema::data_sources::list_for_user(&state.db, user_id)
    )?;
    let provider_of = |id: Uuid| {
        sources
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.provider.clone())
            .unwrap_or_else(|| "unknown".into())
    };
    let mut by_provider: BTreeMap<String, ProviderCounts> = BTreeMap::new();
    fn entry(map: &mut BTreeMap<String, ProviderCounts>, p: String) -> &mut ProviderCounts {
        map.entry(p.clone()).or_insert_with(|| ProviderCounts { provider: p, ..Default::default() })
    }
    let mut series_type_counts = BTreeMap::new();
    let mut total_data_points = 0;
    for (series, source, n) in &counts.samples {
        let slug = schema::catalogue::series_types::by_id(*series)
            .map(|t| t.slug)
            .unwrap_or("unknown")
            .to_string();
        *series_type_counts.entry(slug.clone()).or_insert(0) += n;
        total_data_points += n;
        let p = entry(&mut by_provider, provider_of(*source));
        p.data_points += n;
        *p.series_counts.entry(slug).or_insert(0) += n;
    }
    let mut workout_type_counts = BTreeMap::new();
    let mut total_workouts = 0;
    for (kind, source, n) in &counts.workouts {
        *workout_type_counts
            .entry(kind.clone().unwrap_or_else(|| "unknown".into()))
            .or_insert(0) += n;
        total_workouts += n;
        entry(&mut by_provider, provider_of(*source)).workout_count += n;
    }
    let mut total_sleep_events = 0;
    for (source, n) in &counts.sleep {
        total_sleep_events += n;
        entry(&mut by_provider, provider_of(*source)).sleep_count += n;
    }
    Ok(Json(DataSummary {
        user_id,
        total_data_points,
        total_workouts,
        total_sleep_events,
        series_type_counts,
        workout_type_counts,
        by_provider: by_provider.into_values().collect(),
        has_womens_health_data: counts.cycles > 0,
    }))
}
