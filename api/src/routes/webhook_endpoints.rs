//! `/api/v1/webhooks/endpoints`: where outgoing webhooks go (developer token required).
//! While outgoing webhooks are off (`OUTGOING_WEBHOOKS_ENABLED`), management answers 503.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Duration, Utc};
use schema::ids::UserId;
use schema::webhook_endpoints::{Endpoint, EndpointPatch, NewEndpoint};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::json;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, FieldError, ValidationBody};
use crate::extract::{ApiJson, DeveloperAuth};
use crate::validate::{Checks, body_loc, expected_list};

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_endpoints, create_endpoint))
        .routes(routes!(get_endpoint, patch_endpoint, delete_endpoint))
        .routes(routes!(get_secret))
        .routes(routes!(rotate_secret))
}

/// How long a rotated-out secret keeps signing, so receivers can switch without a gap.
const OLD_SECRET_HOURS: i64 = 24;

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "ep_2f1c9a7d4b3e4c8a9d0e1f2a3b4c5d6e", "url": "https://example.com/hooks/wearhouse",
    "description": "", "filter_types": ["workout.created", "sleep.created"], "user_id": null,
    "disabled": false, "disabled_reason": null,
    "created_at": "2026-03-14T18:46:45Z", "updated_at": "2026-03-14T18:46:45Z"}))]
pub(crate) struct EndpointOut {
    /// `ep_…`.
    pub id: String,
    pub url: String,
    pub description: String,
    /// Null: every event type.
    pub filter_types: Option<Vec<String>>,
    /// Null: every user.
    #[schema(value_type = Option<uuid::Uuid>)]
    pub user_id: Option<UserId>,
    /// Disabled endpoints receive nothing; the sender disables one that failed for 5 days.
    pub disabled: bool,
    pub disabled_reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<Endpoint> for EndpointOut {
    fn from(e: Endpoint) -> EndpointOut {
        EndpointOut {
            id: e.id,
            url: e.url,
            description: e.description,
            filter_types: e.filter_types,
            user_id: e.user_id,
            disabled: e.disabled_at.is_some(),
            disabled_reason: e.disabled_reason,
            created_at: e.created_at,
            updated_at: e.updated_at,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct EndpointIn {
    pub url: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub filter_types: Option<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    pub user_id: Option<UserId>,
}

/// Present-but-null is `Some(None)`; absent is `None` (with `#[serde(default)]`).
fn present<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub(crate) struct EndpointPatchIn {
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// `null` subscribes to every event type.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<String>>)]
    pub filter_types: Option<Option<Vec<String>>>,
    /// `null` removes the user filter.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Uuid>)]
    pub user_id: Option<Option<UserId>>,
    /// `false` re-enables an endpoint the sender disabled; `true` disables it.
    #[serde(default)]
    pub disabled: Option<bool>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SecretOut {
    /// `whsec_` + base64 of 32 random bytes.
    pub key: String,
}

pub(crate) fn enabled(state: &AppState) -> ApiResult<()> {
    if state.config.outbox {
        Ok(())
    } else {
        Err(ApiError::client(
            StatusCode::SERVICE_UNAVAILABLE,
            "Outgoing webhooks are not enabled (set OUTGOING_WEBHOOKS_ENABLED=true in the service's environment).",
        ))
    }
}

pub(crate) fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("Webhook endpoint with ID: {id} not found."))
}

/// Checks what a create or patch sets; every problem reported at once.
async fn check(
    state: &AppState,
    url: Option<&str>,
    description: Option<&str>,
    filter_types: Option<&[String]>,
    user_id: Option<UserId>,
) -> ApiResult<()> {
    let mut checks = Checks::default();
    if let Some(url) = url
        && let Err(msg) = crate::webhook_url::check(url, state.config.webhook_targets)
    {
        checks.push(FieldError::new(body_loc("url"), "url_parsing", msg, json!(url)));
    }
    checks.max_len("url", url, 2000);
    checks.max_len("description", description, 500);
    let names: Vec<&str> = schema::catalogue::event_types::all().iter().map(|e| e.name).collect();
    for (i, t) in filter_types.unwrap_or_default().iter().enumerate() {
        if !names.contains(&t.as_str()) {
            let mut loc = body_loc("filter_types");
            loc.push(json!(i));
            checks.push(
                FieldError::new(loc, "enum", format!("Unknown event type '{t}'"), json!(t))
                    .with_ctx(json!({ "expected": expected_list(&names) })),
            );
        }
    }
    if let Some(id) = user_id
        && !schema::users::exists(&state.db, id).await?
    {
        let msg = format!("User with ID: {id} not found.");
        checks.push(FieldError::new(body_loc("user_id"), "value_error", msg, json!(id)));
    }
    checks.finish()
}

#[utoipa::path(get, path = "/webhooks/endpoints", tag = "webhooks",
    responses((status = 200, body = Vec<EndpointOut>), (status = 401, body = ErrorBody),
        (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn list_endpoints(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
) -> ApiResult<Json<Vec<EndpointOut>>> {
    enabled(&state)?;
    let all = schema::webhook_endpoints::list(&state.db).await?;
    Ok(Json(all.into_iter().map(Into::into).collect()))
}

#[utoipa::path(post, path = "/webhooks/endpoints", tag = "webhooks", request_body = EndpointIn,
    responses((status = 201, body = EndpointOut), (status = 401, body = ErrorBody),
        (status = 422, body = ValidationBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn create_endpoint(
    DeveloperAuth(dev): DeveloperAuth,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<EndpointIn>,
) -> ApiResult<(StatusCode, Json<EndpointOut>)> {
    enabled(&state)?;
    let description = body.description.unwrap_or_default();
    let filter = body.filter_types.as_deref();
    check(&state, Some(&body.url), Some(&description), filter, body.user_id).await?;
    let new = NewEndpoint {
        url: body.url.trim().to_string(),
        description,
        filter_types: body.filter_types,
        user_id: body.user_id,
        secret: webhooks::sign::new_secret(),
    };
    let e = schema::webhook_endpoints::insert(&state.db, &state.keys, &new).await?;
    tracing::info!(endpoint = %e.id, developer = %dev.id, "created webhook endpoint");
    Ok((StatusCode::CREATED, Json(e.into())))
}

#[utoipa::path(get, path = "/webhooks/endpoints/{endpoint_id}", tag = "webhooks",
    params(("endpoint_id" = String, Path)),
    responses((status = 200, body = EndpointOut), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn get_endpoint(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<EndpointOut>> {
    enabled(&state)?;
    let e = schema::webhook_endpoints::get(&state.db, &id).await?.ok_or_else(|| not_found(&id))?;
    Ok(Json(e.into()))
}

#[utoipa::path(patch, path = "/webhooks/endpoints/{endpoint_id}", tag = "webhooks",
    request_body = EndpointPatchIn, params(("endpoint_id" = String, Path)),
    responses((status = 200, body = EndpointOut), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ValidationBody),
        (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn patch_endpoint(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<EndpointPatchIn>,
) -> ApiResult<Json<EndpointOut>> {
    enabled(&state)?;
    let filter = body.filter_types.as_ref().and_then(|f| f.as_deref());
    let user = body.user_id.flatten();
    check(&state, body.url.as_deref(), body.description.as_deref(), filter, user).await?;
    let patch = EndpointPatch {
        url: body.url.map(|u| u.trim().to_string()),
        description: body.description,
        filter_types: body.filter_types,
        user_id: body.user_id,
        disabled: body.disabled,
    };
    let e = schema::webhook_endpoints::update(&state.db, &id, &patch)
        .await?
        .ok_or_else(|| not_found(&id))?;
    Ok(Json(e.into()))
}

#[utoipa::path(delete, path = "/webhooks/endpoints/{endpoint_id}", tag = "webhooks",
    params(("endpoint_id" = String, Path)),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn delete_endpoint(
    DeveloperAuth(dev): DeveloperAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    enabled(&state)?;
    if !schema::webhook_endpoints::delete(&state.db, &id).await? {
        return Err(not_found(&id));
    }
    tracing::info!(endpoint = %id, developer = %dev.id, "deleted webhook endpoint");
    Ok(StatusCode::NO_CONTENT)
}

/// The current signing secret.
#[utoipa::path(get, path = "/webhooks/endpoints/{endpoint_id}/secret", tag = "webhooks",
    params(("endpoint_id" = String, Path)),
    responses((status = 200, body = SecretOut), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn get_secret(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<SecretOut>> {
    enabled(&state)?;
    let e = schema::webhook_endpoints::get(&state.db, &id).await?.ok_or_else(|| not_found(&id))?;
    Ok(Json(SecretOut { key: e.secret(&state.keys)? }))
}

/// A new signing secret; the old one keeps signing alongside it for 24 hours (beyond the
/// contract).
#[utoipa::path(post, path = "/webhooks/endpoints/{endpoint_id}/secret/rotate", tag = "webhooks",
    params(("endpoint_id" = String, Path)),
    responses((status = 200, body = SecretOut), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn rotate_secret(
    DeveloperAuth(dev): DeveloperAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<SecretOut>> {
    enabled(&state)?;
    let until = Utc::now() + Duration::hours(OLD_SECRET_HOURS);
    let e = schema::webhook_endpoints::rotate_secret(
        &state.db,
        &state.keys,
        &id,
        &webhooks::sign::new_secret(),
        until,
    )
    .await?
    .ok_or_else(|| not_found(&id))?;
    tracing::info!(endpoint = %id, developer = %dev.id, "rotated webhook secret");
    Ok(Json(SecretOut { key: e.secret(&state.keys)? }))
}
