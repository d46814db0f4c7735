//! `POST /api/v1/oauth/{provider}/complete`: the client that started a connection with
//! `completion=client` finishes it. The callback keeps the vendor's tokens (sealed, ten
//! minutes, once) under a code it hands the browser back with; the code, given back here with
//! the credentials of the flow's user (or a service credential) and that user's id, makes the
//! connection. A link passed on to someone else connects no one: the code lands in their
//! browser, and only the flow's client can use it.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use schema::ids::UserId;
use vendors::connect::{Made, Refusal};

use super::pending;
use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiJson, SdkAuth};

/// How long a handed-back code works.
const HANDED_SECONDS: u64 = 10 * 60;

/// The vendor's grant, kept for the client under the code's hash; its tokens sealed.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Handed {
    user_id: UserId,
    provider: String,
    access: String,
    refresh: Option<String>,
    expires_at: Option<DateTime<Utc>>,
    scope: Option<String>,
    vendor_user: Option<String>,
}

fn sealing(user_id: UserId, provider: &str, which: &str) -> String {
    format!("oauth_handed:{user_id}:{provider}:{which}")
}

impl Handed {
    pub(super) fn new(
        state: &AppState,
        flow: &pending::Pending,
        slug: &str,
        tokens: &vendors::Tokens,
        vendor_user: Option<String>,
    ) -> Handed {
        let seal =
            |which: &str, token: &str| state.keys.seal(&sealing(flow.user_id, slug, which), token);
        Handed {
            user_id: flow.user_id,
            provider: slug.to_string(),
            access: seal("access", &tokens.access_token),
            refresh: tokens.refresh_token.as_deref().map(|t| seal("refresh", t)),
            expires_at: tokens.expires_at,
            scope: tokens.scope.clone(),
            vendor_user,
        }
    }
}

/// Keeps the grant; the code to hand back.
pub(super) async fn hand_back(state: &AppState, handed: &Handed) -> ApiResult<String> {
    let code = crate::security::secrets::random_hex(32);
    let ttl = std::time::Duration::from_secs(HANDED_SECONDS);
    state.guards.hand_over(&pending::digest(&code), handed, ttl).await?;
    Ok(code)
}

#[derive(Debug, Deserialize, ToSchema)]
pub(super) struct OAuthCompleteIn {
    /// The `completion` code the browser came back to `redirect_uri` with.
    pub(super) completion: String,
    /// The user the connection was started for.
    #[schema(value_type = uuid::Uuid)]
    pub(super) user_id: UserId,
}

#[derive(Debug, Serialize, ToSchema)]
pub(super) struct OAuthCompletedOut {
    pub(super) success: bool,
    pub(super) provider: String,
    #[schema(value_type = uuid::Uuid)]
    pub(super) user_id: UserId,
}

/// Finishes a connection started with `completion=client`: 200 once connected. 400 `Invalid or
/// expired completion code` (it works once, for ten minutes); 400 `This connection was started
/// for another user` when `user_id` is not the flow's (the code is spent); 403 for an SDK token
/// of another user; 409 when the vendor account is connected to another user; 502 when the
/// vendor refuses a call it needs.
#[utoipa::path(post, path = "/oauth/{provider}/complete", tag = "oauth",
    params(("provider" = String, Path, description = "Lowercase provider identifier")),
    request_body = OAuthCompleteIn,
    responses((status = 200, body = OAuthCompletedOut), (status = 400, body = ErrorBody),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 409, body = ErrorBody), (status = 422, body = ValidationBody),
              (status = 502, body = ErrorBody)),
    security(("api_key" = []), ("bearer" = [])))]
pub(super) async fn complete(
    auth: SdkAuth,
    State(state): State<AppState>,
    Path(provider): Path<String>,
    ApiJson(body): ApiJson<OAuthCompleteIn>,
) -> ApiResult<Json<OAuthCompletedOut>> {
    auth.ensure_user(&body.user_id.to_string())?;
    let (vendor, slug, ends) = super::usable(&state, &provider).await?;
    let invalid = || ApiError::bad_request("Invalid or expired completion code");
    let handed: Handed =
        state.guards.take_handed(&pending::digest(&body.completion)).await?.ok_or_else(invalid)?;
    if handed.provider != slug {
        return Err(invalid());
    }
    if handed.user_id != body.user_id {
        return Err(ApiError::bad_request("This connection was started for another user"));
    }
    let open = |which: &str, sealed: &str| {
        state
            .keys
            .open(&sealing(handed.user_id, slug, which), sealed)
            .map_err(|e| ApiError::Other(format!("opening a handed-back token: {e}")))
    };
    let tokens = vendors::Tokens {
        access_token: open("access", &handed.access)?,
        refresh_token: handed.refresh.as_deref().map(|t| open("refresh", t)).transpose()?,
        expires_at: handed.expires_at,
        scope: handed.scope.clone(),
        raw: serde_json::Value::Null,
    };
    let made = Made {
        vendor,
        ends: &ends,
        user_id: handed.user_id,
        tokens: &tokens,
        vendor_user: handed.vendor_user.as_deref(),
    };
    match super::connector(&state).finish(made).await? {
        Ok(()) => Ok(Json(OAuthCompletedOut {
            success: true,
            provider: slug.into(),
            user_id: handed.user_id,
        })),
        Err(refusal @ Refusal::Taken) => {
            Err(ApiError::client(StatusCode::CONFLICT, refusal.message(vendor)))
        }
        Err(refusal) => Err(ApiError::client(StatusCode::BAD_GATEWAY, refusal.message(vendor))),
    }
}
