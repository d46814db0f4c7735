//! The tools' way to the data: the REST API itself, called inside the process with the MCP
//! request's own credentials. Every answer is the API's — its authentication and scopes, its
//! validation, its source-priority rules, its audit trail — so an assistant and an integrator
//! never read two versions of a user's day.

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::http::{HeaderMap, Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt as _;

/// The request headers an API call is made with: the caller's credentials, and the address a
/// trusted proxy put in front of them.
const FORWARDED: [&str; 4] =
    ["x-service-api-key", "x-open-wearables-api-key", "authorization", "x-forwarded-for"];

/// The largest API answer read (a page is at most 100 items: far less).
const ANSWER_MAX_BYTES: usize = 8 << 20;

/// Why a tool has no answer; each says what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ToolError {
    /// The API refused the call.
    #[error("{}", api_message(*status, detail))]
    Api { status: StatusCode, detail: String },
    /// More was asked than one answer may hold.
    #[error("{0}")]
    TooLarge(String),
    /// An argument the tool reads itself is wrong.
    #[error("Invalid arguments: {0}")]
    Invalid(String),
    /// Ours.
    #[error("The service failed to answer: {0}")]
    Internal(String),
}

fn api_message(status: StatusCode, detail: &str) -> String {
    match status {
        StatusCode::UNAUTHORIZED => format!(
            "Not authenticated: {detail}. Connect with a valid API key in the \
             X-Service-API-Key header (or a developer's bearer token)."
        ),
        StatusCode::FORBIDDEN => format!("Not allowed: {detail}"),
        StatusCode::NOT_FOUND => format!("{detail} (find users with the find_users tool)"),
        StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => {
            format!("Invalid arguments: {detail}")
        }
        _ => format!("The API answered {}: {detail}", status.as_u16()),
    }
}

/// The words of an error body in the contract's shapes: `{"detail": "…"}`, or a validation
/// error's `{"detail": [{"loc": […], "msg": "…"}]}` as `loc: msg; …`.
fn detail_of(body: &Value) -> String {
    match body.get("detail") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                let at: Vec<String> = item
                    .get("loc")
                    .and_then(Value::as_array)
                    .map(|l| {
                        l.iter()
                            .filter(|p| p.as_str() != Some("query"))
                            .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                let msg = item.get("msg").and_then(Value::as_str).unwrap_or("invalid");
                if at.is_empty() { msg.to_owned() } else { format!("{}: {msg}", at.join(".")) }
            })
            .collect::<Vec<_>>()
            .join("; "),
        _ => body.to_string(),
    }
}

/// The REST API as one MCP request may call it.
#[derive(Clone)]
pub(crate) struct Caller {
    rest: Router,
    headers: HeaderMap,
    peer: Option<ConnectInfo<SocketAddr>>,
}

impl Caller {
    /// Calls made with what `parts` (the MCP request) carried.
    pub(crate) fn new(rest: &Router, parts: &Parts) -> Caller {
        let mut headers = HeaderMap::new();
        for name in FORWARDED {
            for value in parts.headers.get_all(name) {
                headers.append(name, value.clone());
            }
        }
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().cloned();
        Caller { rest: rest.clone(), headers, peer }
    }

    /// `GET /api/v1{path}?{query}`: the answer's JSON, or the API's refusal.
    pub(crate) async fn get(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<Value, ToolError> {
        let mut uri = format!("/api/v1{path}");
        if !query.is_empty() {
            let mut q = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in query {
                q.append_pair(k, v);
            }
            uri.push('?');
            uri.push_str(&q.finish());
        }
        let mut request = Request::get(uri)
            .body(Body::empty())
            .map_err(|e| ToolError::Internal(format!("building a request: {e}")))?;
        *request.headers_mut() = self.headers.clone();
        if let Some(peer) = self.peer {
            request.extensions_mut().insert(peer);
        }
        let response = match self.rest.clone().oneshot(request).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), ANSWER_MAX_BYTES)
            .await
            .map_err(|e| ToolError::Internal(format!("reading an answer: {e}")))?;
        let body: Value = serde_json::from_slice(&bytes)
            .map_err(|e| ToolError::Internal(format!("an answer that is not JSON: {e}")))?;
        if status.is_success() {
            Ok(body)
        } else {
            Err(ToolError::Api { status, detail: detail_of(&body) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refusals_say_what_to_do() {
        let detail = detail_of(&json!({"detail": [
            {"loc": ["query", "start_date"], "msg": "Field required", "type": "missing"},
            {"loc": ["query", "limit"], "msg": "too big"}
        ]}));
        assert_eq!(detail, "start_date: Field required; limit: too big");
        assert_eq!(detail_of(&json!({"detail": "User not found"})), "User not found");
        let e =
            ToolError::Api { status: StatusCode::UNAUTHORIZED, detail: "Invalid API key".into() };
        assert!(e.to_string().contains("X-Service-API-Key"), "{e}");
        let e = ToolError::Api { status: StatusCode::UNPROCESSABLE_ENTITY, detail };
        assert!(e.to_string().starts_with("Invalid arguments: start_date"), "{e}");
    }
}
