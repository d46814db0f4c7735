//! Source priorities: the one rule every read path uses to choose between sources reporting the
//! same thing. `/api/v1/priorities` sets the deployment's order (developer token);
//! `/api/v1/users/{user_id}/priorities` a user's own (API key), including an order of the
//! user's own sources.
//!
//! A source's rank is, in order: its place in the user's own list of sources; its device type's
//! place (the user's list, else the deployment's, else watch, ring, band, phone, scale, other,
//! unknown); its provider's place (likewise; default phonehealth, google, samsung); its age
//! (the first seen wins).

use std::collections::HashSet;

use axum::Json;
use axum::extract::{Path, State};
use schema::ids::UserId;
use schema::priority::{DEFAULT_PROVIDERS, DEVICE_TYPES, Priorities};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiResult, ErrorBody, FieldError, ValidationBody};
use crate::extract::{ApiAuth, ApiJson, DeveloperAuth};
use crate::routes::data_sources::DataSourceOut;
use crate::routes::existing_user;
use crate::validate::{Checks, body_loc, expected_list};

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_global, put_global)).routes(routes!(get_user, put_user))
}

/// The deployment's order, best first; empty lists fall back to the built-in defaults.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct GlobalPriorities {
    pub providers: Vec<String>,
    pub device_types: Vec<String>,
    /// The built-in order, used after the lists above.
    pub default_providers: Vec<String>,
    pub default_device_types: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RankedSource {
    /// 0 is the best.
    pub rank: i32,
    pub data_source: DataSourceOut,
}

/// A user's own order, and the resulting ranking of their sources.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct UserPriorities {
    pub providers: Vec<String>,
    pub device_types: Vec<String>,
    pub data_sources: Vec<Uuid>,
    /// The user's sources, best first, as every read resolves them.
    pub ranking: Vec<RankedSource>,
}

/// Lists to set; an omitted list is left as it is, an empty one cleared.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub(crate) struct PrioritiesIn {
    pub providers: Option<Vec<String>>,
    pub device_types: Option<Vec<String>>,
    /// The user's own data source ids, best first (user scope only).
    pub data_sources: Option<Vec<Uuid>>,
}

fn check_list(checks: &mut Checks, field: &str, values: &[String], allowed: &[&str]) {
    let mut seen = HashSet::new();
    for (i, v) in values.iter().enumerate() {
        let mut loc = body_loc(field);
        loc.push(json!(i));
        if !allowed.contains(&v.as_str()) {
            let expected = expected_list(allowed);
            checks.push(
                FieldError::new(loc, "enum", format!("Input should be {expected}"), json!(v))
                    .with_ctx(json!({ "expected": expected })),
            );
        } else if !seen.insert(v) {
            checks.push(FieldError::new(loc, "value_error", "Listed twice", json!(v)));
        }
    }
}

/// Applies `body` over `current`, after checking it.
fn apply(current: Priorities, body: PrioritiesIn, own: Option<&[Uuid]>) -> ApiResult<Priorities> {
    let mut checks = Checks::default();
    // Cloud vendors rank beside the phones (a ring's readings against a watch's).
    let names: Vec<&str> = vendors::providers().map(|p| p.slug).collect();
    if let Some(p) = &body.providers {
        check_list(&mut checks, "providers", p, &names);
    }
    if let Some(d) = &body.device_types {
        check_list(&mut checks, "device_types", d, DEVICE_TYPES);
    }
    if let Some(ids) = &body.data_sources {
        let mut seen = HashSet::new();
        for (i, id) in ids.iter().enumerate() {
            let mut loc = body_loc("data_sources");
            loc.push(json!(i));
            match own {
                None => checks.push(FieldError::new(
                    loc,
                    "value_error",
                    "Data sources are ordered per user",
                    json!(id),
                )),
                Some(own) if !own.contains(id) => checks.push(FieldError::new(
                    loc,
                    "value_error",
                    "Not a data source of this user",
                    json!(id),
                )),
                Some(_) if !seen.insert(id) => {
                    checks.push(FieldError::new(loc, "value_error", "Listed twice", json!(id)))
                }
                Some(_) => {}
            }
        }
    }
    checks.finish()?;
    Ok(Priorities {
        providers: body.providers.unwrap_or(current.providers),
        device_types: body.device_types.unwrap_or(current.device_types),
        data_sources: body.data_sources.unwrap_or(current.data_sources),
    })
}

fn global_out(p: Priorities) -> GlobalPriorities {
    GlobalPriorities {
        providers: p.providers,
        device_types: p.device_types,
        default_providers: DEFAULT_PROVIDERS.iter().map(|s| s.to_string()).collect(),
        default_device_types: DEVICE_TYPES.iter().map(|s| s.to_string()).collect(),
    }
}

async fn user_out(state: &AppState, user_id: UserId) -> ApiResult<UserPriorities> {
    let own = schema::priority::for_user(&state.db, user_id).await?;
    let ranked = schema::priority::ranked_sources(&state.db, user_id).await?;
    Ok(UserPriorities {
        providers: own.providers,
        device_types: own.device_types,
        data_sources: own.data_sources,
        ranking: ranked
            .into_iter()
            .map(|(s, rank)| RankedSource { rank, data_source: s.into() })
            .collect(),
    })
}

/// The deployment's source priorities.
#[utoipa::path(get, path = "/priorities", tag = "priorities",
    responses((status = 200, body = GlobalPriorities), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
async fn get_global(
    _dev: DeveloperAuth,
    State(state): State<AppState>,
) -> ApiResult<Json<GlobalPriorities>> {
    Ok(Json(global_out(schema::priority::global(&state.db).await?)))
}

/// Sets the deployment's source priorities (providers and device types, best first).
#[utoipa::path(put, path = "/priorities", tag = "priorities", request_body = PrioritiesIn,
    responses((status = 200, body = GlobalPriorities), (status = 401, body = ErrorBody),
        (status = 422, body = ValidationBody)),
    security(("bearer" = [])))]
async fn put_global(
    _dev: DeveloperAuth,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<PrioritiesIn>,
) -> ApiResult<Json<GlobalPriorities>> {
    let current = schema::priority::global(&state.db).await?;
    let next = apply(current, body, None)?;
    schema::priority::set(&state.db, None, &next).await?;
    Ok(Json(global_out(next)))
}

/// A user's source priorities and the ranking of their sources.
#[utoipa::path(get, path = "/users/{user_id}/priorities", tag = "priorities",
    params(("user_id" = String, Path)),
    responses((status = 200, body = UserPriorities), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn get_user(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
) -> ApiResult<Json<UserPriorities>> {
    let user_id = existing_user(&state, &user_id).await?;
    Ok(Json(user_out(&state, user_id).await?))
}

/// Sets a user's source priorities: providers, device types, and the user's own sources, best
/// first. Omitted lists are kept.
#[utoipa::path(put, path = "/users/{user_id}/priorities", tag = "priorities", request_body = PrioritiesIn,
    params(("user_id" = String, Path)),
    responses((status = 200, body = UserPriorities), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn put_user(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    ApiJson(body): ApiJson<PrioritiesIn>,
) -> ApiResult<Json<UserPriorities>> {
    let user_id = existing_user(&state, &user_id).await?;
    let current = schema::priority::for_user(&state.db, user_id).await?;
    let own: Vec<Uuid> = schema::data_sources::list_for_user(&state.db, user_id)
        .await?
        .into_iter()
        .map(|s| s.id)
        .collect();
    let next = apply(current, body, Some(&own))?;
    schema::priority::set(&state.db, Some(user_id), &next).await?;
    Ok(Json(user_out(&state, user_id).await?))
}
