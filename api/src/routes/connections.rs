//! `/api/v1/users/{user_id}/connections`: a user's links to providers.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use schema::connections::Connection;
use schema::ids::UserId;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::ApiAuth;
use crate::routes::existing_user;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_connections)).routes(routes!(disconnect))
}

/// A user's connection to a provider, with the provider's capability flags.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ConnectionOut {
    pub id: Uuid,
    #[schema(value_type = uuid::Uuid)]
    pub user_id: UserId,
    pub provider: String,
    /// `active`, `revoked` or `expired`.
    pub status: String,
    pub provider_user_id: Option<String>,
    pub provider_username: Option<String>,
    pub scope: Option<String>,
    pub last_synced_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub icon_url: String,
    pub max_historical_days: Option<i32>,
    pub rest_pull: bool,
    pub webhook_stream: bool,
    pub webhook_ping: bool,
    pub webhook_callback: bool,
    /// `pull` or `webhook`; null for push-only providers.
    pub live_sync_mode: Option<String>,
    pub linked_user_ids: Vec<Uuid>,
    /// Cloud vendors: when a pull last succeeded, the last error of a pull that failed or waits
    /// to retry, and when the next attempt is due: a stalled connection says so.
    pub last_pull_success_at: Option<DateTime<Utc>>,
    pub last_pull_error: Option<String>,
    pub next_pull_at: Option<DateTime<Utc>>,
}

impl From<Connection> for ConnectionOut {
    fn from(c: Connection) -> ConnectionOut {
        let provider = vendors::provider(&c.provider);
        let caps = provider.map(|p| p.capabilities).unwrap_or_default();
        ConnectionOut {
            icon_url: format!("/static/provider-icons/{}.svg", c.provider),
            live_sync_mode: provider.and_then(|p| p.live_sync_mode).map(|m| m.as_str().to_string()),
            max_historical_days: caps.max_historical_days,
            rest_pull: caps.rest_pull,
            webhook_stream: caps.webhook_stream,
            webhook_ping: caps.webhook_ping,
            webhook_callback: caps.webhook_callback,
            id: c.id,
            user_id: c.user_id,
            provider: c.provider,
            status: c.status.as_str().to_string(),
            provider_user_id: c.provider_user_id,
            provider_username: c.provider_username,
            scope: c.scope,
            last_synced_at: c.last_synced_at,
            created_at: c.created_at,
            updated_at: c.updated_at,
            linked_user_ids: Vec::new(),
            last_pull_success_at: None,
            last_pull_error: None,
            next_pull_at: None,
        }
    }
}

#[utoipa::path(get, path = "/users/{user_id}/connections", tag = "users",
    params(("user_id" = String, Path, description = "The user's UUID")),
    responses(
        (status = 200, body = Vec<ConnectionOut>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn list_connections(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
) -> ApiResult<Json<Vec<ConnectionOut>>> {
    let id = existing_user(&state, &user_id).await?;
    Ok(Json(connections_of(&state.db, id).await?))
}

/// A user's connections, each with how its pulls fare.
pub(crate) async fn connections_of(
    db: &schema::Db,
    id: UserId,
) -> Result<Vec<ConnectionOut>, schema::Error> {
    let list = schema::connections::list_for_user(db, id).await?;
    let health = schema::vendor_pulls::health(db, id).await?;
    Ok(list
        .into_iter()
        .map(|c| {
            let pulls = health.iter().find(|(p, _)| *p == c.provider).map(|(_, h)| h.clone());
            let mut out = ConnectionOut::from(c);
            if let Some(h) = pulls {
                out.last_pull_success_at = h.last_success_at;
                out.last_pull_error = h.last_error;
                out.next_pull_at = h.next_attempt_at;
            }
            out
        })
        .collect())
}

/// Disconnects a user from a provider: the connection is marked `revoked`, its tokens are
/// forgotten, and `connection.revoked` (reason `user_disconnected`) is emitted. 204, also when
/// it was already revoked; 404 when there is no connection.
#[utoipa::path(delete, path = "/users/{user_id}/connections/{provider}", tag = "users",
    params(("user_id" = String, Path, description = "The user's UUID"),
           ("provider" = String, Path, description = "Lowercase provider identifier")),
    responses(
        (status = 204), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn disconnect(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path((user_id, provider)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let id = existing_user(&state, &user_id).await?;
    let provider = vendors::provider(&provider)
        .ok_or_else(|| ApiError::bad_request(format!("Unknown provider: {provider}")))?;
    if disconnect_user(&state, id, provider.slug).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("Connection with ID: {id} not found.")))
    }
}

/// Disconnects user `id` from provider `slug`, at the vendor too: whether there was a
/// connection (revoked now, or already).
pub(crate) async fn disconnect_user(state: &AppState, id: UserId, slug: &str) -> ApiResult<bool> {
    // At the vendor first, while the token is still known here (renewed if it has expired,
    // or the vendor would refuse the revocation and keep the app authorized).
    if let (Some(vendor), Some(ends)) =
        (vendors::by_slug(slug), state.config.vendors.endpoints(slug))
    {
        let redirect = vendors::callback_url(&state.config.public_url, slug);
        let client = vendors::tokens::Client {
            db: &state.db,
            keys: &state.keys,
            http: &state.vendor_http,
            redirect: &redirect,
            events: state.config.outbox,
        };
        if let Ok(access) = vendors::tokens::access_token(&client, vendor, ends, id).await {
            let vendor_user = schema::connections::list_for_user(&state.db, id)
                .await?
                .into_iter()
                .find(|c| c.provider == slug)
                .and_then(|c| c.provider_user_id);
            let hooks = vendors::webhook_url(&state.config.public_url, vendor, ends);
            let connected = vendors::Connected {
                ends,
                access_token: &access,
                vendor_user: vendor_user.as_deref(),
                user_id: id,
                webhook_url: &hooks,
            };
            vendor.revoke_at_vendor(&state.vendor_http, connected).await;
        }
    }
    let reason = schema::connections::RevokeReason::UserDisconnected;
    let revoked =
        schema::connections::revoke(&state.db, id, slug, reason, state.config.outbox).await?;
    Ok(revoked.is_some())
}
