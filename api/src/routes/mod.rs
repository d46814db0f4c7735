//! One file per route group; each exports `router()`.

pub mod api_keys;
pub mod audit;
pub mod auth;
pub mod bucket_events;
pub mod connect_links;
pub mod connect_page;
pub mod connections;
pub mod coverage;
pub mod data_sources;
pub mod event_types;
pub mod events;
pub mod health;
pub mod health_scores;
pub mod invitation_codes;
pub mod metrics;
pub mod oauth;
pub mod overview;
pub mod portal;
pub mod priorities;
pub mod providers;
pub mod sdk_payload;
pub mod sdk_sync;
pub mod sdk_tokens;
pub mod static_files;
pub mod summaries;
pub mod sync_status;
pub mod team;
pub mod timeseries;
pub mod users;
pub mod vendor_sync;
pub mod vendor_webhooks;
pub mod webhook_endpoints;
pub mod webhook_history;
pub mod xml_import;

use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::path_uuid;

/// The user's sources, ranked by the one source-priority rule.
pub async fn ranking(state: &AppState, user_id: Uuid) -> ApiResult<rules::Ranking> {
    Ok(rules::Ranking::new(schema::priority::ranked_sources(&state.db, user_id).await?))
}

/// [`existing_user`] and [`ranking`] at once, in one round trip: what every read starts with.
pub async fn user_ranking(state: &AppState, raw: &str) -> ApiResult<(Uuid, rules::Ranking)> {
    let id = path_uuid(raw)?;
    match schema::priority::ranked_sources_of_existing(&state.db, id).await? {
        Some(sources) => Ok((id, rules::Ranking::new(sources))),
        None => Err(ApiError::user_not_found(id)),
    }
}

/// Parses a `{user_id}` path segment and checks that the user exists: the contract's 400 for a
/// malformed id, its 404 for an unknown one.
pub async fn existing_user(state: &AppState, raw: &str) -> ApiResult<Uuid> {
    let id = path_uuid(raw)?;
    if schema::users::exists(&state.db, id).await? {
        Ok(id)
    } else {
        Err(ApiError::user_not_found(id))
    }
}
