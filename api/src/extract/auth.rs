//! Who is calling, as extractor types: a handler's signature shows what it requires.
//!
//! - `ApiAuth`: the integration API. A developer's bearer token, or an API key in
//!   `X-Service-API-Key`.
//! - `DeveloperAuth`: operations reserved to a logged-in developer (deleting users, managing
//!   keys and webhooks). API keys are refused.
//! - `SdkAuth`: the mobile SDK. An end user's SDK token (checked against the path's user by the
//!   handler), a developer token, or an API key.
//!
//! The mobile SDKs send their API key in `X-Open-Wearables-API-Key` and old iOS versions send
//! the bearer token without the `Bearer ` scheme; both are accepted so that they work unchanged.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use uuid::Uuid;

use crate::AppState;
use crate::access::{self, Grant};
use crate::audit::{Actor, record_actor};
use crate::error::{ApiError, ApiResult};
use crate::security::tokens::{Scope, Verified};
use schema::audit::ActorKind;

pub(super) const API_KEY_HEADER: &str = "x-service-api-key";
/// The header the mobile SDKs of the reference system send.
const SDK_API_KEY_HEADER: &str = "x-open-wearables-api-key";

const AUTH_REQUIRED: &str = "Authentication required: provide JWT token or API key";
const SDK_AUTH_REQUIRED: &str = "Authentication required: provide SDK token or API key";
const INVALID_KEY: &str = "Invalid or missing API key";
const BAD_CREDENTIALS: &str = "Could not validate credentials";
const SDK_TOKEN_REFUSED: &str = "SDK tokens cannot access this endpoint";

/// A caller of the integration API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Principal {
    Developer(Uuid),
    ApiKey(Uuid),
}

impl Principal {
    /// A short description for audit columns (`developer:<id>`, `api_key:<id>`).
    pub(crate) fn describe(&self) -> String {
        match self {
            Principal::Developer(id) => format!("developer:{id}"),
            Principal::ApiKey(id) => format!("api_key:{id}"),
        }
    }
}

fn api_key(parts: &Parts) -> Option<&str> {
    [API_KEY_HEADER, SDK_API_KEY_HEADER]
        .iter()
        .find_map(|h| parts.headers.get(*h))
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// The bearer token, with or without the `Bearer ` scheme.
fn bearer(parts: &Parts) -> Option<&str> {
    bearer_token(&parts.headers)
}

/// The bearer token of a request's headers, with or without the `Bearer ` scheme.
pub(crate) fn bearer_token(headers: &axum::http::HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?.trim();
    let token = match value.split_once(' ') {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest.trim(),
        Some(_) => return None,
        None => value,
    };
    (!token.is_empty()).then_some(token)
}

/// Records who makes the request and lets them through if their grant has what the operation
/// needs (`access`), else the 403 naming what is missing.
fn admit(parts: &Parts, principal: Principal, grant: Grant) -> ApiResult<Principal> {
    let actor = match principal {
        Principal::Developer(id) => Actor { kind: ActorKind::Developer, id: Some(id) },
        Principal::ApiKey(id) => Actor { kind: ActorKind::ApiKey, id: Some(id) },
    };
    record_actor(parts, actor);
    access::check(grant, crate::operations::need_of(parts))?;
    Ok(principal)
}

/// A developer, admitted by their role.
fn admit_developer(parts: &Parts, dev: &schema::developers::Developer) -> ApiResult<Principal> {
    admit(parts, Principal::Developer(dev.id), Grant::Role(dev.role))
}

/// The caller holding API key `key`, admitted by its scopes.
async fn key_principal(state: &AppState, parts: &Parts, key: &str) -> ApiResult<Principal> {
    match schema::api_keys::find_active(&state.db, key).await? {
        Some(found) => {
            // Its last use, recorded beside the call (at most once a minute): never a reason
            // for the call to wait or fail.
            let now = chrono::Utc::now();
            if schema::api_keys::use_is_due(&found, now) {
                let db = state.db.clone();
                tokio::spawn(async move {
                    if let Err(e) = schema::api_keys::record_use(&db, found.id, now).await {
                        tracing::warn!(error = %e, key = %found.id, "could not record a key's use");
                    }
                });
            }
            admit(parts, Principal::ApiKey(found.id), Grant::Scopes(found.scopes))
        }
        None => Err(ApiError::unauthorized(INVALID_KEY)),
    }
}

/// The developer of a verified developer token: the token holds while its developer exists and
/// it was issued under the developer's current credential version (a password change ends
/// every token issued before).
async fn developer_of(
    state: &AppState,
    token: Verified,
) -> ApiResult<Option<schema::developers::Developer>> {
    let developer = schema::developers::get(&state.db, token.subject).await?;
    Ok(developer.filter(|d| d.credential_version == token.version))
}

/// A developer token that holds.
async fn developer_token(
    state: &AppState,
    token: &str,
) -> ApiResult<Option<schema::developers::Developer>> {
    match state.tokens.verify(token) {
        Some(v) if v.scope == Scope::Developer => developer_of(state, v).await,
        _ => Ok(None),
    }
}

/// Developer token or API key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ApiAuth(pub Principal);

impl FromRequestParts<AppState> for ApiAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        // An unusable bearer token is ignored in favour of an API key, as in the reference.
        if let Some(token) = bearer(parts)
            && let Some(dev) = developer_token(state, token).await?
        {
            return admit_developer(parts, &dev).map(ApiAuth);
        }
        match api_key(parts) {
            Some(key) => key_principal(state, parts, key).await.map(ApiAuth),
            None => Err(ApiError::unauthorized(AUTH_REQUIRED)),
        }
    }
}

/// A logged-in developer (bearer token only).
#[derive(Debug, Clone)]
pub(crate) struct DeveloperAuth(pub schema::developers::Developer);

impl FromRequestParts<AppState> for DeveloperAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let token = bearer(parts).ok_or_else(|| ApiError::bearer_unauthorized(BAD_CREDENTIALS))?;
        match state.tokens.verify(token) {
            Some(v) if v.scope == Scope::Sdk => {
                Err(ApiError::bearer_unauthorized(SDK_TOKEN_REFUSED))
            }
            Some(v) => match developer_of(state, v).await? {
                Some(dev) => {
                    admit_developer(parts, &dev)?;
                    Ok(DeveloperAuth(dev))
                }
                None => Err(ApiError::bearer_unauthorized(BAD_CREDENTIALS)),
            },
            None => Err(ApiError::bearer_unauthorized(BAD_CREDENTIALS)),
        }
    }
}

/// A caller of the SDK endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SdkAuth {
    /// An end user's SDK token: may act for that user only.
    User(Uuid),
    /// A developer or an API key: may act for any user.
    Service(Principal),
}

impl SdkAuth {
    /// The contract's 403 when an SDK token is used for another user's path.
    pub(crate) fn ensure_user(&self, path_user: &str) -> ApiResult<()> {
        match self {
            SdkAuth::User(id) if id.to_string() != path_user.to_ascii_lowercase() => {
                Err(ApiError::forbidden("Token does not match user_id"))
            }
            _ => Ok(()),
        }
    }
}

impl FromRequestParts<AppState> for SdkAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let token = bearer(parts);
        if let Some(token) = token {
            match state.tokens.verify(token) {
                Some(v) if v.scope == Scope::Sdk => {
                    // Bound to its own user (`ensure_user`) on the routes that take it.
                    record_actor(parts, Actor { kind: ActorKind::User, id: Some(v.subject) });
                    return Ok(SdkAuth::User(v.subject));
                }
                Some(v) => {
                    if let Some(dev) = developer_of(state, v).await? {
                        return admit_developer(parts, &dev).map(SdkAuth::Service);
                    }
                }
                None => {}
            }
        }
        match (api_key(parts), token) {
            (Some(key), _) => key_principal(state, parts, key).await.map(SdkAuth::Service),
            // A token was sent but is expired or invalid: 401 makes the SDK refresh it.
            (None, Some(_)) => Err(ApiError::bearer_unauthorized(BAD_CREDENTIALS)),
            (None, None) => Err(ApiError::unauthorized(SDK_AUTH_REQUIRED)),
        }
    }
}

/// The export import routes: what the SDK routes accept (a developer token, the user's SDK
/// token, an API key), with every credential problem answered as the contract's
/// `401 Could not validate credentials`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ImportAuth(pub SdkAuth);

impl FromRequestParts<AppState> for ImportAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        match SdkAuth::from_request_parts(parts, state).await {
            Ok(auth) => Ok(ImportAuth(auth)),
            Err(ApiError::Client { status, .. })
                if status == axum::http::StatusCode::UNAUTHORIZED =>
            {
                Err(ApiError::bearer_unauthorized(BAD_CREDENTIALS))
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sdk_tokens_act_for_their_own_user_only() {
        let user = Uuid::now_v7();
        let own = SdkAuth::User(user);
        assert!(own.ensure_user(&user.to_string()).is_ok());
        assert!(own.ensure_user(&user.to_string().to_uppercase()).is_ok());
        let other = own.ensure_user(&Uuid::now_v7().to_string());
        assert!(matches!(other, Err(ApiError::Client { status, .. }) if status == 403));
        let service = SdkAuth::Service(Principal::ApiKey(Uuid::now_v7()));
        assert!(service.ensure_user("anything").is_ok());
    }

    fn parts(headers: &[(&str, &str)]) -> Parts {
        let mut req = axum::http::Request::builder();
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.body(()).map(|r| r.into_parts().0).unwrap_or_else(|_| panic!("request"))
    }

    #[test]
    fn header_forms_the_sdks_send() {
        assert_eq!(bearer(&parts(&[("authorization", "Bearer abc")])), Some("abc"));
        assert_eq!(bearer(&parts(&[("authorization", "bearer  abc ")])), Some("abc"));
        // Old iOS SDKs send the token without the scheme.
        assert_eq!(bearer(&parts(&[("authorization", "abc.def.ghi")])), Some("abc.def.ghi"));
        assert_eq!(bearer(&parts(&[("authorization", "Basic xyz")])), None);
        assert_eq!(bearer(&parts(&[])), None);
        assert_eq!(api_key(&parts(&[("X-Open-Wearables-API-Key", "sk-1")])), Some("sk-1"));
        assert_eq!(api_key(&parts(&[("X-Service-API-Key", " sk-2 ")])), Some("sk-2"));
        assert_eq!(api_key(&parts(&[("X-Service-API-Key", "")])), None);
    }
}
