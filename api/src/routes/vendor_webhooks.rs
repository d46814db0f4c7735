//! `GET/POST /api/v1/providers/{provider}/webhooks`: notifications from cloud vendors. `GET`
//! (and `HEAD`) answers the vendor's verification handshake; `POST` proves the notification is
//! the vendor's ([`vendors::Proof`]: its signature over the raw body, or our token in the URL;
//! 401 and nothing stored when it does not hold), then stores what it asks for as durable pulls
//! before answering 2xx: pulls the worker fetches after, or the data itself where the vendor
//! pushes it, kept as the pull's page.
//!
//! Nothing anonymous costs work before it is known to be worth it: the vendor is known and
//! configured and the URL token checked before anything else (a database read, a byte of the
//! body); bodies are read up to the vendor's own bound (413 past it, at once when
//! `Content-Length` says so), within a deadline and a budget of bytes per vendor, so a flood
//! at one vendor's receiver neither fills memory nor holds up another's; a signed body seen
//! lately is not acted on at once again. The answer is the same whatever the notification
//! names, so it tells no one whether a vendor account is connected here.

use std::time::Duration;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde::Serialize;
use sha2::Digest;
use utoipa::ToSchema;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::Query;
use vendors::{Handshake, Notice, Proof};

/// How long a notification's body may take to arrive.
const READ_DEADLINE: Duration = Duration::from_secs(10);
/// How long a notification waits for room in its vendor's budget before it is answered 503.
const BUDGET_WAIT: Duration = Duration::from_secs(5);

/// Bytes of notification bodies being read at once, per vendor (in KiB): sixteen of the
/// vendor's largest notifications, between 1 MiB and 64 MiB (Garmin's pushes). A body of
/// unknown length holds its vendor's bound until it is read.
pub(crate) struct Budgets(std::collections::BTreeMap<&'static str, tokio::sync::Semaphore>);

impl Budgets {
    pub(crate) fn new() -> Budgets {
        let kib = |bytes: usize| (16 * bytes / 1024).clamp(1024, 64 * 1024);
        Budgets(
            vendors::VENDORS
                .iter()
                .map(|v| {
                    (
                        v.provider().slug,
                        tokio::sync::Semaphore::new(kib(v.info().notification_bytes)),
                    )
                })
                .collect(),
        )
    }
}

impl Default for Budgets {
    fn default() -> Budgets {
        Budgets::new()
    }
}

pub(crate) fn router() -> OpenApiRouter<AppState> {
    // The body is read by `notify` itself, after the vendor is known: no body limit layer.
    OpenApiRouter::new()
        .routes(routes!(verify, notify).layer(axum::extract::DefaultBodyLimit::disable()))
}

/// The vendor behind a path segment, able to send notifications here: 400 for an unknown
/// name, a vendor without notifications, or one this deployment has not configured.
fn vendor(
    state: &AppState,
    raw: &str,
) -> ApiResult<(&'static dyn vendors::Vendor, vendors::Endpoints)> {
    let vendor = vendors::by_slug(raw)
        .ok_or_else(|| ApiError::bad_request(format!("Unknown provider: {raw}")))?;
    if vendor.info().proof == Proof::None {
        return Err(ApiError::bad_request(format!("Provider '{raw}' does not send webhooks")));
    }
    let ends =
        state.config.vendors.endpoints(vendor.provider().slug).ok_or_else(|| not_enabled(raw))?;
    Ok((vendor, ends.clone()))
}

fn not_enabled(raw: &str) -> ApiError {
    ApiError::bad_request(format!("Provider '{raw}' is not enabled"))
}

/// 400 when a developer disabled the vendor: its notifications are not taken.
async fn ensure_enabled(state: &AppState, slug: &'static str) -> ApiResult<()> {
    match schema::provider_settings::is_enabled(&state.db, slug).await? {
        true => Ok(()),
        false => Err(not_enabled(slug)),
    }
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
    ensure_enabled(&state, vendor.provider().slug).await?;
    let query = |name: &str| params.string(name);
    match vendor.webhook_challenge(&ends, &query) {
        Handshake::Json(answer) => Ok(Json(answer).into_response()),
        Handshake::Status(code) => {
            Ok(StatusCode::from_u16(code).unwrap_or(StatusCode::OK).into_response())
        }
        Handshake::Refused => Err(ApiError::unauthorized("Webhook verification failed")),
    }
}

/// What every accepted notification is answered, whatever it named.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct NotifiedOut {
    /// Always `true`: the notification was taken (what it asked for is queued, if anything).
    pub received: bool,
}

fn too_large() -> ApiError {
    ApiError::client(StatusCode::PAYLOAD_TOO_LARGE, "Notification too large")
}

/// A notification's body, read within the vendor's bound, its budget and the deadline.
async fn read_body(
    state: &AppState,
    slug: &str,
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> ApiResult<Bytes> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    // Room for what the body may be: its declared length, else the vendor's bound.
    let bytes = declared.map_or(limit, |n| n as usize);
    let kib = u32::try_from(bytes.div_ceil(1024).max(1)).unwrap_or(u32::MAX);
    let busy = || ApiError::Later {
        status: StatusCode::SERVICE_UNAVAILABLE,
        detail: "Too many notifications at once; send it again".into(),
        retry_after: 5,
    };
    let budget = state.notification_budgets.0.get(slug).ok_or_else(busy)?;
    let _room = tokio::time::timeout(BUDGET_WAIT, budget.acquire_many(kib))
        .await
        .map_err(|_| busy())?
        .map_err(|_| busy())?;
    let read = http_body_util::Limited::new(body, bytes).collect();
    match tokio::time::timeout(READ_DEADLINE, read).await {
        Err(_) => Err(ApiError::client(
            StatusCode::REQUEST_TIMEOUT,
            "The notification was not sent in time",
        )),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(e)) => {
            Err(ApiError::bad_request(format!("The notification could not be read: {e}")))
        }
    }
}

/// Where a signed body without a timestamp is remembered.
fn replay_digest(body: &[u8]) -> String {
    hex::encode(sha2::Sha256::digest(body))
}

/// A vendor's notification: proved, then stored as pulls.
#[utoipa::path(post, path = "/providers/{provider}/webhooks", tag = "providers",
    params(("provider" = String, Path, description = "Lowercase provider identifier")),
    request_body(content = Object, description = "The vendor's notification, signed as it documents"),
    responses((status = 200, body = NotifiedOut), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 413, body = ErrorBody),
              (status = 503, body = ErrorBody, description = "Too many notifications at once; see `Retry-After`")))]
async fn notify(
    State(state): State<AppState>,
    Path(provider): Path<String>,
    Query(params): Query,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Json<NotifiedOut>> {
    let (vendor, ends) = vendor(&state, &provider)?;
    let refused = || ApiError::unauthorized("Invalid webhook signature");
    if !vendors::url_token_holds(vendor, &ends, params.string("token").as_deref()) {
        return Err(refused());
    }
    let slug = vendor.provider().slug;
    ensure_enabled(&state, slug).await?;
    let body = read_body(&state, slug, &headers, body, vendor.info().notification_bytes).await?;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    if !vendor.webhook_verified(&ends, &header, &body) {
        return Err(refused());
    }
    let value = vendor
        .webhook_body(&body)
        .ok_or_else(|| ApiError::bad_request("The notification does not read"))?;
    let received = Json(NotifiedOut { received: true });
    let notices = vendor.webhook_notices(&value);
    if notices.is_empty() {
        // A ping, or nothing we act on: nothing is written, not even its hash.
        return Ok(received);
    }
    // A signature without a timestamp verifies for ever: a body seen within the replay window
    // is acted on later, not now (see `act`). Forgotten when acting on it fails, so that the
    // vendor's retry is taken.
    let replay = (vendor.info().proof == Proof::Signature).then(|| replay_digest(&body));
    let mut seen = false;
    if let Some(digest) = &replay {
        let window = std::time::Duration::from_secs(vendors::REPLAY_WINDOW_SECONDS);
        seen = !state.guards.first_sight(slug, digest, window).await?;
    }
    // Run to its end even if the vendor hangs up: what is half done is finished, or the replay
    // mark taken back.
    let task_state = state.clone();
    let acted = tokio::spawn(async move {
        let acted = act(&task_state, slug, notices, seen).await;
        if let (Err(_), Some(digest), false) = (&acted, &replay, seen) {
            let _ = task_state.guards.forget_sight(slug, digest).await;
        }
        acted
    });
    match acted.await {
        Ok(result) => result.map(|()| received),
        Err(e) => Err(ApiError::Other(format!("storing a notification: {e}"))),
    }
}

/// Stores what a notification's notices ask for. A vendor user no connection names (never
/// connected, or disconnected since) gives nothing to do, and the vendor is told it arrived,
/// or it would send it again. A body `seen` within the replay window (a vendor's repeat of the
/// same bytes, or a replay) adds no work now: its pulls merge into the one queued, or wait for
/// the window to end; data it pushes was taken the first time.
async fn act(state: &AppState, slug: &str, notices: Vec<Notice>, seen: bool) -> ApiResult<()> {
    let (db, queue) = (&state.db, &state.queue);
    let delay = seen.then(|| Duration::from_secs(vendors::REPLAY_WINDOW_SECONDS));
    for notice in notices {
        match notice {
            Notice::Pull(vendor_user, window) => {
                for user in schema::connections::users_of(db, slug, &vendor_user).await? {
                    vendors::pulls::enqueue_notified(db, queue, (user, slug), window, delay)
                        .await?;
                }
            }
            Notice::Data { .. } if seen => {}
            Notice::Data { user: vendor_user, collection, page } => {
                for user in schema::connections::users_of(db, slug, &vendor_user).await? {
                    vendors::pulls::enqueue_pushed(db, queue, user, slug, collection, &page)
                        .await?;
                }
            }
            Notice::Deregistered(vendor_user) => {
                // The user removed the app at the vendor: checked by a durable job, which ends
                // the connection only once the vendor refuses a fresh token too; one check
                // queued at a time.
                for user in schema::connections::users_of(db, slug, &vendor_user).await? {
                    vendors::pulls::enqueue_deregistration(db, queue, user, slug).await?;
                }
            }
        }
    }
    Ok(())
}
