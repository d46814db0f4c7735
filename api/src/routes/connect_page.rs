//! Connect links, the end user's side: what the connect page (`/connect/{token}`, in the portal
//! bundle) asks of the API with the link's token and no login. The first browser to open a link
//! is bound to it by a cookie (`wearhouse_connect`, HttpOnly, sent only to these routes);
//! another browser is told the link was used. Connecting goes through the browser-bound OAuth
//! flow ([`super::oauth::begin`]) and comes back to the page with the outcome. Tokens that match
//! no link are counted per client address before any work is done.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use schema::catalogue::providers::Provider;
use schema::connect_links::{ConnectLink, Opened};
use schema::connections::ConnectionStatus;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::ClientAddr;
use crate::routes::oauth::{Completion, Flow};
use crate::security::throttle::Attempt;
use crate::security::{cookies, secrets};

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show_link)).routes(routes!(start_connecting, disconnect))
}

/// The cookie that binds a link to its browser: random bytes, as hex.
const COOKIE: &str = "wearhouse_connect";
const COOKIE_BYTES: usize = 32;
/// How long a browser keeps it: the longest a link lives (renewed on each visit).
const COOKIE_SECONDS: u64 = super::connect_links::MAX_MINUTES as u64 * 60;
/// Connections started and ended from one link within [`ACTIONS_WINDOW_SECONDS`]: each costs
/// a vendor call or a pending flow (which may push out the user's others).
const ACTIONS_PER_LINK: i64 = 20;
const ACTIONS_WINDOW_SECONDS: u64 = 15 * 60;

/// Where connecting sends the browser.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ConnectingOut {
    /// The vendor's authorization page, for this browser only: the flow is bound to it (a
    /// cookie set with this answer), so the URL connects no one elsewhere.
    pub authorization_url: String,
}

/// What the page shows.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ConnectPageOut {
    /// The deployment's name (`DEPLOYMENT_NAME`).
    pub deployment: String,
    pub expires_at: DateTime<Utc>,
    /// Where the page's "Done" button goes; null: the page says the user may close it.
    pub redirect_uri: Option<String>,
    pub providers: Vec<VendorStateOut>,
}

/// One vendor on the page and the user's connection to it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct VendorStateOut {
    pub provider: String,
    pub name: String,
    /// Relative URL.
    pub icon_url: String,
    /// `connected`, `not_connected`, `revoked` (ended by the user or the vendor) or `expired`
    /// (the vendor stopped accepting its tokens: connect again).
    pub status: String,
    /// When data last came from the vendor.
    pub last_synced_at: Option<DateTime<Utc>>,
}

/// A browser's cookie as sent, when it has the shape this service gives out.
fn browser_cookie(headers: &HeaderMap) -> Option<String> {
    let value = super::oauth::cookie(headers, COOKIE)?;
    let shaped = value.len() == 2 * COOKIE_BYTES && value.bytes().all(|b| b.is_ascii_hexdigit());
    shaped.then(|| value.to_string())
}

/// A live link opened in this browser, and the browser's cookie (new, or renewed).
struct Visit {
    link: ConnectLink,
    cookie: String,
}

impl Visit {
    /// `response` with the browser's cookie set again: its lifetime starts anew.
    fn answer(&self, state: &AppState, response: impl IntoResponse) -> Response {
        let mut response = response.into_response();
        let cookie = cookies::Cookie {
            name: COOKIE,
            value: &self.cookie,
            path: "/api/v1/connect/",
            max_age: COOKIE_SECONDS,
            same_site: "Strict",
        };
        if let Some(value) = cookies::set_cookie(&state.config.public_url, &cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
        response
    }
}

/// Opens the link of `token` in the calling browser (binding it if it is the first), or the
/// page's answer for a link that does not work here.
async fn visit(
    state: &AppState,
    address: ClientAddr,
    headers: &HeaderMap,
    token: &str,
) -> ApiResult<Visit> {
    let attempt = Attempt { account: String::new(), address: address.0 };
    if let Some(wait) = state.connect_misses.blocked(&attempt).await {
        let detail = format!("Too many links that do not exist; try again in {wait} seconds");
        return Err(ApiError::too_many_requests(detail, wait));
    }
    let cookie = browser_cookie(headers).unwrap_or_else(|| secrets::random_hex(COOKIE_BYTES));
    let gone = |detail: &str| ApiError::client(StatusCode::GONE, detail);
    match schema::connect_links::open(&state.db, token, &cookie).await? {
        Opened::Live(link) => Ok(Visit { link, cookie }),
        Opened::Unknown => {
            state.connect_misses.failed(&attempt).await;
            Err(ApiError::not_found("This link is not valid. Ask whoever sent it for a new one."))
        }
        Opened::Expired => Err(gone("This link has expired. Ask whoever sent it for a new one.")),
        Opened::Revoked => Err(gone("This link was withdrawn. Ask whoever sent it for a new one.")),
        Opened::Used => Err(gone(
            "This link was opened in another browser, and works only there. Ask whoever sent \
             it for a new one.",
        )),
    }
}

/// The vendors a link offers now: configured and enabled, and named by the link if it names
/// any.
async fn offered(state: &AppState, link: &ConnectLink) -> ApiResult<Vec<&'static Provider>> {
    let settings = schema::provider_settings::all(&state.db).await?;
    let enabled = |slug: &str| {
        schema::provider_settings::enabled(schema::provider_settings::of(&settings, slug))
    };
    let named = |slug: &str| link.providers.as_ref().is_none_or(|l| l.iter().any(|s| s == slug));
    Ok(vendors::VENDORS
        .iter()
        .map(|v| v.provider())
        .filter(|p| state.config.vendors.is_configured(p.slug) && enabled(p.slug) && named(p.slug))
        .collect())
}

/// [`visit`] for an action on one vendor: the vendor of the path segment, when the link
/// offers it.
async fn visit_for(
    state: &AppState,
    address: ClientAddr,
    headers: &HeaderMap,
    (token, raw): &(String, String),
) -> ApiResult<(Visit, &'static Provider)> {
    let visit = visit(state, address, headers, token).await?;
    counted_action(state, &visit.link).await?;
    let chosen = offered(state, &visit.link)
        .await?
        .into_iter()
        .find(|p| p.slug == raw)
        .ok_or_else(|| ApiError::not_found(format!("This link does not offer '{raw}'")))?;
    Ok((visit, chosen))
}

/// Counts an action on a link's vendors; past [`ACTIONS_PER_LINK`] in the window, 429.
async fn counted_action(state: &AppState, link: &ConnectLink) -> ApiResult<()> {
    let window = std::time::Duration::from_secs(ACTIONS_WINDOW_SECONDS);
    let (count, ttl) = state.guards.count_action(link.id, window).await?;
    if count > ACTIONS_PER_LINK {
        let wait = ttl.max(1) as u64;
        let detail =
            format!("Too many connections started from this link; try again in {wait} seconds");
        return Err(ApiError::too_many_requests(detail, wait));
    }
    Ok(())
}

/// What the connect page shows: the deployment, and each vendor the link offers with the
/// user's connection to it. The first browser to ask is bound to the link (a cookie); 404 for
/// a link that does not exist (any more: its user was deleted), 410 for one expired, revoked or
/// opened in another browser, each with a message for the user; 429 after too many links that
/// do not exist from one address.
#[utoipa::path(get, path = "/connect/{token}", tag = "connect-links",
    params(("token" = String, Path, description = "The link's token: the last part of its URL")),
    responses(
        (status = 200, body = ConnectPageOut), (status = 404, body = ErrorBody),
        (status = 410, body = ErrorBody), (status = 429, body = ErrorBody),
    ))]
async fn show_link(
    address: ClientAddr,
    State(state): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let visit = visit(&state, address, &headers, &token).await?;
    let link = &visit.link;
    let connections = schema::connections::list_for_user(&state.db, link.user_id).await?;
    let pulls = schema::vendor_pulls::health(&state.db, link.user_id).await?;
    let providers = offered(&state, link)
        .await?
        .into_iter()
        .map(|p| {
            let connection = connections.iter().find(|c| c.provider == p.slug);
            let pulled =
                pulls.iter().find(|(s, _)| s == p.slug).and_then(|(_, h)| h.last_success_at);
            VendorStateOut {
                provider: p.slug.into(),
                name: p.name.into(),
                icon_url: p.icon_url(),
                status: match connection.map(|c| c.status) {
                    None => "not_connected",
                    Some(ConnectionStatus::Active) => "connected",
                    Some(ConnectionStatus::Revoked) => "revoked",
                    Some(ConnectionStatus::Expired) => "expired",
                }
                .into(),
                last_synced_at: connection.and_then(|c| c.last_synced_at).max(pulled),
            }
        })
        .collect();
    let out = ConnectPageOut {
        deployment: state.config.deployment_name.clone(),
        expires_at: link.expires_at,
        redirect_uri: link.redirect_uri.clone(),
        providers,
    };
    Ok(visit.answer(&state, Json(out)))
}

/// Starts connecting the link's user to a vendor it offers: the URL to send this browser to.
/// The vendor sends the browser back to the connect page, which shows the outcome.
#[utoipa::path(post, path = "/connect/{token}/{provider}", tag = "connect-links",
    params(("token" = String, Path, description = "The link's token"),
           ("provider" = String, Path, description = "Lowercase provider identifier")),
    responses(
        (status = 200, body = ConnectingOut), (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 410, body = ErrorBody),
        (status = 429, body = ErrorBody),
    ))]
async fn start_connecting(
    address: ClientAddr,
    State(state): State<AppState>,
    Path(path): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let (visit, chosen) = visit_for(&state, address, &headers, &path).await?;
    let (vendor, slug, ends) = super::oauth::usable(&state, chosen.slug).await?;
    let flow = Flow {
        vendor,
        slug,
        ends: &ends,
        user_id: visit.link.user_id,
        redirect_uri: None,
        completion: Completion::Auto,
        page: Some(super::connect_links::page_url(&state, &path.0)),
    };
    let (authorization_url, binding) = super::oauth::begin_bound(&state, flow).await?;
    let mut response = visit.answer(&state, Json(ConnectingOut { authorization_url }));
    if let Some(binding) = binding {
        response.headers_mut().append(header::SET_COOKIE, binding);
    }
    response.extensions_mut().insert(crate::audit::AuditNote::user(visit.link.user_id));
    Ok(response)
}

/// Disconnects the link's user from a vendor it offers, at the vendor too
/// (`connection.revoked`, reason `user_disconnected`). 204, also when disconnected already; 404
/// when never connected.
#[utoipa::path(delete, path = "/connect/{token}/{provider}", tag = "connect-links",
    params(("token" = String, Path, description = "The link's token"),
           ("provider" = String, Path, description = "Lowercase provider identifier")),
    responses(
        (status = 204), (status = 404, body = ErrorBody),
        (status = 410, body = ErrorBody), (status = 429, body = ErrorBody),
    ))]
async fn disconnect(
    address: ClientAddr,
    State(state): State<AppState>,
    Path(path): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let (visit, chosen) = visit_for(&state, address, &headers, &path).await?;
    let user = visit.link.user_id;
    if super::connections::disconnect_user(&state, user, chosen.slug).await? {
        let mut response = visit.answer(&state, StatusCode::NO_CONTENT);
        response.extensions_mut().insert(crate::audit::AuditNote::user(user));
        Ok(response)
    } else {
        Err(ApiError::not_found(format!("Not connected to {}", chosen.name)))
    }
}
