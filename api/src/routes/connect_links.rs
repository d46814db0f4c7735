//! Connect links, the integrator's side: `POST /users/{user_id}/connect-links` makes a
//! short-lived URL of a page this service serves, where the user connects their cloud wearables
//! themselves ([`super::connect_page`]); links are listed and revoked beside it.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use schema::ids::UserId;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, ApiJson, Query, path_uuid};
use crate::routes::existing_user;
use crate::security::secrets;
use crate::validate::{Checks, body_loc};

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(create_link, list_links)).routes(routes!(revoke_link))
}

/// A link's lifetime when the request names none, and its bounds, in minutes.
const DEFAULT_MINUTES: i64 = 30;
const MIN_MINUTES: i64 = 5;
pub(crate) const MAX_MINUTES: i64 = 7 * 24 * 60;
/// Vendors a link may name.
const MAX_PROVIDERS: usize = 32;

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(default)]
pub(crate) struct ConnectLinkIn {
    /// The vendors the page offers (lowercase identifiers of enabled cloud vendors); every
    /// enabled cloud vendor when left out.
    pub providers: Option<Vec<String>>,
    /// Where the page's "Done" button takes the user: under `PUBLIC_URL` or an entry of
    /// `OAUTH_REDIRECT_ALLOWLIST`, as `authorize`'s.
    pub redirect_uri: Option<String>,
    /// How long the link works, in minutes: 5 to 10,080 (a week); 30 when left out.
    pub expires_in_minutes: Option<i64>,
}

/// A new link. `url` is shown here only.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "0192a4c1-7b2e-7d40-8a11-3c5e2f1d0a77",
    "url": "https://health.example.com/connect/4f1c9e0b2a7d5c3e8f6a1b0d9c2e7f4a5b8c1d3e6f9a0b2c",
    "user_id": "0191f3c2-7a4e-7c51-9a43-2b6c1d0e8f10", "providers": ["oura", "withings"],
    "redirect_uri": null, "created_at": "2026-03-14T18:46:45Z",
    "expires_at": "2026-03-14T19:16:45Z", "status": "active"}))]
pub(crate) struct ConnectLinkCreated {
    pub id: Uuid,
    /// Send this to the user: it works in the first browser that opens it, until `expires_at`.
    pub url: String,
    #[serde(flatten)]
    pub link: ConnectLinkOut,
}

/// A link as listed (its URL is not kept).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ConnectLinkOut {
    #[schema(value_type = uuid::Uuid)]
    pub user_id: UserId,
    /// The vendors offered; null: every enabled cloud vendor.
    pub providers: Option<Vec<String>>,
    pub redirect_uri: Option<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// When a browser first opened it (the link is that browser's from then on).
    pub opened_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// `active`, `expired` or `revoked`.
    pub status: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ConnectLinkListed {
    pub id: Uuid,
    #[serde(flatten)]
    pub link: ConnectLinkOut,
}

impl From<&schema::connect_links::ConnectLink> for ConnectLinkOut {
    fn from(l: &schema::connect_links::ConnectLink) -> ConnectLinkOut {
        let status = if l.revoked_at.is_some() {
            "revoked"
        } else if l.expires_at <= Utc::now() {
            "expired"
        } else {
            "active"
        };
        ConnectLinkOut {
            user_id: l.user_id,
            providers: l.providers.clone(),
            redirect_uri: l.redirect_uri.clone(),
            created_at: l.created_at,
            expires_at: l.expires_at,
            opened_at: l.opened_at,
            revoked_at: l.revoked_at,
            status: status.into(),
        }
    }
}

/// The page's URL for a link's token, under `PUBLIC_URL`.
pub(crate) fn page_url(state: &AppState, token: &str) -> String {
    format!("{}/connect/{token}", state.config.public_url.trim_end_matches('/'))
}

/// Makes a connect link for a user: a page where they connect their cloud wearables without
/// logging in. It works in the first browser that opens it (another browser is told it was
/// used), until it expires or is revoked.
#[utoipa::path(post, path = "/users/{user_id}/connect-links", tag = "connect-links",
    params(("user_id" = String, Path, description = "The user's UUID")),
    request_body = ConnectLinkIn,
    responses(
        (status = 201, body = ConnectLinkCreated), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn create_link(
    ApiAuth(principal): ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    ApiJson(body): ApiJson<ConnectLinkIn>,
) -> ApiResult<(StatusCode, Json<ConnectLinkCreated>)> {
    let minutes = body.expires_in_minutes.unwrap_or(DEFAULT_MINUTES);
    let mut checks = Checks::default();
    checks.range(body_loc("expires_in_minutes"), minutes, MIN_MINUTES, MAX_MINUTES);
    if let Some(list) = &body.providers {
        checks.range(body_loc("providers"), list.len() as i64, 1, MAX_PROVIDERS as i64);
    }
    checks.finish()?;
    let user_id = existing_user(&state, &user_id).await?;
    let providers = match body.providers {
        Some(list) => Some(offered(&state, list).await?),
        None => None,
    };
    if let Some(uri) = &body.redirect_uri
        && !super::oauth::allowed_redirect(&state, uri)
    {
        return Err(ApiError::bad_request(
            "redirect_uri is neither under PUBLIC_URL nor in OAUTH_REDIRECT_ALLOWLIST",
        ));
    }
    let token = secrets::new_connect_token();
    let new = schema::connect_links::NewLink {
        token: &token,
        user_id,
        providers,
        redirect_uri: body.redirect_uri,
        created_by: &principal.describe(),
        lifetime: chrono::Duration::minutes(minutes),
    };
    let made = schema::connect_links::create(&state.db, &new).await?;
    let out =
        ConnectLinkCreated { id: made.id, url: page_url(&state, &token), link: (&made).into() };
    Ok((StatusCode::CREATED, Json(out)))
}

/// The vendors a link names, each usable here (known, configured, enabled), without repeats.
async fn offered(state: &AppState, list: Vec<String>) -> ApiResult<Vec<String>> {
    let mut slugs: Vec<String> = Vec::with_capacity(list.len());
    for raw in list {
        let (_, slug, _) = super::oauth::usable(state, &raw).await?;
        if !slugs.iter().any(|s| s == slug) {
            slugs.push(slug.to_string());
        }
    }
    Ok(slugs)
}

/// A user's connect links, newest first (at most `limit`, default 50).
#[utoipa::path(get, path = "/users/{user_id}/connect-links", tag = "connect-links",
    params(("user_id" = String, Path, description = "The user's UUID"),
           ("limit" = Option<i64>, Query, description = "At most this many (1 to 200, default 50)")),
    responses(
        (status = 200, body = Vec<ConnectLinkListed>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn list_links(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    Query(mut params): Query,
) -> ApiResult<Json<Vec<ConnectLinkListed>>> {
    let limit = params.int("limit", 50, 1, 200);
    params.finish()?;
    let user_id = existing_user(&state, &user_id).await?;
    let links = schema::connect_links::list(&state.db, user_id, limit).await?;
    Ok(Json(links.iter().map(|l| ConnectLinkListed { id: l.id, link: l.into() }).collect()))
}

/// Revokes a connect link: its page says so from now on. 204; 404 when the user has no such
/// link or it was revoked already.
#[utoipa::path(delete, path = "/users/{user_id}/connect-links/{link_id}", tag = "connect-links",
    params(("user_id" = String, Path, description = "The user's UUID"),
           ("link_id" = String, Path, description = "The link's id")),
    responses(
        (status = 204), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn revoke_link(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path((user_id, link_id)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let user_id = existing_user(&state, &user_id).await?;
    let link_id = path_uuid(&link_id)?;
    if schema::connect_links::revoke(&state.db, user_id, link_id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("Connect link with ID: {link_id} not found.")))
    }
}
