//! The caller's address: the peer of the connection, or, behind a reverse proxy the operator
//! trusts (`TRUST_FORWARDED_FOR`), the last address in `X-Forwarded-For` (the one that proxy
//! appended; earlier ones are the client's to invent).

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

use crate::AppState;

/// `None` when the server was not started with connection info (some tests).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientAddr(pub Option<IpAddr>);

impl FromRequestParts<AppState> for ClientAddr {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Infallible> {
        let forwarded = state.config.trust_forwarded_for.then(|| forwarded_for(parts)).flatten();
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
        Ok(ClientAddr(forwarded.or(peer)))
    }
}

fn forwarded_for(parts: &Parts) -> Option<IpAddr> {
    let values = parts.headers.get_all("x-forwarded-for");
    let last = values.iter().filter_map(|v| v.to_str().ok()).next_back()?;
    last.rsplit(',').next()?.trim().parse().ok()
}
