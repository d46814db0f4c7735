//! `/api/v1/users`: the application's end users.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use schema::ids::UserId;
use schema::users::{ListQuery, NewUser, SortBy, User, UserPatch};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::audit::AuditNote;
use crate::error::{ApiError, ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, ApiJson, DeveloperAuth, Query, double_option, path_user};
use crate::pagination::OffsetPage;
use crate::validate::Checks;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_users, create_user)).routes(routes!(
        get_user,
        patch_user,
        delete_user
    ))
}

/// An end user.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "0191f3c2-7a4e-7c51-9a43-2b6c1d0e8f10", "created_at": "2026-03-14T18:46:45Z",
    "first_name": "Ada", "last_name": null, "email": "ada@example.com", "external_user_id": "user-42",
    "last_synced_at": "2026-03-14T18:50:02Z", "last_synced_provider": "phonehealth", "has_active_connection": true}))]
pub(crate) struct UserOut {
    #[schema(value_type = uuid::Uuid)]
    pub id: UserId,
    pub created_at: DateTime<Utc>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub email: Option<String>,
    /// Deprecated: works only as a filter on the user list.
    pub external_user_id: Option<String>,
    pub last_synced_at: Option<DateTime<Utc>>,
    pub last_synced_provider: Option<String>,
    pub has_active_connection: bool,
}

impl From<User> for UserOut {
    fn from(u: User) -> UserOut {
        UserOut {
            id: u.id,
            created_at: u.created_at,
            first_name: u.first_name,
            last_name: u.last_name,
            email: u.email,
            external_user_id: u.external_user_id,
            last_synced_at: u.last_synced_at,
            last_synced_provider: u.last_synced_provider,
            has_active_connection: u.has_active_connection,
        }
    }
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub(crate) struct UserIn {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub email: Option<String>,
    /// Deprecated. Unique when set.
    pub external_user_id: Option<String>,
}

/// Absent fields stay as they are; `null` clears a field.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub(crate) struct UserPatchIn {
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub first_name: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub last_name: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub email: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    pub external_user_id: Option<Option<String>>,
}

const NAME_MAX: usize = 100;
const EXTERNAL_ID_MAX: usize = 255;

fn check(
    first: Option<&str>,
    last: Option<&str>,
    email: Option<&str>,
    ext: Option<&str>,
) -> ApiResult<()> {
    let mut checks = Checks::default();
    checks.max_len("first_name", first, NAME_MAX);
    checks.max_len("last_name", last, NAME_MAX);
    checks.email("email", email);
    checks.max_len("external_user_id", ext, EXTERNAL_ID_MAX);
    checks.finish()
}

fn flat(v: &Option<Option<String>>) -> Option<&str> {
    v.as_ref().and_then(|inner| inner.as_deref())
}

/// Lists users, newest first by default.
#[utoipa::path(get, path = "/users", tag = "users",
    params(
        ("page" = Option<i64>, Query, description = "1-based page number", minimum = 1),
        ("limit" = Option<i64>, Query, description = "Page size (default 20)", minimum = 1, maximum = 100),
        ("search" = Option<String>, Query, description = "Case-insensitive match on email, first or last name, external_user_id or id (any part)"),
        ("email" = Option<String>, Query, description = "Exact email"),
        ("external_user_id" = Option<String>, Query, description = "Deprecated exact filter"),
        ("sort_by" = Option<String>, Query, description = "created_at, email, first_name, last_name or last_synced_at"),
        ("sort_order" = Option<String>, Query, description = "asc or desc (default desc)"),
    ),
    responses(
        (status = 200, body = OffsetPage<UserOut>),
        (status = 401, body = ErrorBody), (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn list_users(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Query(mut params): Query,
) -> ApiResult<Json<OffsetPage<UserOut>>> {
    let page = params.int("page", 1, 1, i64::from(i32::MAX));
    let limit = params.int("limit", 20, 1, 100);
    let sort_by = params.choice("sort_by", SortBy::NAMES, "created_at");
    let descending = params.choice("sort_order", &["asc", "desc"], "desc") == "desc";
    let query = ListQuery {
        page,
        limit,
        search: params.string("search"),
        email: params.string("email"),
        external_user_id: params.string("external_user_id"),
        sort_by: SortBy::parse(sort_by).unwrap_or_default(),
        descending,
    };
    params.finish()?;
    let (users, total) = schema::users::list(&state.db, &query).await?;
    Ok(Json(OffsetPage::new(users.into_iter().map(UserOut::from).collect(), total, page, limit)))
}

/// Creates a user. Duplicate emails are allowed; a duplicate `external_user_id` is a 409.
#[utoipa::path(post, path = "/users", tag = "users", request_body = UserIn,
    responses(
        (status = 201, body = UserOut), (status = 401, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn create_user(
    _auth: ApiAuth,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<UserIn>,
) -> ApiResult<(StatusCode, axum::Extension<AuditNote>, Json<UserOut>)> {
    check(
        body.first_name.as_deref(),
        body.last_name.as_deref(),
        body.email.as_deref(),
        body.external_user_id.as_deref(),
    )?;
    let new = NewUser {
        email: body.email,
        first_name: body.first_name,
        last_name: body.last_name,
        external_user_id: body.external_user_id,
    };
    let user = schema::users::insert(&state.db, &new).await?;
    let note = axum::Extension(AuditNote::user(user.id));
    Ok((StatusCode::CREATED, note, Json(user.into())))
}

#[utoipa::path(get, path = "/users/{user_id}", tag = "users",
    params(("user_id" = String, Path, description = "The user's UUID")),
    responses(
        (status = 200, body = UserOut), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn get_user(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
) -> ApiResult<Json<UserOut>> {
    let id = path_user(&user_id)?;
    let user =
        schema::users::get(&state.db, id).await?.ok_or_else(|| ApiError::user_not_found(id))?;
    Ok(Json(user.into()))
}

/// Updates a user (developer token required).
#[utoipa::path(patch, path = "/users/{user_id}", tag = "users", request_body = UserPatchIn,
    params(("user_id" = String, Path, description = "The user's UUID")),
    responses(
        (status = 200, body = UserOut), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ValidationBody),
    ),
    security(("bearer" = [])))]
async fn patch_user(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    ApiJson(body): ApiJson<UserPatchIn>,
) -> ApiResult<Json<UserOut>> {
    let id = path_user(&user_id)?;
    check(
        flat(&body.first_name),
        flat(&body.last_name),
        flat(&body.email),
        flat(&body.external_user_id),
    )?;
    let patch = UserPatch {
        email: body.email,
        first_name: body.first_name,
        last_name: body.last_name,
        external_user_id: body.external_user_id,
    };
    let user = schema::users::update(&state.db, id, &patch)
        .await?
        .ok_or_else(|| ApiError::user_not_found(id))?;
    Ok(Json(user.into()))
}

/// Deletes a user and all of that user's data (developer token required). Returns the
/// deleted user.
#[utoipa::path(delete, path = "/users/{user_id}", tag = "users",
    params(("user_id" = String, Path, description = "The user's UUID")),
    responses(
        (status = 200, body = UserOut), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("bearer" = [])))]
async fn delete_user(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
) -> ApiResult<Json<UserOut>> {
    let id = path_user(&user_id)?;
    let user =
        schema::users::delete(&state.db, id).await?.ok_or_else(|| ApiError::user_not_found(id))?;
    tracing::info!(user_id = %id, "deleted user and all of their data");
    // Their objects: now, in the background; the workers' sweep retries until it is done.
    if let Some(storage) = state.storage.clone() {
        let db = state.db.clone();
        tokio::spawn(async move {
            if let Err(e) = storage.empty_deleted(&db, 10).await {
                tracing::warn!(error = %e, "emptying deleted users' objects failed; retried later");
            }
        });
    }
    Ok(Json(user.into()))
}
