//! `GET /summaries/recovery`: per local day, the night's sleep, resting heart rate, HRV, SpO2
//! and a recovery score (the vendor's, else computed), by the rules of `rules::recovery`.

use axum::Json;
use axum::extract::Path;
use chrono::Duration;
use rules::Sources;
use rules::ranking::by_day;
use rules::recovery::{self, BASELINE_DAYS, RecoveryDay};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use schema::summaries::DataDays;

use super::{count_dates, day_paging, nights, page_dates, page_days, span};
use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::pagination::{CursorPage, PageMetadata};
use crate::read_routing::ReadState;
use crate::routes::user_ranking;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(recovery))
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
    ReadState(state): ReadState,
    Path(user_id): Path<String>,
    Query(params): Query,
) -> ApiResult<Json<CursorPage<RecoveryDay>>> {
    let (user_id, ranking) = user_ranking(&state, &user_id).await?;
    let paging = day_paging(params, 100)?;
    let days = paging.days;
    let sources = Sources::new(&ranking.sources);
    let which = DataDays::RollupsOrNights(&recovery::SERIES);
    let (dates, total) = tokio::try_join!(
        page_dates(&state, user_id, which, &paging, &ranking),
        count_dates(&state, user_id, which, &days, &ranking),
    )?;
    let items = match span(&dates) {
        Some((first, last)) => {
            let history = first - Duration::days(BASELINE_DAYS);
            let rows = async {
                let series = &recovery::SERIES;
                Ok::<_, ApiError>(
                    schema::summaries::rollups(&state.db, user_id, series, history, last).await?,
                )
            };
            let (rows, nights) =
                tokio::try_join!(rows, nights(&state, user_id, first, last, &ranking))?;
            recovery::days(&dates, &by_day(rows), &nights, &ranking, &sources)
        }
        None => Default::default(),
    };
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
