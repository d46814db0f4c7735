//! `POST /api/v1/providers/{provider}/users/{user_id}/sync`: pull a connected user's data from
//! a cloud vendor now. Always asynchronous: a durable pull is queued and its `task_id` (the
//! sync run's id) answered; the run reports on `/sync/runs` and `/sync/stream`.

use axum::Json;
use axum::extract::{Path, State};
use chrono::{Duration, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, FieldError, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::routes::existing_user;
use crate::validate::Params;
use schema::ids::UserId;
use schema::vendor_pulls::PullKind;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(sync)).routes(routes!(historical))
}

/// The window a sync reads when none is given: the last two days (a night and a day either
/// side of midnight in any zone).
const DEFAULT_DAYS: i64 = 2;
/// The longest window one sync reads.
const MAX_DAYS: i64 = 31;

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SyncOut {
    pub success: bool,
    #[serde(rename = "async")]
    pub is_async: bool,
    pub task_id: Uuid,
    pub message: String,
}

/// Queues a pull of the user's data from the vendor.
#[utoipa::path(post, path = "/providers/{provider}/users/{user_id}/sync", tag = "providers",
    params(("provider" = String, Path, description = "Lowercase provider identifier"),
           ("user_id" = String, Path, description = "The user's UUID"),
           ("summary_start_time" = Option<String>, Query, description = "Window start (default: two days ago)"),
           ("summary_end_time" = Option<String>, Query, description = "Window end (default: now); at most 31 days after the start")),
    responses((status = 200, body = SyncOut), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = 422, body = ValidationBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn sync(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path((provider, user_id)): Path<(String, String)>,
    Query(mut params): Query,
) -> ApiResult<Json<SyncOut>> {
    let start = params.time("summary_start_time", false);
    let end = params.time("summary_end_time", false);
    let end = end.map_or_else(Utc::now, crate::dates::end_bound);
    let start = start.map_or(end - Duration::days(DEFAULT_DAYS), |t| t.at);
    if end <= start || end - start > Duration::days(MAX_DAYS) {
        let msg = format!("Value error, the window must be positive and at most {MAX_DAYS} days");
        let input = serde_json::json!(params.raw("summary_end_time"));
        params.push(FieldError::new(Params::loc("summary_end_time"), "value_error", msg, input));
    }
    params.finish()?;
    let (id, slug) = connected(&state, &provider, &user_id).await?;
    let kind = PullKind::Fetch;
    let task_id =
        vendors::pulls::enqueue(&state.db, &state.queue, id, slug, (start, end), kind).await?;
    Ok(Json(SyncOut {
        success: true,
        is_async: true,
        task_id: task_id.0,
        message: format!("Sync task queued for {slug}. Check task status for results."),
    }))
}

/// The user and the vendor of a sync: 401 as the reference says when there is no connection
/// to pull with.
async fn connected(
    state: &AppState,
    provider: &str,
    user_id: &str,
) -> ApiResult<(UserId, &'static str)> {
    if schema::catalogue::providers::by_slug(provider).is_some() {
        return Err(ApiError::bearer_unauthorized(format!(
            "No access token available for {provider} (SDK-based provider?)"
        )));
    }
    let vendor = vendors::by_slug(provider)
        .ok_or_else(|| ApiError::bad_request(format!("Unknown provider: {provider}")))?;
    let slug = vendor.provider().slug;
    // No worker would run a pull of a vendor this deployment has no credentials for.
    if !state.config.vendors.is_configured(slug) {
        return Err(ApiError::bad_request(format!("Provider '{slug}' is not enabled")));
    }
    let id = existing_user(state, user_id).await?;
    let status = schema::connections::status(&state.db, id, slug).await?;
    if status != Some(schema::connections::ConnectionStatus::Active) {
        return Err(ApiError::bearer_unauthorized(format!("User not connected to {slug}")));
    }
    Ok((id, slug))
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct HistoricalOut {
    pub success: bool,
    pub provider: String,
    #[schema(value_type = uuid::Uuid)]
    pub user_id: UserId,
    pub method: &'static str,
    /// The first window's task; every window's is in `task_ids`, oldest first.
    pub task_id: Uuid,
    pub task_ids: Vec<Uuid>,
    pub message: String,
    pub days: i64,
    pub start_date: String,
    pub end_date: String,
}

/// Queues a pull of the user's last `days` (1–365, default 90), in windows of at most 31 days,
/// oldest first.
#[utoipa::path(post, path = "/providers/{provider}/users/{user_id}/sync/historical", tag = "providers",
    params(("provider" = String, Path, description = "Lowercase provider identifier"),
           ("user_id" = String, Path, description = "The user's UUID"),
           ("days" = Option<i64>, Query, description = "1 to 365, default 90")),
    responses((status = 200, body = HistoricalOut), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = 422, body = ValidationBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn historical(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path((provider, user_id)): Path<(String, String)>,
    Query(mut params): Query,
) -> ApiResult<Json<HistoricalOut>> {
    let days = params.int("days", 90, 1, 365);
    params.finish()?;
    if schema::catalogue::providers::by_slug(&provider).is_some() {
        return Err(ApiError::bad_request(format!(
            "Provider '{provider}' does not support historical sync."
        )));
    }
    let (id, slug) = connected(&state, &provider, &user_id).await?;
    // A vendor whose history arrives by notification once asked for (Garmin's backfill) is
    // asked; the others are pulled.
    let vendor = vendors::by_slug(slug).ok_or_else(|| ApiError::Other(slug.into()))?;
    let kind = vendors::pulls::history_kind(vendor);
    let method = match kind {
        PullKind::Backfill => "webhook_backfill",
        PullKind::Fetch | PullKind::Push | PullKind::Deregistration => "pull_api",
    };
    let end = Utc::now();
    let start = end - Duration::days(days);
    let mut task_ids = Vec::new();
    let mut from = start;
    while from < end {
        let to = (from + Duration::days(MAX_DAYS)).min(end);
        let window = (from, to);
        task_ids
            .push(vendors::pulls::enqueue(&state.db, &state.queue, id, slug, window, kind).await?);
        from = to;
    }
    let task_ids: Vec<uuid::Uuid> = task_ids.iter().map(|id| id.0).collect();
    let task_id = *task_ids.first().ok_or_else(|| ApiError::Other("no window".into()))?;
    Ok(Json(HistoricalOut {
        success: true,
        provider: slug.to_string(),
        user_id: id,
        method,
        task_id,
        message: format!(
            "Historical sync of {days} days queued for {slug} in {} pulls.",
            task_ids.len()
        ),
        task_ids,
        days,
        start_date: start.to_rfc3339(),
        end_date: end.to_rfc3339(),
    }))
}
