//! `GET /api/v1/users/{user_id}/health-scores`: scores, newest first, offset-paged: vendor
//! scores and a sleep score computed for every night, by the rules of `rules::scores`.

use axum::Json;
use axum::extract::Path;
use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use rules::Sources;
use rules::scores::{self, CATEGORIES, HealthScore, INTERNAL, VENDOR_SERIES};
use schema::summaries::{DataDays, DayScope};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::dates;
use crate::error::{ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::pagination::{CursorPage, CursorPagination, PageMetadata};
use crate::read_routing::ReadState;
use crate::routes::user_ranking;
use schema::ids::SeriesId;
use schema::ids::UserId;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(health_scores))
        .route_layer(axum::middleware::from_fn(crate::read_routing::route))
}

/// The deepest an offset may go: pages past it are better read with a date window.
const MAX_OFFSET: i64 = 100_000;

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
    ReadState(state): ReadState,
    Path(user_id): Path<String>,
    Query(mut params): Query,
) -> ApiResult<Json<CursorPage<HealthScore>>> {
    let (user_id, ranking) = user_ranking(&state, &user_id).await?;
    let window = params.window("start_date", "end_date", false);
    let category =
        params.raw("category").is_some().then(|| params.choice("category", CATEGORIES, ""));
    let mut providers: Vec<&str> = vendors::providers().map(|p| p.slug).collect();
    providers.push(INTERNAL);
    let provider =
        params.raw("provider").is_some().then(|| params.choice("provider", &providers, ""));
    let limit = params.limit(50, 1000);
    let offset = params.int("offset", 0, 0, MAX_OFFSET);
    params.finish()?;
    let (from, to) = window.unzip();

    let wanted = |c: &str| category.is_none_or(|x| x == c);
    let mut scores = Vec::new();
    let mut total = 0;
    if wanted("sleep") && provider.is_none_or(|p| p == INTERNAL) {
        let (nights, count) =
            newest_nights(&state, user_id, from, to, offset + limit, &ranking).await?;
        scores = scores::sleep_scores(&nights, &Sources::new(&ranking.sources));
        total += count;
    }
    let vendor: Vec<SeriesId> =
        VENDOR_SERIES.iter().filter(|(_, c)| wanted(c)).map(|(s, _)| *s).collect();
    if !vendor.is_empty() && provider != Some(INTERNAL) {
        let sources: Option<Vec<Uuid>> = provider
            .map(|p| ranking.sources.iter().filter(|s| s.provider == p).map(|s| s.id).collect());
        let (rows, count) = schema::summaries::newest_readings(
            &state.db,
            user_id,
            &vendor,
            sources.as_deref(),
            from,
            to,
            offset + limit,
        )
        .await?;
        total += count;
        scores.extend(rows.iter().filter_map(|row| {
            scores::vendor_score(user_id, row.series_type_id, &row.reading, &ranking)
        }));
    }
    scores::newest_first(&mut scores);
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

/// The newest `n` nights (by wake-up day) ending in `[from, to)`, and how many there are: a
/// page reads only the nights it can show, however long the user's history.
async fn newest_nights(
    state: &AppState,
    user_id: UserId,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
    n: i64,
    ranking: &rules::Ranking,
) -> ApiResult<(BTreeMap<NaiveDate, Vec<schema::sessions::Sleep>>, i64)> {
    let (earliest, latest) = dates::range();
    let (from, to) = (from.unwrap_or(earliest), to.unwrap_or(latest));
    let sources = ranking.arrays();
    // Local days within a day of the window's ends; the session ends decide.
    let first = from.date_naive().pred_opt().unwrap_or(NaiveDate::MIN);
    let last = to.date_naive().succ_opt().unwrap_or(NaiveDate::MAX);
    let scope = DayScope { first, last, ends_from: from, ends_to: to, sources: &sources };
    let which = DataDays::Nights;
    let (days, count) = tokio::try_join!(
        schema::summaries::data_days(&state.db, user_id, which, &scope, true, n),
        schema::summaries::count_data_days(&state.db, user_id, which, &scope),
    )?;
    let (Some(&newest), Some(&oldest)) = (days.first(), days.last()) else {
        return Ok((BTreeMap::new(), count));
    };
    let (ends_from, ends_to) = rules::sleep::read_window(oldest, newest);
    let sessions = schema::summaries::sleep_ending(
        &state.db,
        user_id,
        ends_from.max(from),
        ends_to.min(to),
        &sources,
    )
    .await?;
    Ok((rules::sleep::nights(sessions, Some((oldest, newest))), count))
}
