//! `/api/v1/developer/api-keys`: API keys for the integration API (developer token required).
//! The full key is shown once, when it is created or rotated; afterwards only its prefix.

use axum::Extension;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use schema::api_keys::{ApiKey, NewKey, Scope, Scopes};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;
use utoipa::openapi::schema::Type;
use utoipa::openapi::{Array, ArrayBuilder, ObjectBuilder};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::audit::AuditNote;
use crate::error::{ApiError, ApiResult, ErrorBody, FieldError, ValidationBody};
use crate::extract::{ApiJson, DeveloperAuth, path_uuid};
use crate::security::secrets;
use crate::validate::{Checks, body_loc};

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_keys, create_key))
        .routes(routes!(rename_key, delete_key))
        .routes(routes!(rotate_key))
}

/// An API key as listed: its prefix, never the key.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ApiKeyOut {
    pub id: Uuid,
    pub name: String,
    /// The first characters of the key, to tell keys apart.
    pub prefix: String,
    pub created_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// When it last authenticated a call (to the minute); null: never.
    pub last_used_at: Option<DateTime<Utc>>,
    /// What it may do: `read` (users and their data), `write` (users, data deletion,
    /// imports, syncs, connections), `sdk` (SDK tokens and invitation codes).
    #[schema(schema_with = scopes_schema)]
    pub scopes: Vec<&'static str>,
}

/// The OpenAPI schema of a key's scopes.
fn scopes_schema() -> Array {
    let scope = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(Scope::ALL.map(Scope::as_str)))
        .build();
    ArrayBuilder::new().items(scope).unique_items(true).build()
}

/// A key just created: the only time the full key is shown.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ApiKeyCreated {
    #[serde(flatten)]
    pub key_info: ApiKeyOut,
    /// The full key. Store it now: it cannot be shown again.
    pub key: String,
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct ApiKeyIn {
    /// Defaults to `Default`.
    #[serde(default)]
    pub name: Option<String>,
    /// What the key may do; default all three (`read`, `write`, `sdk`). A call outside them is
    /// 403 naming the scope missing.
    #[serde(default)]
    #[schema(schema_with = scopes_schema)]
    pub scopes: Option<Vec<String>>,
}

impl From<ApiKey> for ApiKeyOut {
    fn from(k: ApiKey) -> ApiKeyOut {
        ApiKeyOut {
            id: k.id,
            name: k.name,
            prefix: k.prefix,
            created_by: k.created_by,
            created_at: k.created_at,
            revoked_at: k.revoked_at,
            last_used_at: k.last_used_at,
            scopes: k.scopes.list().into_iter().map(Scope::as_str).collect(),
        }
    }
}

/// The scopes asked for: each one of `read`, `write`, `sdk`, at least one; all when absent.
fn parse_scopes(asked: Option<&[String]>) -> ApiResult<Scopes> {
    let Some(asked) = asked else { return Ok(Scopes::ALL) };
    let mut checks = Checks::default();
    let mut scopes = Vec::new();
    for (i, name) in asked.iter().enumerate() {
        match Scope::parse(name) {
            Some(scope) => scopes.push(scope),
            None => checks.push(
                FieldError::new(
                    vec![json!("body"), json!("scopes"), json!(i)],
                    "enum",
                    "Input should be 'read', 'write' or 'sdk'",
                    json!(name),
                )
                .with_ctx(json!({ "expected": "'read', 'write' or 'sdk'" })),
            ),
        }
    }
    if asked.is_empty() {
        checks.push(
            FieldError::new(
                body_loc("scopes"),
                "too_short",
                "List should have at least 1 item after validation, not 0",
                json!([]),
            )
            .with_ctx(json!({ "field_type": "List", "min_length": 1, "actual_length": 0 })),
        );
    }
    checks.finish()?;
    Ok(Scopes::of(scopes))
}

fn check_name(name: &str) -> ApiResult<()> {
    let mut checks = Checks::default();
    if name.trim().is_empty() {
        checks.push(
            FieldError::new(
                body_loc("name"),
                "string_too_short",
                "String should have at least 1 character",
                json!(name),
            )
            .with_ctx(json!({ "min_length": 1 })),
        );
    }
    checks.max_len("name", Some(name), 100);
    checks.finish()
}

fn key_not_found(id: Uuid) -> ApiError {
    ApiError::not_found(format!("API key with ID: {id} not found."))
}

#[utoipa::path(get, path = "/developer/api-keys", tag = "api-keys",
    responses((status = 200, body = Vec<ApiKeyOut>), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
async fn list_keys(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
) -> ApiResult<Json<Vec<ApiKeyOut>>> {
    let keys = schema::api_keys::list_active(&state.db).await?;
    Ok(Json(keys.into_iter().map(Into::into).collect()))
}

#[utoipa::path(post, path = "/developer/api-keys", tag = "api-keys", request_body = ApiKeyIn,
    responses(
        (status = 201, body = ApiKeyCreated), (status = 401, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("bearer" = [])))]
async fn create_key(
    DeveloperAuth(dev): DeveloperAuth,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ApiKeyIn>,
) -> ApiResult<(StatusCode, Extension<AuditNote>, Json<ApiKeyCreated>)> {
    let name = body.name.unwrap_or_else(|| "Default".to_string());
    check_name(&name)?;
    let scopes = parse_scopes(body.scopes.as_deref())?;
    let (key, prefix) = secrets::new_api_key();
    let new =
        NewKey { name: name.trim(), key: &key, prefix: &prefix, scopes, created_by: Some(dev.id) };
    let stored = schema::api_keys::insert(&state.db, new).await?;
    tracing::info!(key_id = %stored.id, developer = %dev.id, "created API key");
    let note = AuditNote::resource(stored.id);
    Ok((StatusCode::CREATED, Extension(note), Json(ApiKeyCreated { key_info: stored.into(), key })))
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct ApiKeyPatch {
    pub name: String,
}

#[utoipa::path(patch, path = "/developer/api-keys/{key_id}", tag = "api-keys", request_body = ApiKeyPatch,
    params(("key_id" = String, Path, description = "The key's id")),
    responses(
        (status = 200, body = ApiKeyOut), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("bearer" = [])))]
async fn rename_key(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Path(key_id): Path<String>,
    ApiJson(body): ApiJson<ApiKeyPatch>,
) -> ApiResult<Json<ApiKeyOut>> {
    let id = path_uuid(&key_id)?;
    check_name(&body.name)?;
    let key = schema::api_keys::rename(&state.db, id, body.name.trim())
        .await?
        .ok_or_else(|| key_not_found(id))?;
    Ok(Json(key.into()))
}

/// Revokes a key at once. Returns the revoked key.
#[utoipa::path(delete, path = "/developer/api-keys/{key_id}", tag = "api-keys",
    params(("key_id" = String, Path, description = "The key's id")),
    responses(
        (status = 200, body = ApiKeyOut), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("bearer" = [])))]
async fn delete_key(
    DeveloperAuth(dev): DeveloperAuth,
    State(state): State<AppState>,
    Path(key_id): Path<String>,
) -> ApiResult<Json<ApiKeyOut>> {
    let id = path_uuid(&key_id)?;
    let key = schema::api_keys::revoke(&state.db, id).await?.ok_or_else(|| key_not_found(id))?;
    tracing::info!(key_id = %id, developer = %dev.id, "revoked API key");
    Ok(Json(key.into()))
}

/// Replaces a key by a new one with the same name; the old key stops working at once.
#[utoipa::path(post, path = "/developer/api-keys/{key_id}/rotate", tag = "api-keys",
    params(("key_id" = String, Path, description = "The key's id")),
    responses(
        (status = 201, body = ApiKeyCreated), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("bearer" = [])))]
async fn rotate_key(
    DeveloperAuth(dev): DeveloperAuth,
    State(state): State<AppState>,
    Path(key_id): Path<String>,
) -> ApiResult<(StatusCode, Json<ApiKeyCreated>)> {
    let id = path_uuid(&key_id)?;
    let (key, prefix) = secrets::new_api_key();
    let stored = schema::api_keys::rotate(&state.db, id, &key, &prefix, Some(dev.id))
        .await?
        .ok_or_else(|| key_not_found(id))?;
    tracing::info!(old_key_id = %id, key_id = %stored.id, developer = %dev.id, "rotated API key");
    Ok((StatusCode::CREATED, Json(ApiKeyCreated { key_info: stored.into(), key })))
}
