//! Request extractors: who is calling (auth) and what they sent (JSON bodies, query strings).
//! Put the auth extractor first in a handler's arguments: a request that is both
//! unauthenticated and malformed gets 401.

mod auth;
mod client_addr;
mod json;
mod query;

pub(crate) use auth::bearer_token;
pub(crate) use auth::{ApiAuth, DeveloperAuth, ImportAuth, SdkAuth};
pub(crate) use client_addr::ClientAddr;
pub(crate) use json::{ApiJson, double_option};
pub(crate) use query::Query;

use schema::ids::UserId;
use uuid::Uuid;

use crate::error::{ApiError, ApiResult};

/// Parses a UUID path segment; the contract's 400 when it is not one.
pub(crate) fn path_uuid(raw: &str) -> ApiResult<Uuid> {
    Uuid::parse_str(raw).map_err(|_| ApiError::invalid_uuid())
}

/// Parses a `{user_id}` path segment, as [`path_uuid`].
pub(crate) fn path_user(raw: &str) -> ApiResult<UserId> {
    path_uuid(raw).map(UserId)
}
