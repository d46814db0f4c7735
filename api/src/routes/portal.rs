//! The developer portal (`portal/`), served by the service itself at `/`: its assets are built
//! by `scripts/portal.sh` and embedded in the binary (`rust-embed`), so a deployment is one
//! file. The portal talks only to the public API. Its pages are routed in the browser (`#/…`),
//! so the server has two things to answer: `/` and `/assets/…`. The bundle's other page is the
//! connect page an end user opens from a connect link (`/connect/{token}`, no login); the page
//! reads its token from its URL and asks `/api/v1/connect/{token}`.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rust_embed::RustEmbed;

use crate::AppState;

#[derive(RustEmbed)]
#[folder = "$PORTAL_DIST"]
struct Assets;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(index))
        .route("/connect/{token}", get(connect_page))
        .route("/assets/{*file}", get(asset))
}

/// Pages load nothing from any other host: requests go to this service, and uploads to the
/// object store the API hands out URLs of (`connect-src` names its origin).
fn security_headers(mut response: Response, storage: Option<&str>) -> Response {
    let h = response.headers_mut();
    let csp = format!(
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; \
         connect-src 'self' {}; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        storage.unwrap_or_default()
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

fn file(path: &str, state: &AppState) -> Response {
    let Some(asset) = Assets::get(path) else { return StatusCode::NOT_FOUND.into_response() };
    let mime = asset.metadata.mimetype().to_string();
    // Pages are always asked again; assets carry their content hash in the query.
    let cache = if path.ends_with(".html") { "no-cache" } else { "public, max-age=3600" };
    let response =
        ([(header::CONTENT_TYPE, mime), (header::CACHE_CONTROL, cache.to_string())], asset.data)
            .into_response();
    let storage = state.storage.as_ref().and_then(|s| s.public_origin());
    security_headers(response, storage.as_deref())
}

async fn index(State(state): State<AppState>) -> Response {
    file("index.html", &state)
}

/// The same page for every token: what it shows comes from the API. Never indexed, and its URL
/// (the token) is not sent on as a referrer (`security_headers`).
async fn connect_page(State(state): State<AppState>) -> Response {
    let mut response = file("connect.html", &state);
    response.headers_mut().insert("x-robots-tag", HeaderValue::from_static("noindex"));
    response
}

async fn asset(State(state): State<AppState>, Path(path): Path<String>) -> Response {
    file(&format!("assets/{path}"), &state)
}
