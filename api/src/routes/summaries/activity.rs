//! `GET /summaries/activity`: one item per local day with activity data, from the rollups, by
//! the rules of `rules::activity`.

use axum::Json;
use axum::extract::Path;
use rules::activity::{self, ActivityDay};
use rules::ranking::by_day;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{DayPaging, day_paging, page_days};
use crate::AppState;
use crate::error::{ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::pagination::{CursorPage, PageMetadata};
use crate::read_routing::ReadState;
use crate::routes::user_ranking;
use rules::Sources;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(activity))
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
    ReadState(state): ReadState,
    Path(user_id): Path<String>,
    Query(params): Query,
) -> ApiResult<Json<CursorPage<ActivityDay>>> {
    let (user_id, ranking) = user_ranking(&state, &user_id).await?;
    let paging: DayPaging = day_paging(params, 100)?;
    let days = paging.days;
    let series = activity::series_read();
    // The page's days and their rollups in one statement.
    let rows = match paging.rest() {
        Some(days) => {
            let n = paging.limit as i64 + 1;
            let backward = paging.backward();
            schema::summaries::page_rollups(&state.db, user_id, &series, days, backward, n).await?
        }
        None => Vec::new(),
    };
    let (page, pagination) = page_days(by_day(rows), &paging);
    let sources = Sources::new(&ranking.sources);
    let data: Vec<ActivityDay> =
        page.iter().map(|(d, rows)| activity::day(*d, rows, &ranking, &sources)).collect();
    let metadata = PageMetadata {
        resolution: Some("1day".into()),
        sample_count: data.len() as i64,
        start_time: Some(days.start),
        end_time: Some(days.end),
    };
    Ok(Json(CursorPage { data, pagination, metadata }))
}
