//! `GET /summaries/sleep`: one item per local day one woke up on, by the rules of
//! `rules::sleep` (a night from two sources counts once).

use axum::Json;
use axum::extract::Path;
use rules::Sources;
use rules::sleep::{self, PHYSIOLOGY, SleepDay};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use schema::summaries::DataDays;

use super::{day_paging, nights, page_dates, page_days, span};
use crate::AppState;
use crate::error::{ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::pagination::{CursorPage, PageMetadata};
use crate::read_routing::ReadState;
use crate::routes::user_ranking;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(sleep_summary))
}

/// Sleep per wake-up day in `[start_date, end_date]`, in date order.
#[utoipa::path(get, path = "/users/{user_id}/summaries/sleep", tag = "summaries",
    params(("user_id" = String, Path), ("start_date" = String, Query), ("end_date" = String, Query),
        ("cursor" = Option<String>, Query), ("limit" = Option<i64>, Query, description = "1 to 100, default 50")),
    responses(
        (status = 200, body = CursorPage<SleepDay>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn sleep_summary(
    _auth: ApiAuth,
    ReadState(state): ReadState,
    Path(user_id): Path<String>,
    Query(params): Query,
) -> ApiResult<Json<CursorPage<SleepDay>>> {
    let (user_id, ranking) = user_ranking(&state, &user_id).await?;
    let paging = day_paging(params, 100)?;
    let days = paging.days;
    let dates = page_dates(&state, user_id, DataDays::Wakes, &paging, &ranking).await?;
    let by_day = match span(&dates) {
        Some((first, last)) => nights(&state, user_id, first, last, &ranking).await?,
        None => Default::default(),
    };
    let (page, pagination) = page_days(by_day, &paging);
    let sources = Sources::new(&ranking.sources);
    let mut data: Vec<SleepDay> = page.iter().map(|(d, s)| sleep::day(*d, s, &sources)).collect();
    // Physiology during each night, in one query for the page.
    let spans: Vec<(usize, sleep::Span)> = page
        .iter()
        .enumerate()
        .filter_map(|(i, (_, s))| Some((i, sleep::night_span(s)?)))
        .collect();
    let intervals: Vec<_> = spans.iter().map(|(_, span)| *span).collect();
    let means = schema::summaries::means_over(&state.db, user_id, &PHYSIOLOGY, &intervals).await?;
    for (n, series, mean) in means {
        let day = spans.get(n as usize).and_then(|(i, _)| data.get_mut(*i));
        if let Some(day) = day {
            sleep::add_physiology(day, series, mean);
        }
    }
    let metadata = PageMetadata {
        resolution: Some("1day".into()),
        sample_count: data.len() as i64,
        start_time: Some(days.start),
        end_time: Some(days.end),
    };
    Ok(Json(CursorPage { data, pagination, metadata }))
}
