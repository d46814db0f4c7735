//! `GET/POST /api/v1/providers/{provider}/webhooks`: notifications from cloud vendors. `GET`
//! (and `HEAD`) answers the vendor's verification handshake; `POST` checks the vendor's
//! signature over the raw body (401 and nothing stored when it does not hold), then stores what
//! the notification asks for as durable pulls before answering 2xx: pulls the worker fetches
//! after, or the data itself where the vendor pushes it, kept as the pull's page.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::Query;
use vendors::{Handshake, Notice};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(verify, notify))
}

fn vendor(
    state: &AppState,
    raw: &str,
) -> ApiResult<(&'static dyn vendors::Vendor, vendors::Endpoints)> {
    let vendor = vendors::by_slug(raw)
        .ok_or_else(|| ApiError::bad_request(format!("Unknown provider: {raw}")))?;
    let c = vendor.provider().capabilities;
    if !(c.webhook_stream || c.webhook_ping || c.webhook_callback) {
        return Err(ApiError::bad_request(format!("Provider '{raw}' does not send webhooks")));
    }
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
    responses((status = 200, description = "The handshake's answer"),
              (status = 204, description = "The handshake holds (vendors that want no body)"),
              (status = 404, description = "A wrong verification code (Fitbit's check of the receiver)"),
              (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody)))]
async fn verify(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    Query(params): Query,
) -> ApiResult<Response> {
    let (vendor, ends) = vendor(&state, &provider)?;
    let query = |name: &str| params.string(name);
    match vendor.webhook_challenge(&ends, &query) {
        Handshake::Json(answer) => Ok(Json(answer).into_response()),
        Handshake::Status(code) => {
            Ok(StatusCode::from_u16(code).unwrap_or(StatusCode::OK).into_response())
        }
        Handshake::Refused => Err(ApiError::unauthorized("Webhook verification failed")),
    }
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
    if body.len() > vendor.info().notification_bytes {
        return Err(ApiError::client(StatusCode::PAYLOAD_TOO_LARGE, "Notification too large"));
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    if !vendor.webhook_verified(&ends, &header, &body) {
        return Err(ApiError::unauthorized("Invalid webhook signature"));
    }
    let value = vendor
        .webhook_body(&body)
        .ok_or_else(|| ApiError::bad_request("The notification does not read"))?;
    let slug = vendor.provider().slug;
    let mut queued = 0;
    for notice in vendor.webhook_notices(&value) {
        // A user of the vendor we do not know (disconnected since) gives nothing to do, and the
        // vendor is told it arrived, or it would send it again.
        match notice {
            Notice::Pull(vendor_user, window) => {
                for user in schema::connections::users_of(&state.db, slug, &vendor_user).await? {
                    let (db, queue) = (&state.db, &state.queue);
                    if vendors::pulls::enqueue_notified(db, queue, user, slug, window).await? {
                        queued += 1;
                    }
                }
            }
            Notice::Data { user: vendor_user, collection, page } => {
                for user in schema::connections::users_of(&state.db, slug, &vendor_user).await? {
                    let (db, queue) = (&state.db, &state.queue);
                    vendors::pulls::enqueue_pushed(db, queue, user, slug, collection, &page)
                        .await?;
                    queued += 1;
                }
            }
            Notice::Deregistered(vendor_user) => {
                // The user removed the app at the vendor: the connection ends, and says why;
                // but only once the vendor refuses the token too, as a notice could be forged.
                let reason = schema::connections::RevokeReason::Deregistration;
                for user in schema::connections::users_of(&state.db, slug, &vendor_user).await? {
                    if token_refused(&state, vendor, &ends, user).await? {
                        let outbox = state.config.outbox;
                        schema::connections::revoke(&state.db, user, slug, reason, outbox).await?;
                    }
                }
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
    let request = vendor.authorize(state.vendor_http.get(url), ends, &token);
    let Ok(response) = request.timeout(std::time::Duration::from_secs(10)).send().await else {
        return Ok(false);
    };
    if matches!(response.status().as_u16(), 401 | 403) {
        return Ok(true);
    }
    // A vendor that answers every call with 200 says so in the body (Withings' status 401).
    let body: Value = response.json().await.unwrap_or_default();
    Ok(matches!(vendor.page_error(&body), Some(vendors::PageError::TokenRefused)))
}
