//! `GET/POST /api/v1/providers/{provider}/webhooks`: notifications from cloud vendors. `GET`
//! (and `HEAD`) answers the vendor's verification handshake; `POST` checks the vendor's
//! signature over the raw body (401 and nothing stored when it does not hold), then stores what
//! the notification asks for as durable pulls before answering 2xx: pulls the worker fetches
//! after, or the data itself where the vendor pushes it, kept as the pull's page.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::Query;
use vendors::{Handshake, Notice};

pub fn router() -> OpenApiRouter<AppState> {
    // The largest notification any vendor sends (Garmin's pushes); each vendor's own bound is
    // checked in `notify`.
    let largest = vendors::VENDORS.iter().map(|v| v.info().notification_bytes).max();
    let limit = DefaultBodyLimit::max(largest.unwrap_or(vendors::SMALL_NOTIFICATIONS));
    OpenApiRouter::new().routes(routes!(verify, notify).layer(limit))
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
    Query(params): Query,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<NotifiedOut>> {
    let (vendor, ends) = vendor(&state, &provider)?;
    if body.len() > vendor.info().notification_bytes {
        return Err(ApiError::client(StatusCode::PAYLOAD_TOO_LARGE, "Notification too large"));
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let token = params.string("token");
    if !vendors::url_token_holds(vendor, &ends, token.as_deref())
        || !vendor.webhook_verified(&ends, &header, &body)
    {
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
                // The user removed the app at the vendor: checked by a durable job, which ends
                // the connection only once the vendor refuses a fresh token too (some of these
                // notices are unsigned, and the check must not hold up the vendor's request).
                for user in schema::connections::users_of(&state.db, slug, &vendor_user).await? {
                    let now = chrono::Utc::now();
                    let kind = schema::vendor_pulls::PullKind::Deregistration;
                    vendors::pulls::enqueue(&state.db, &state.queue, user, slug, (now, now), kind)
                        .await?;
                    queued += 1;
                }
            }
        }
    }
    Ok(Json(NotifiedOut { queued }))
}
