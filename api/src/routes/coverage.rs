//! `GET /api/v1/users/{user_id}/data-coverage`: where a user's samples lie, per series (the
//! first and last day, days and samples), so a reader (the portal's charts) opens on the data
//! instead of on today.

use axum::Json;
use axum::extract::{Path, State};
use chrono::NaiveDate;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::ApiAuth;
use crate::routes::existing_user;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(data_coverage))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CoverageOut {
    /// The first and last UTC days holding any sample; null without samples.
    pub first_day: Option<NaiveDate>,
    pub last_day: Option<NaiveDate>,
    pub series: Vec<SeriesCoverageOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SeriesCoverageOut {
    /// The series, as `timeseries?types=` names it.
    #[serde(rename = "type")]
    pub series_type: String,
    pub unit: String,
    /// The first and last UTC days holding samples of it.
    pub first_day: NaiveDate,
    pub last_day: NaiveDate,
    pub days: i64,
    /// Samples stored, daily totals included.
    pub samples: i64,
}

/// Where the user's samples lie: per series, the first and last UTC day with samples, the days
/// and the samples, and the span of them all.
#[utoipa::path(get, path = "/users/{user_id}/data-coverage", tag = "data",
    params(("user_id" = String, Path, description = "The user's UUID")),
    responses(
        (status = 200, body = CoverageOut), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn data_coverage(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
) -> ApiResult<Json<CoverageOut>> {
    let id = existing_user(&state, &user_id).await?;
    let rows = schema::coverage::of_user(&state.db, id).await?;
    let series: Vec<SeriesCoverageOut> = rows
        .into_iter()
        .filter_map(|c| {
            let t = schema::catalogue::series_types::by_id(c.series_type_id)?;
            Some(SeriesCoverageOut {
                series_type: t.slug.to_string(),
                unit: t.unit.to_string(),
                first_day: c.first_day.date_naive(),
                last_day: c.last_day.date_naive(),
                days: c.days,
                samples: c.samples,
            })
        })
        .collect();
    Ok(Json(CoverageOut {
        first_day: series.iter().map(|s| s.first_day).min(),
        last_day: series.iter().map(|s| s.last_day).max(),
        series,
    }))
}
