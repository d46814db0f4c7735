//! One file (or folder) per route group; each exports `router()`. `sdk_payload` holds only
//! the SDK body's schemas for the OpenAPI document.

pub(crate) mod api_keys;
pub(crate) mod audit;
pub(crate) mod auth;
pub(crate) mod bucket_events;
pub(crate) mod connect_links;
pub(crate) mod connect_page;
pub(crate) mod connections;
pub(crate) mod coverage;
pub(crate) mod data_sources;
pub(crate) mod event_types;
pub(crate) mod events;
pub(crate) mod exports;
pub(crate) mod health;
pub(crate) mod health_scores;
pub(crate) mod invitation_codes;
pub(crate) mod metrics;
pub(crate) mod oauth;
pub(crate) mod overview;
pub(crate) mod portal;
pub(crate) mod priorities;
pub(crate) mod providers;
pub(crate) mod sdk_payload;
pub(crate) mod sdk_sync;
pub(crate) mod sdk_tokens;
pub(crate) mod static_files;
pub(crate) mod summaries;
pub(crate) mod sync_status;
pub(crate) mod team;
pub(crate) mod timeseries;
pub(crate) mod users;
pub(crate) mod vendor_sync;
pub(crate) mod vendor_webhooks;
pub(crate) mod webhook_endpoints;
pub(crate) mod webhook_history;
pub(crate) mod xml_import;

use schema::ids::UserId;

use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::path_user;

/// [`existing_user`] and the user's sources ranked by the one source-priority rule, in one
/// round trip: what every read starts with.
pub(crate) async fn user_ranking(
    state: &AppState,
    raw: &str,
) -> ApiResult<(UserId, rules::Ranking)> {
    let id = path_user(raw)?;
    match schema::priority::ranked_sources_of_existing(&state.db, id).await? {
        Some(sources) => Ok((id, rules::Ranking::new(sources))),
        None => Err(ApiError::user_not_found(id)),
    }
}

/// Parses a `{user_id}` path segment and checks that the user exists: the contract's 400 for a
/// malformed id, its 404 for an unknown one.
pub(crate) async fn existing_user(state: &AppState, raw: &str) -> ApiResult<UserId> {
    let id = path_user(raw)?;
    if schema::users::exists(&state.db, id).await? {
        Ok(id)
    } else {
        Err(ApiError::user_not_found(id))
    }
}
