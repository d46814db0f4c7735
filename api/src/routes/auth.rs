//! `/api/v1/auth`: developer login (OAuth 2.0 password flow) and the current developer.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::schema::Type;
use utoipa::openapi::{Object, ObjectBuilder};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;
use uuid::Uuid;

use axum::Extension;
use schema::developers::{Developer, Role};

use crate::AppState;
use crate::audit::AuditNote;
use crate::error::{ApiError, ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ClientAddr, DeveloperAuth};
use crate::security::passwords;
use crate::security::throttle::Attempt;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(login).layer(axum::extract::DefaultBodyLimit::max(LOGIN_FORM_BYTES)))
        .routes(routes!(me))
        .routes(routes!(refresh))
        .routes(routes!(change_password))
}

/// How long a developer session lasts from its login, however often its token is renewed.
const SESSION_HOURS: i64 = 12;
/// The shortest password a developer may choose.
pub(crate) const MIN_PASSWORD: usize = 10;
/// The longest username (an email address: RFC 5321 allows 320 characters).
const MAX_USERNAME: usize = 320;
/// The largest login form read.
const LOGIN_FORM_BYTES: usize = 4096;

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct LoginOut {
    pub access_token: String,
    /// Always `bearer`.
    pub token_type: &'static str,
    /// Seconds until the token expires.
    pub expires_in: i64,
}

/// The form of the OAuth 2.0 password flow.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub(crate) struct LoginForm {
    /// The developer's email.
    username: String,
    password: String,
}

/// The OpenAPI schema of a role.
pub(crate) fn role_schema() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(["owner", "admin", "viewer"]))
        .description(Some(
            "`owner`: everything; `admin`: everything but the team's owners; `viewer`: reads, \
             changes nothing",
        ))
        .build()
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DeveloperOut {
    pub id: Uuid,
    pub email: String,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    #[schema(schema_with = role_schema)]
    pub role: Role,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<Developer> for DeveloperOut {
    fn from(dev: Developer) -> DeveloperOut {
        DeveloperOut {
            id: dev.id,
            email: dev.email,
            first_name: dev.first_name,
            last_name: dev.last_name,
            role: dev.role,
            created_at: dev.created_at,
            updated_at: dev.updated_at,
        }
    }
}

const WRONG_LOGIN: &str = "Incorrect email or password";

fn too_many_failures(wait: u64) -> ApiError {
    let detail = format!("Too many failed login attempts; try again in {wait} seconds");
    ApiError::too_many_requests(detail, wait)
}

/// Exchanges a developer's email and password for a bearer token. Any problem with the form is
/// answered like a wrong password, so the endpoint tells nothing about which accounts exist; a
/// username longer than 320 characters is one. A form over 4 KiB is 413.
#[utoipa::path(post, path = "/auth/login", tag = "auth",
    request_body(content = LoginForm, content_type = "application/x-www-form-urlencoded"),
    responses((status = 200, body = LoginOut), (status = 401, body = ErrorBody),
        (status = 413, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "Too many failed logins for this account or from this address; see `Retry-After`"),
        (status = 503, body = ErrorBody, description = "Too many logins at once; see `Retry-After`")))]
async fn login(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> ApiResult<(Extension<AuditNote>, Json<LoginOut>)> {
    let body = body.map_err(|e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::client(e.status(), "The login form is too large")
        }
        status => ApiError::client(status, "The login form could not be read"),
    })?;
    let mut username = None;
    let mut password = None;
    for (k, v) in url::form_urlencoded::parse(&body) {
        match k.as_ref() {
            "username" => username = Some(v.into_owned()),
            "password" => password = Some(v.into_owned()),
            _ => {}
        }
    }
    let (Some(username), Some(password)) = (username, password) else {
        return Err(ApiError::bearer_unauthorized(WRONG_LOGIN));
    };
    if username.chars().count() > MAX_USERNAME {
        return Err(ApiError::bearer_unauthorized(WRONG_LOGIN));
    }
    let attempt = Attempt { account: username.clone(), address };
    if let Some(wait) = state.logins.blocked(&attempt).await {
        return Err(too_many_failures(wait));
    }
    let developer = schema::developers::find_by_email(&state.db, username.trim()).await?;
    let hash = developer.as_ref().map(|d| d.password_hash.clone());
    let ok = passwords::verify_on(&state.hashes, password, hash).await.map_err(hashes_busy)?;
    let Some(developer) = developer.filter(|_| ok) else {
        tracing::info!(?address, "failed developer login");
        state.logins.failed(&attempt).await;
        return Err(ApiError::bearer_unauthorized(WRONG_LOGIN));
    };
    state.logins.succeeded(&attempt).await;
    let began = Utc::now().timestamp();
    let token = session_token(&state, developer.id, began, developer.credential_version)?;
    Ok((Extension(AuditNote::developer(developer.id)), token))
}

/// A developer token of a session that began at `began`, under credential `version`.
pub(crate) fn session_token(
    state: &AppState,
    developer: Uuid,
    began: i64,
    version: i32,
) -> ApiResult<Json<LoginOut>> {
    let token = state
        .tokens
        .issue_developer(developer, began, version)
        .map_err(|e| ApiError::Other(format!("signing a token: {e}")))?;
    Ok(Json(LoginOut {
        access_token: token,
        token_type: "bearer",
        expires_in: state.tokens.lifetime_seconds(),
    }))
}

/// A new token for the developer's session (the portal renews before the token expires). A
/// session ends twelve hours after its login: 401 `Session expired; log in again`.
#[utoipa::path(post, path = "/auth/refresh", tag = "auth",
    responses((status = 200, body = LoginOut), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
async fn refresh(
    State(state): State<AppState>,
    DeveloperAuth(dev): DeveloperAuth,
    headers: axum::http::HeaderMap,
) -> ApiResult<Json<LoginOut>> {
    let claims = crate::extract::bearer_token(&headers)
        .and_then(|t| state.tokens.claims(t))
        .ok_or_else(|| ApiError::bearer_unauthorized("Could not validate credentials"))?;
    let began = claims.auth.unwrap_or(claims.iat);
    if Utc::now().timestamp() - began > SESSION_HOURS * 3600 {
        return Err(ApiError::bearer_unauthorized("Session expired; log in again"));
    }
    session_token(&state, dev.id, began, dev.credential_version)
}

#[derive(Debug, serde::Deserialize, ToSchema)]
pub(crate) struct PasswordIn {
    pub current_password: String,
    /// At least 10 characters.
    pub new_password: String,
}

/// Changes the developer's password (the current one is asked again) and ends every other
/// session: tokens issued before no longer work, and the answer is a new token for this
/// session. A wrong current password is 400 `Incorrect password`, counted like a failed login
/// (429 past the limit); a new one shorter than 10 characters 422; a session ended meanwhile by
/// another change 401.
#[utoipa::path(post, path = "/auth/password", tag = "auth",
    request_body = PasswordIn,
    responses((status = 200, body = LoginOut), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 422, body = ValidationBody), (status = 429, body = ErrorBody),
              (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn change_password(
    State(state): State<AppState>,
    DeveloperAuth(dev): DeveloperAuth,
    ClientAddr(address): ClientAddr,
    headers: axum::http::HeaderMap,
    crate::extract::ApiJson(body): crate::extract::ApiJson<PasswordIn>,
) -> ApiResult<Json<LoginOut>> {
    check_new_password("new_password", &body.new_password)?;
    // A stolen token guessing the password it would then change is throttled like a login.
    let attempt = Attempt { account: dev.email.clone(), address };
    if let Some(wait) = state.logins.blocked(&attempt).await {
        return Err(too_many_failures(wait));
    }
    let ok = passwords::verify_on(&state.hashes, body.current_password, Some(dev.password_hash))
        .await
        .map_err(hashes_busy)?;
    if !ok {
        state.logins.failed(&attempt).await;
        return Err(ApiError::bad_request("Incorrect password"));
    }
    let hash = hash_password(&state, body.new_password).await?;
    // Only under the version this session was checked against: a change made meanwhile by
    // another session ended this one.
    let version =
        schema::developers::set_password(&state.db, dev.id, &hash, dev.credential_version)
            .await?
            .ok_or_else(|| ApiError::bearer_unauthorized("Could not validate credentials"))?;
    // This session goes on (from when it began), under the new version.
    let began = crate::extract::bearer_token(&headers)
        .and_then(|t| state.tokens.claims(t))
        .map(|c| c.auth.unwrap_or(c.iat))
        .unwrap_or_else(|| Utc::now().timestamp());
    session_token(&state, dev.id, began, version)
}

/// The 503 when every password-hash thread is busy with its queue full.
fn hashes_busy<E>(_: E) -> ApiError {
    ApiError::Later {
        status: StatusCode::SERVICE_UNAVAILABLE,
        detail: "Too many logins at once; try again in a moment".into(),
        retry_after: 1,
    }
}

/// The hash of a password a developer chose, made on the password-hash threads.
pub(crate) async fn hash_password(state: &AppState, password: String) -> ApiResult<String> {
    let hash = state.hashes.run(move || passwords::hash(&password)).await.map_err(hashes_busy)?;
    hash.map_err(|e| ApiError::Other(format!("hashing a password: {e}")))
}

/// A password a developer chooses: at least [`MIN_PASSWORD`] characters, else the 422 on
/// `field`.
pub(crate) fn check_new_password(field: &str, password: &str) -> ApiResult<()> {
    if password.chars().count() < MIN_PASSWORD {
        return Err(ApiError::Validation(vec![crate::error::FieldError::new(
            crate::validate::body_loc(field),
            "string_too_short",
            format!("String should have at least {MIN_PASSWORD} characters"),
            serde_json::json!(null),
        )]));
    }
    Ok(())
}

/// The developer the bearer token belongs to.
#[utoipa::path(get, path = "/auth/me", tag = "auth",
    responses((status = 200, body = DeveloperOut), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
async fn me(DeveloperAuth(dev): DeveloperAuth) -> Json<DeveloperOut> {
    Json(dev.into())
}
