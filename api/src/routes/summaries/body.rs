//! `GET /summaries/body`: the user's body now (latest measurements, recent averages, readings
//! of the last hours), by the rules of `rules::body`. JSON `null` when there is nothing.

use axum::Json;
use axum::extract::Path;
use chrono::{Duration, Utc};
use futures::future::try_join_all;
use rules::body::{self, AVERAGED, BodyReadings, BodySummary, SLOW};
use rules::ranking::by_day;
use rules::{Ranking, Sources, series};
use schema::summaries::Reading;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::read_routing::ReadState;
use crate::routes::user_ranking;
use schema::ids::SeriesId;
use schema::ids::UserId;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(body_summary))
}

/// The latest value of a series: its latest day, and on that day the best-ranked source's.
async fn latest_value(
    state: &AppState,
    user_id: UserId,
    series: SeriesId,
    ranking: &Ranking,
) -> ApiResult<Option<Reading>> {
    let days = schema::summaries::last_days(&state.db, user_id, series).await?;
    let Some((source, last)) = body::latest_source(&days, ranking) else { return Ok(None) };
    let since = rules::midnight(last) - Duration::days(1);
    Ok(schema::summaries::latest(&state.db, user_id, series, Some(source), since).await?)
}

/// The latest blood pressure measurement: a systolic reading and its diastolic one.
async fn blood_pressure(
    state: &AppState,
    user_id: UserId,
    since: chrono::DateTime<Utc>,
) -> ApiResult<Option<(Reading, Reading)>> {
    let db = &state.db;
    let Some(sys) = schema::summaries::latest(db, user_id, series::SYSTOLIC, None, since).await?
    else {
        return Ok(None);
    };
    let from = body::diastolic_since(&sys);
    let dia =
        schema::summaries::latest(db, user_id, series::DIASTOLIC, Some(sys.data_source_id), from)
            .await?
            .filter(|dia| body::same_measurement(&sys, dia));
    Ok(dia.map(|dia| (sys, dia)))
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
    ReadState(state): ReadState,
    Path(user_id): Path<String>,
    Query(mut params): Query,
) -> ApiResult<Json<Option<BodySummary>>> {
    let (user_id, ranking) = user_ranking(&state, &user_id).await?;
    let period = params.int("average_period", 7, 1, 7);
    let hours = params.int("latest_window_hours", 4, 1, 24);
    params.finish()?;
    let today = Utc::now().date_naive();
    let first = today - Duration::days(period - 1);
    let since = Utc::now() - Duration::hours(hours);
    let averaged = AVERAGED.map(|(_, id)| id);
    let db = &state.db;
    // Independent reads, at once.
    let (slow, period_rows, body_temperature, skin_temperature, blood_pressure) = tokio::try_join!(
        try_join_all(SLOW.iter().map(|(_, id, _)| latest_value(&state, user_id, *id, &ranking))),
        async { Ok(schema::summaries::rollups(db, user_id, &averaged, first, today).await?) },
        async {
            Ok(schema::summaries::latest(db, user_id, series::BODY_TEMPERATURE, None, since)
                .await?)
        },
        async {
            Ok(schema::summaries::latest(db, user_id, series::SKIN_TEMPERATURE, None, since)
                .await?)
        },
        blood_pressure(&state, user_id, since),
    )?;
    let readings = BodyReadings {
        slow: std::array::from_fn(|i| slow.get(i).cloned().flatten()),
        period: by_day(period_rows),
        body_temperature,
        skin_temperature,
        blood_pressure,
    };
    let sources = Sources::new(&ranking.sources);
    Ok(Json(body::summary(&readings, (first, today), &ranking, &sources)))
}
