//! `GET /api/v1/users/{user_id}/data-coverage`: where a user's samples lie, per series and
//! source (the first and last day, and the samples), so a reader (the portal's charts) opens on the data
//! instead of on today.

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Path, State};
use chrono::NaiveDate;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::ApiAuth;
use crate::routes::data_sources::display_name;
use crate::routes::existing_user;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(data_coverage))
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CoverageOut {
    /// The first and last UTC days holding any sample; null without samples.
    pub first_day: Option<NaiveDate>,
    pub last_day: Option<NaiveDate>,
    pub series: Vec<SeriesCoverageOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SeriesCoverageOut {
    /// The series, as `timeseries?types=` names it.
    #[serde(rename = "type")]
    pub series_type: String,
    pub unit: String,
    /// The first and last UTC days holding samples of it.
    pub first_day: NaiveDate,
    pub last_day: NaiveDate,
    /// Samples stored, daily totals included.
    pub samples: i64,
    /// The same, per source, the most samples first.
    pub sources: Vec<SourceCoverageOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SourceCoverageOut {
    /// The data source's id (`GET /users/{user_id}/data-sources`) and name.
    pub data_source_id: Uuid,
    pub display_name: String,
    pub first_day: NaiveDate,
    pub last_day: NaiveDate,
    pub samples: i64,
}

/// Where the user's samples lie: per series and per source, the first and last UTC day with
/// samples and the samples, sealed or not, and the span of them all.
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
    let names: HashMap<Uuid, String> = schema::data_sources::list_for_user(&state.db, id)
        .await?
        .iter()
        .map(|d| (d.id, display_name(d)))
        .collect();
    let mut series: Vec<SeriesCoverageOut> = Vec::new();
    for row in rows {
        let Some(t) = schema::catalogue::series_types::by_id(row.series_type_id) else {
            continue;
        };
        let (first_day, last_day) = (row.first.date_naive(), row.last.date_naive());
        match row.data_source_id {
            // A series' figures over all sources come first, then each source's.
            None => series.push(SeriesCoverageOut {
                series_type: t.slug.to_string(),
                unit: t.unit.to_string(),
                first_day,
                last_day,
                samples: row.samples,
                sources: Vec::new(),
            }),
            Some(source) => {
                if let Some(s) = series.last_mut() {
                    s.sources.push(SourceCoverageOut {
                        data_source_id: source,
                        display_name: names.get(&source).cloned().unwrap_or_default(),
                        first_day,
                        last_day,
                        samples: row.samples,
                    });
                }
            }
        }
    }
    for s in &mut series {
        s.sources.sort_by_key(|c| std::cmp::Reverse(c.samples));
    }
    Ok(Json(CoverageOut {
        first_day: series.iter().map(|s| s.first_day).min(),
        last_day: series.iter().map(|s| s.last_day).max(),
        series,
    }))
}
