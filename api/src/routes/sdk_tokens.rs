//! SDK user tokens: an integrator's backend (developer token or API key) issues a user-scoped
//! bearer token plus a refresh token for the mobile SDK; the SDK refreshes (rotating the
//! refresh token) and may revoke.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use schema::ids::UserId;
use schema::refresh_tokens::Rotation;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, ApiJson};
use crate::routes::existing_user;
use crate::security::secrets;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(issue_token))
        .routes(routes!(refresh_token))
        .routes(routes!(revoke_token))
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TokenOut {
    /// Send as `Authorization: Bearer <access_token>`.
    pub access_token: String,
    /// Always `bearer`.
    pub token_type: &'static str,
    /// Exchange at `POST /api/v1/token/refresh` for a new pair; works once.
    pub refresh_token: String,
    /// Seconds until the access token expires.
    pub expires_in: i64,
    #[schema(value_type = uuid::Uuid)]
    pub user_id: UserId,
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct RefreshIn {
    pub refresh_token: String,
}

async fn new_pair(state: &AppState, user_id: UserId, refresh_token: String) -> ApiResult<TokenOut> {
    let access_token = state
        .tokens
        .issue_sdk(user_id)
        .map_err(|e| ApiError::Other(format!("signing a token: {e}")))?;
    Ok(TokenOut {
        access_token,
        token_type: "bearer",
        refresh_token,
        expires_in: state.tokens.lifetime_seconds(),
        user_id,
    })
}

/// Issues an SDK token pair for one user.
#[utoipa::path(post, path = "/users/{user_id}/token", tag = "sdk-tokens",
    params(("user_id" = String, Path, description = "The user's UUID")),
    responses(
        (status = 200, body = TokenOut), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn issue_token(
    ApiAuth(principal): ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
) -> ApiResult<Json<TokenOut>> {
    let user_id = existing_user(&state, &user_id).await?;
    Ok(Json(issue_pair(&state, user_id, &principal.describe()).await?))
}

/// A new token pair for `user_id`, its refresh token the first of a family, noted as issued
/// by `issued_by` (a developer, an API key, an invitation code).
pub(crate) async fn issue_pair(
    state: &AppState,
    user_id: UserId,
    issued_by: &str,
) -> ApiResult<TokenOut> {
    let refresh = secrets::new_refresh_token();
    let lifetime = state.config.refresh_token_lifetime;
    schema::refresh_tokens::insert(&state.db, &refresh, user_id, issued_by, lifetime).await?;
    new_pair(state, user_id, refresh).await
}

/// Exchanges a refresh token for a new access token and a new refresh token. The presented
/// refresh token stops working; presented again, it also ends the token it was exchanged for
/// (someone holds a copy).
#[utoipa::path(post, path = "/token/refresh", tag = "sdk-tokens", request_body = RefreshIn,
    responses(
        (status = 200, body = TokenOut), (status = 401, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ))]
async fn refresh_token(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<RefreshIn>,
) -> ApiResult<Json<TokenOut>> {
    let next = secrets::new_refresh_token();
    let lifetime = state.config.refresh_token_lifetime;
    let presented = body.refresh_token.trim();
    match schema::refresh_tokens::rotate(&state.db, presented, &next, lifetime).await? {
        Rotation::Rotated(user_id) => Ok(Json(new_pair(&state, user_id, next).await?)),
        Rotation::FamilyRevoked(user_id) => {
            tracing::warn!(%user_id, "a rotated-out refresh token was reused: its family is revoked");
            Err(ApiError::bearer_unauthorized("Invalid or revoked refresh token"))
        }
        Rotation::Refused => Err(ApiError::bearer_unauthorized("Invalid or revoked refresh token")),
    }
}

/// Revokes a refresh token (sign-out). Access tokens already issued run until they expire.
#[utoipa::path(post, path = "/token/revoke", tag = "sdk-tokens", request_body = RefreshIn,
    responses(
        (status = 204), (status = 404, body = ErrorBody), (status = 422, body = ValidationBody),
    ))]
async fn revoke_token(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<RefreshIn>,
) -> ApiResult<StatusCode> {
    if schema::refresh_tokens::revoke(&state.db, body.refresh_token.trim()).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found("Refresh token not found"))
    }
}
