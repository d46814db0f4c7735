//! `POST /api/v1/internal/storage/events`: the bucket's object-created notifications (the S3
//! event-notification JSON that AWS and MinIO send), authenticated by a shared secret
//! (`Authorization: Bearer <secret>` or `X-Bucket-Events-Secret`). In completion mode
//! `bucket_event` each new upload is queued for import, once per object; in mode `client`
//! notifications are acknowledged and ignored.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::ApiJson;
use crate::{AppState, CompletionMode};

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(events))
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct EventsOut {
    /// Imports queued now.
    pub queued: Vec<Uuid>,
    /// Records ignored: other events, other buckets, keys outside users' upload areas,
    /// objects already queued, or completion mode `client`.
    pub ignored: usize,
}

fn secret_of(headers: &HeaderMap) -> Option<&str> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().strip_prefix("Bearer ").unwrap_or(v.trim()));
    headers.get("x-bucket-events-secret").and_then(|v| v.to_str().ok()).or(bearer)
}

#[utoipa::path(post, path = "/internal/storage/events", tag = "import",
    request_body(content = Object, description = "S3 event notification: {Records: [{eventName, s3: {bucket, object}}]}"),
    responses((status = 200, body = EventsOut), (status = 401, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("storage_events" = [])))]
async fn events(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(event): ApiJson<Value>,
) -> ApiResult<Json<EventsOut>> {
    let Some(secret) = state.config.bucket_events_secret.as_deref() else {
        return Err(ApiError::client(
            StatusCode::SERVICE_UNAVAILABLE,
            "Bucket events are not configured",
        ));
    };
    if !secret_of(&headers).is_some_and(|given| crate::security::secrets::same(given, secret)) {
        return Err(ApiError::bearer_unauthorized("Could not validate credentials"));
    }
    let uploads = super::xml_import::uploads(&state)?;
    let total = event.get("Records").and_then(Value::as_array).map_or(0, Vec::len);
    if state.config.completion_mode != CompletionMode::BucketEvent {
        return Ok(Json(EventsOut { queued: Vec::new(), ignored: total }));
    }
    let queued = uploads.queue_reported(&event).await.map_err(super::xml_import::upload_failure)?;
    let queued = queued.iter().map(|id| id.0).collect::<Vec<_>>();
    Ok(Json(EventsOut { ignored: total - queued.len(), queued }))
}
