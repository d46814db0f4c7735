//! `POST /api/v1/sdk/users/{user_id}/sync`: the mobile SDK push. The hottest path: it reads the
//! body (up to the configured limit), checks in one pass that it is well-formed JSON and finds the
//! provider, stores the batch (compressed) durably while the user's backlog is
//! under its bound, announces it to the workers and answers 202. Records are validated later,
//! one by one, by the worker: a bad record never costs the client its batch.
//!
//! A user over the backlog bound gets 503 with `Retry-After`, not a 4xx: the iOS SDK drops a
//! chunk for good on any 4xx but 401, and retries later on a 5xx (README, "Limits").

use std::io::Read;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use http_body_util::BodyExt as _;
use ingest::sdk::{PaddedJson, envelope};
use schema::sdk_batches::Inserted;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{SdkAuth, path_user};

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(sync)).routes(routes!(logs))
}

/// The upload-data response. The counts are those known at acceptance (none yet): the outcome
/// is reported by the sync run `task_id` (`GET /users/{user_id}/sync/runs`, `/sync/stream`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"status_code": 202, "response": "Import task queued successfully",
    "user_id": "0191f3c2-7a4e-7c51-9a43-2b6c1d0e8f10", "task_id": "0191f3c4-1b2a-7d3e-8f40-5a6b7c8d9e0f",
    "dropped_count": 0, "records_saved": 0, "workouts_saved": 0, "sleep_saved": 0}))]
pub(crate) struct UploadOut {
    pub status_code: u16,
    pub response: &'static str,
    pub user_id: String,
    pub task_id: Uuid,
    pub dropped_count: u64,
    pub records_saved: u64,
    pub workouts_saved: u64,
    pub sleep_saved: u64,
}

/// Reads a body of at most `limit` bytes (after gzip, when the client compressed it), into one
/// vector sized by the announced length with room for the parser's padding: no copy of the
/// whole body after it has arrived.
async fn read_body(headers: &HeaderMap, body: Body, limit: usize) -> ApiResult<PaddedJson> {
    let too_large = || {
        ApiError::client(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Request body is larger than the limit of {limit} bytes"),
        )
    };
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok());
    if announced.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(PaddedJson::capacity_for(announced.unwrap_or(0)));
    let mut body = body;
    while let Some(frame) = body.frame().await {
        let frame = frame
            .map_err(|e| ApiError::bad_request(format!("Could not read the request body: {e}")))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > limit {
                return Err(too_large());
            }
            bytes.extend_from_slice(&data);
        }
    }
    let gzipped = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("gzip"));
    if !gzipped {
        return Ok(PaddedJson::new(bytes));
    }
    // Read one byte past the limit to tell "exactly the limit" from "more".
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| ApiError::bad_request(format!("Could not decompress the gzip body: {e}")))?;
    if out.len() > limit {
        return Err(too_large());
    }
    Ok(PaddedJson::new(out))
}

/// How long a client over its backlog is asked to wait.
const BACKLOG_RETRY_AFTER: u64 = 30;

/// Compresses the body as sent (zstd at a fast level: SDK JSON shrinks about tenfold), then
/// checks in place that it is well-formed JSON naming a supported provider (the body is
/// scratch after that). The provider's slug and the compressed body.
fn compress_and_check(mut body: PaddedJson) -> ApiResult<(&'static str, Vec<u8>)> {
    let compressed = zstd::bulk::compress(body.json(), 1)
        .map_err(|e| ApiError::Other(format!("compressing a batch: {e}")))?;
    let name = envelope::check(&mut body).map_err(|e| {
        // The reference's wording for a body that is not JSON.
        ApiError::bad_request(format!("JSON decode error - {e}"))
    })?;
    let Some((provider, _)) = name.as_deref().and_then(envelope::sdk_provider) else {
        return Err(ApiError::bad_request(envelope::unsupported_message(name.as_deref())));
    };
    Ok((provider.slug, compressed))
}

/// Accepts a sync batch from the mobile SDK.
#[utoipa::path(post, path = "/sdk/users/{user_id}/sync", tag = "sdk",
    params(("user_id" = String, Path, description = "The user's UUID")),
    request_body(content = super::sdk_payload::SdkPayload, description = "The SDK sync payload: {provider, sdkVersion, syncTimestamp, data: {records, sleep, workouts}}. Gzip (`Content-Encoding: gzip`) or chunked bodies are taken."),
    responses(
        (status = 202, body = UploadOut),
        (status = 400, body = ErrorBody, description = "Unsupported provider, a body that is not JSON, or a malformed user id"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 503, body = ErrorBody, description = "The user's backlog is full: retry after `Retry-After` seconds"),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn sync(
    auth: SdkAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<(StatusCode, Json<UploadOut>)> {
    auth.ensure_user(&user_id)?;
    let id = path_user(&user_id)?;
    let bytes = read_body(&headers, body, state.config.sdk_max_body_bytes).await?;
    let size = i32::try_from(bytes.len()).unwrap_or(i32::MAX);
    // Large bodies are checked and compressed off the async threads.
    let (provider, compressed) = if bytes.len() > 256 << 10 {
        tokio::task::spawn_blocking(move || compress_and_check(bytes))
            .await
            .map_err(|e| ApiError::Other(e.to_string()))??
    } else {
        compress_and_check(bytes)?
    };
    let max_pending = state.config.sdk_max_pending_bytes;
    let inserted =
        schema::sdk_batches::insert(&state.db, id, provider, &compressed, size, max_pending)
            .await?;
    let batch = match inserted {
        Inserted::Batch(batch) => batch,
        Inserted::NoUser => return Err(ApiError::user_not_found(id)),
        Inserted::Backlog { pending } => {
            metrics::counter!("wearhouse_batches_deferred_total").increment(1);
            return Err(ApiError::Later {
                status: StatusCode::SERVICE_UNAVAILABLE,
                detail: format!(
                    "This user has {pending} bytes of batches waiting to be processed (the \
                     limit is {max_pending}); send this batch again later"
                ),
                retry_after: BACKLOG_RETRY_AFTER,
            });
        }
    };
    // The batch is durable: if Redis is down, the worker's sweeper announces it later.
    if let Err(e) = state.queue.announce(&[batch]).await {
        tracing::warn!(error = %e, batch_id = %batch, "could not announce a batch; the sweeper will");
    }
    metrics::counter!("wearhouse_batches_accepted_total").increment(1);
    Ok((
        StatusCode::ACCEPTED,
        Json(UploadOut {
            status_code: 202,
            response: "Import task queued successfully",
            user_id,
            task_id: batch.0,
            dropped_count: 0,
            records_saved: 0,
            workouts_saved: 0,
            sleep_saved: 0,
        }),
    ))
}

/// SDK telemetry (`historical_data_sync_start`, `device_state`, …): accepted and counted so
/// that the SDKs' fire-and-forget calls succeed.
#[utoipa::path(post, path = "/sdk/users/{user_id}/logs", tag = "sdk",
    params(("user_id" = String, Path, description = "The user's UUID")),
    request_body(content = Object, description = "{sdkVersion, provider, events: [...]}"),
    responses((status = 202, body = UploadOut), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn logs(
    auth: SdkAuth,
    Path(user_id): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<serde_json::Value>)> {
    auth.ensure_user(&user_id)?;
    metrics::counter!("wearhouse_sdk_log_requests_total").increment(1);
    tracing::debug!(%user_id, bytes = body.len(), "SDK log events received");
    Ok((
        StatusCode::ACCEPTED,
        Json(serde_json::json!({
            "status_code": 202,
            "response": "Log events stored successfully",
            "user_id": user_id,
        })),
    ))
}
