//! `/api/v1/users/{user_id}/sync/runs` and `/sync/stream`: what became of a user's syncs.
//! Runs are kept in PostgreSQL; live events come over Redis pub/sub from the workers.

use std::convert::Infallible;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use chrono::{DateTime, Utc};
use futures::{Stream, StreamExt};
use schema::ids::UserId;
use schema::sync_runs::SyncRun;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::routes::existing_user;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(runs)).routes(routes!(stream))
}

/// Runs are listed for this long.
const WINDOW_HOURS: i32 = 24;

/// One run: an SDK batch, an export import.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SyncRunOut {
    /// The `task_id` the upload was answered with.
    pub run_id: Uuid,
    #[schema(value_type = uuid::Uuid)]
    pub user_id: UserId,
    pub provider: String,
    /// `sdk`, `xml_import`, …
    pub source: &'static str,
    /// `queued`, `in_progress`, `success`, `partial` (some items dropped) or `failed`.
    pub status: &'static str,
    /// `queued`, `processing` or `completed`.
    pub stage: Option<&'static str>,
    pub message: Option<String>,
    /// Items received per kind, samples inserted/updated/unchanged, sessions saved.
    #[schema(value_type = Object)]
    pub counts: Value,
    /// Dropped items per reason: `{count, examples}`.
    #[schema(value_type = Object)]
    pub dropped: Value,
    pub error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
    pub last_update: DateTime<Utc>,
}

impl From<SyncRun> for SyncRunOut {
    fn from(r: SyncRun) -> SyncRunOut {
        SyncRunOut {
            run_id: r.id,
            user_id: r.user_id,
            provider: r.provider,
            source: r.source.as_str(),
            status: r.status.as_str(),
            stage: r.stage.map(|s| s.as_str()),
            message: r.message,
            counts: r.counts,
            dropped: r.dropped,
            error: r.error,
            created_at: r.created_at,
            started_at: r.started_at,
            ended_at: r.ended_at,
            last_update: r.updated_at,
        }
    }
}

/// The user's runs of the last 24 hours, newest first.
#[utoipa::path(get, path = "/users/{user_id}/sync/runs", tag = "sync",
    params(
        ("user_id" = String, Path, description = "The user's UUID"),
        ("limit" = Option<i64>, Query, description = "At most this many runs (1–200, default 20)"),
    ),
    responses(
        (status = 200, body = Vec<SyncRunOut>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn runs(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    Query(mut params): Query,
) -> ApiResult<Json<Vec<SyncRunOut>>> {
    let limit = params.int("limit", 20, 1, 200);
    params.finish()?;
    let id = existing_user(&state, &user_id).await?;
    let runs = schema::sync_runs::recent_for_user(&state.db, id, WINDOW_HOURS, limit).await?;
    Ok(Json(runs.into_iter().map(Into::into).collect()))
}

fn event(run: &SyncRun) -> Event {
    let data = ingest::process::status_event(run).to_string();
    Event::default().event("sync.status").data(data)
}

/// Server-sent events: the latest runs (`replay`, oldest first), then every status event as it
/// happens, as `event: sync.status`. A terminal event carries the run's final status and
/// `run_id` = the task id.
#[utoipa::path(get, path = "/users/{user_id}/sync/stream", tag = "sync",
    params(
        ("user_id" = String, Path, description = "The user's UUID"),
        ("replay" = Option<i64>, Query, description = "Recent runs sent first (0–200, default 20)"),
    ),
    responses(
        (status = 200, content_type = "text/event-stream", description = "`sync.status` events"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn stream(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    Query(mut params): Query,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let replay = params.int("replay", 20, 0, 200);
    params.finish()?;
    let id = existing_user(&state, &user_id).await?;
    // Streams share the process's one Redis subscription; each still holds a task and a
    // socket, so only so many at once. The place goes with the stream, and is freed when the
    // client goes away.
    let place = state.sync_streams.clone().try_acquire_owned().map_err(|_| ApiError::Later {
        status: StatusCode::SERVICE_UNAVAILABLE,
        detail: "Too many status streams open; try again shortly".into(),
        retry_after: 5,
    })?;
    if !state.sync_hub.is_connected() {
        return Err(ApiError::Later {
            status: StatusCode::SERVICE_UNAVAILABLE,
            detail: "Status events are unavailable for a moment; try again shortly".into(),
            retry_after: 5,
        });
    }
    // Subscribe before replaying, so that nothing happening in between is missed.
    let events = state.sync_hub.subscribe(id);
    let mut past = schema::sync_runs::recent_for_user(&state.db, id, WINDOW_HOURS, replay).await?;
    past.reverse();
    let connected = futures::stream::once(async { Ok(Event::default().comment("connected")) });
    let replayed = futures::stream::iter(past.iter().map(|r| Ok(event(r))).collect::<Vec<_>>());
    let live = futures::stream::unfold((events, place), |(mut events, place)| async move {
        loop {
            match events.recv().await {
                Ok(payload) => {
                    let event = Event::default().event("sync.status").data(&*payload);
                    return Some((Ok(event), (events, place)));
                }
                // Fell behind: the newest events follow; `/sync/runs` has the states.
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            }
        }
    });
    let keep_alive = KeepAlive::new().interval(Duration::from_secs(15)).text("heartbeat");
    Ok(Sse::new(connected.chain(replayed).chain(live)).keep_alive(keep_alive))
}
