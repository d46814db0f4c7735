//! MCP (the Model Context Protocol) at `/mcp`, over Streamable HTTP: tools an assistant (a
//! desktop chat client, an IDE agent, an integrator's own agent) calls to answer questions about
//! a user's health from the stored data.
//!
//! Served statelessly (no MCP sessions kept: nothing for a caller to pile up), answers as plain
//! JSON. Every tool reads through the REST API in this process with the request's own API key
//! (`caller`), so it is authenticated, scoped, validated and put on the audit trail exactly as
//! the API is; a bad key is the tool's error, not a broken connection. Against DNS rebinding,
//! only requests to this deployment's own host names (loopback, `PUBLIC_URL`'s host,
//! `MCP_ALLOWED_HOSTS`) are served, and a browser's request from any origin but `PUBLIC_URL`'s
//! is refused (403).

mod args;
mod bounds;
mod caller;
mod reads;
mod tools;

use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::ApiConfig;

/// The largest MCP request body (a tool call's arguments are a few hundred bytes).
const REQUEST_MAX_BYTES: usize = 256 << 10;

/// The MCP service, reading through `rest` (the API's router, its state applied).
pub(crate) fn service(
    rest: Router,
    config: &ApiConfig,
) -> StreamableHttpService<tools::Tools, LocalSessionManager> {
    let public = url::Url::parse(&config.public_url).ok();
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
    hosts.extend(public.as_ref().and_then(|u| u.host_str()).map(str::to_owned));
    hosts.extend(config.mcp_allowed_hosts.iter().cloned());
    // With its port spelled out: an origin without one would match any port.
    let origins: Vec<String> = public
        .iter()
        .filter_map(|u| {
            Some(format!("{}://{}:{}", u.scheme(), u.host_str()?, u.port_or_known_default()?))
        })
        .collect();
    let settings = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(REQUEST_MAX_BYTES);
    StreamableHttpService::new(
        move || Ok(tools::Tools::new(rest.clone())),
        LocalSessionManager::default().into(),
        settings,
    )
}
