use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use std::convert::Infallible;

use crate::validate::Params;

/// The raw query string as typed `Params`; never rejects (problems surface on `finish`).
pub(crate) struct Query(pub Params);

impl<S: Send + Sync> FromRequestParts<S> for Query {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Query(Params::parse(parts.uri.query())))
    }
}
