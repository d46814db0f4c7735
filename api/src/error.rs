//! The contract's error shapes, in one place: `{detail: string}` for every error, and the
//! validation body `{detail: [{loc, msg, type, input, ctx}]}` with status 422.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use schema::ids::UserId;
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

/// One item of a 422 body: where (`loc`), what (`msg`, `type`), the offending `input` and the
/// constraint's parameters (`ctx`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub(crate) struct FieldError {
    #[schema(value_type = Vec<Object>)]
    pub loc: Vec<Value>,
    pub msg: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[schema(value_type = Object)]
    pub input: Value,
    #[schema(value_type = Object)]
    pub ctx: Value,
}

impl FieldError {
    pub(crate) fn new(
        loc: Vec<Value>,
        kind: &str,
        msg: impl Into<String>,
        input: Value,
    ) -> FieldError {
        FieldError { loc, msg: msg.into(), kind: kind.to_string(), input, ctx: json!({}) }
    }

    pub(crate) fn with_ctx(mut self, ctx: Value) -> FieldError {
        self.ctx = ctx;
        self
    }
}

/// `{detail: string}`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"detail": "User with ID: 0191f3c2-7a4e-7c51-9a43-2b6c1d0e8f10 not found."}))]
pub(crate) struct ErrorBody {
    pub detail: String,
}

/// `{detail: [FieldError]}`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"detail": [{"loc": ["query", "limit"], "msg": "Input should be less than or equal to 100",
    "type": "less_than_equal", "input": "500", "ctx": {"le": 100}}]}))]
pub(crate) struct ValidationBody {
    pub detail: Vec<FieldError>,
}

/// Every error a handler can answer with.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ApiError {
    /// A client error with the contract's `{detail}` body.
    #[error("{status}: {detail}")]
    Client { status: StatusCode, detail: String, bearer_challenge: bool },
    /// Not now: the client should come back after `retry_after` seconds (`Retry-After`).
    #[error("{status}: {detail} (retry after {retry_after} s)")]
    Later { status: StatusCode, detail: String, retry_after: u64 },
    /// 422 with the validation array.
    #[error("validation failed: {0:?}")]
    Validation(Vec<FieldError>),
    /// Something on our side; logged, answered with a generic 500 or 503.
    #[error(transparent)]
    Internal(#[from] schema::Error),
    #[error(transparent)]
    Queue(#[from] queue::Error),
    #[error("{0}")]
    Other(String),
}

pub(crate) type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub(crate) fn client(status: StatusCode, detail: impl Into<String>) -> ApiError {
        ApiError::Client { status, detail: detail.into(), bearer_challenge: false }
    }

    pub(crate) fn bad_request(detail: impl Into<String>) -> ApiError {
        ApiError::client(StatusCode::BAD_REQUEST, detail)
    }

    /// 429 with `Retry-After: wait` (the throttles of anonymous callers).
    pub(crate) fn too_many_requests(detail: impl Into<String>, wait: u64) -> ApiError {
        ApiError::Later {
            status: StatusCode::TOO_MANY_REQUESTS,
            detail: detail.into(),
            retry_after: wait,
        }
    }

    pub(crate) fn not_found(detail: impl Into<String>) -> ApiError {
        ApiError::client(StatusCode::NOT_FOUND, detail)
    }

    pub(crate) fn forbidden(detail: impl Into<String>) -> ApiError {
        ApiError::client(StatusCode::FORBIDDEN, detail)
    }

    /// 401 without a challenge (API-key routes).
    pub(crate) fn unauthorized(detail: impl Into<String>) -> ApiError {
        ApiError::client(StatusCode::UNAUTHORIZED, detail)
    }

    /// 401 with `WWW-Authenticate: Bearer` (bearer-token routes).
    pub(crate) fn bearer_unauthorized(detail: impl Into<String>) -> ApiError {
        ApiError::Client {
            status: StatusCode::UNAUTHORIZED,
            detail: detail.into(),
            bearer_challenge: true,
        }
    }

    /// The contract's 404 for a user id that does not exist.
    pub(crate) fn user_not_found(id: UserId) -> ApiError {
        ApiError::not_found(format!("User with ID: {id} not found."))
    }

    /// The contract's 400 for a malformed UUID in a path.
    pub(crate) fn invalid_uuid() -> ApiError {
        ApiError::bad_request("Input should be a valid UUID")
    }

    pub(crate) fn validation(error: FieldError) -> ApiError {
        ApiError::Validation(vec![error])
    }
}

fn detail(status: StatusCode, detail: &str) -> Response {
    (status, axum::Json(json!({ "detail": detail }))).into_response()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            ApiError::Client { status, detail: text, bearer_challenge } => {
                let mut response = detail(status, &text);
                if bearer_challenge {
                    response
                        .headers_mut()
                        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                }
                response
            }
            ApiError::Later { status, detail: text, retry_after } => {
                let mut response = detail(status, &text);
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
                response
            }
            ApiError::Validation(errors) => {
                (StatusCode::UNPROCESSABLE_ENTITY, axum::Json(ValidationBody { detail: errors }))
                    .into_response()
            }
            ApiError::Internal(schema::Error::Conflict(what)) => detail(
                StatusCode::CONFLICT,
                &format!("{} already exists.", capitalise(&what.to_string())),
            ),
            // No connection, a connection cut (a restart), a deadlock: worth a retry, and said
            // so; the SDKs send the same data again on a 5xx.
            ApiError::Internal(err) if err.is_retriable() => {
                tracing::error!(error = %err, "database unavailable");
                let mut response =
                    detail(StatusCode::SERVICE_UNAVAILABLE, "Database unavailable, retry later");
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(1));
                response
            }
            ApiError::Internal(err) => {
                tracing::error!(error = %err, "request failed");
                detail(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error")
            }
            ApiError::Queue(err) => {
                tracing::error!(error = %err, "redis request failed");
                detail(StatusCode::SERVICE_UNAVAILABLE, "Queue unavailable, retry later")
            }
            ApiError::Other(err) => {
                tracing::error!(error = %err, "request failed");
                detail(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error")
            }
        }
    }
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The answer to a handler that panicked: 500 `{detail}`, the panic logged.
pub(crate) fn panic_response(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)");
    tracing::error!(panic = message, "a request handler panicked");
    detail(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error")
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;
    use tower_http::catch_panic::CatchPanicLayer;

    use super::*;

    #[tokio::test]
    async fn a_handler_that_panics_answers_500_in_the_contracts_shape() {
        async fn boom() -> &'static str {
            panic!("a bug")
        }
        let app = Router::new()
            .route("/boom", axum::routing::get(boom))
            .layer(CatchPanicLayer::custom(panic_response));
        let request = Request::get("/boom").body(Body::empty()).expect("request");
        let response = app.oneshot(request).await.expect("a response, not a dropped connection");
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(response.into_body(), 1024).await.unwrap_or_default();
        assert_eq!(&body[..], br#"{"detail":"Internal Server Error"}"#);
    }
}
