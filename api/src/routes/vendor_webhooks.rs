//! `GET/POST /api/v1/providers/{provider}/webhooks`: notifications from cloud vendors. `GET`
//! answers the vendor's verification handshake; `POST` checks the vendor's signature over the
//! raw body (401 and nothing stored when it does not hold), then stores what the notification
//! asks for as durable pulls before answering 2xx, so the worker fetches the data after.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::Query;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(verify, notify))
}

/// The largest notification taken: vendors send a few hundred bytes.
const MAX_BODY: usize = 64 * 1024;

fn vendor(
    state: &AppState,
    raw: &str,
) -> ApiResult<(&'static dyn vendors::Vendor, vendors::Endpoints)> {
    let vendor = vendors::by_slug(raw)
        .ok_or_else(|| ApiError::bad_request(format!("Unknown provider: {raw}")))?;
    let ends = state
        .config
        .vendors
        .endpoints(vendor.provider().slug)
        .ok_or_else(|| ApiError::bad_request(format!("Provider '{raw}' is not enabled")))?;
    Ok((vendor, ends.clone()))
}

/// The vendor's verification handshake.
#[utoipa::path(get, path = "/providers/{provider}/webhooks", tag = "providers",
    params(("provider" = String, Path, description = "Lowercase provider identifier")),
    responses((status = 200, description = "The handshake's answer"), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody)))]
async fn verify(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    Query(params): Query,
) -> ApiResult<Json<Value>> {
    let (vendor, ends) = vendor(&state, &provider)?;
    let query = |name: &str| params.string(name);
    vendor
        .webhook_challenge(&ends, &query)
        .map(Json)
        .ok_or_else(|| ApiError::unauthorized("Webhook verification failed"))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NotifiedOut {
    /// Pulls queued for the notification.
    pub queued: usize,
}

/// A vendor's notification: verified, then stored as pulls.
#[utoipa::path(post, path = "/providers/{provider}/webhooks", tag = "providers",
    params(("provider" = String, Path, description = "Lowercase provider identifier")),
    request_body(content = Object, description = "The vendor's notification, signed as it documents"),
    responses((status = 200, body = NotifiedOut), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 413, body = ErrorBody)))]
async fn notify(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<NotifiedOut>> {
    let (vendor, ends) = vendor(&state, &provider)?;
    if body.len() > MAX_BODY {
        return Err(ApiError::client(
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            "Notification too large",
        ));
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    if !vendor.webhook_verified(&ends, &header, &body) {
        return Err(ApiError::unauthorized("Invalid webhook signature"));
    }
    let value: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("JSON decode error - {e}")))?;
    let slug = vendor.provider().slug;
    if let Some(vendor_user) = vendor.webhook_deregistered(&value) {
        // The user removed the app at the vendor: the connection ends, and says why; but only
        // once the vendor refuses the token too, as an unsigned notice could be forged.
        let reason = schema::connections::RevokeReason::Deregistration;
        for user in schema::connections::users_of(&state.db, slug, &vendor_user).await? {
            if token_refused(&state, vendor, &ends, user).await? {
                schema::connections::revoke(&state.db, user, slug, reason, state.config.outbox)
                    .await?;
            }
        }
        return Ok(Json(NotifiedOut { queued: 0 }));
    }
    let mut queued = 0;
    for (vendor_user, window) in vendor.webhook_pulls(&value) {
        // A user of the vendor we do not know (disconnected since): nothing to do, and the
        // vendor is told it arrived, or it would send it again for an hour.
        for user in schema::connections::users_of(&state.db, slug, &vendor_user).await? {
            if vendors::pulls::enqueue_notified(&state.db, &state.queue, user, slug, window).await?
            {
                queued += 1;
            }
        }
    }
    Ok(Json(NotifiedOut { queued }))
}

/// Whether the vendor now refuses the user's stored token (401 or 403 where it says who the
/// user is).
async fn token_refused(
    state: &AppState,
    vendor: &'static dyn vendors::Vendor,
    ends: &vendors::Endpoints,
    user: uuid::Uuid,
) -> ApiResult<bool> {
    let slug = vendor.provider().slug;
    let client = state.db.client().await?;
    let token = schema::connections::tokens(&client, &state.keys, user, slug, false)
        .await?
        .and_then(|t| t.access_token);
    drop(client);
    let (Some(token), Some(url)) = (token, vendor.user_url(&ends.api_url)) else {
        return Ok(true);
    };
    let sent = state
        .vendor_http
        .get(url)
        .bearer_auth(token)
        .timeout(std::time::Duration::from_secs(10))
        .send()
        .await;
    Ok(sent.is_ok_and(|r| matches!(r.status().as_u16(), 401 | 403)))
}
