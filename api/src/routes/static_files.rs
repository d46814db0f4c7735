//! Provider icons, referenced by the relative `icon_url` of providers and connections.

use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::AppState;

pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/static/provider-icons/{file}", get(icon))
}

const PHONEHEALTH_SVG: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64"><rect width="64" height="64" rx="14" fill="#fff"/><path d="M32 52 C10 38 8 24 16 17 c6-5 13-3 16 3 c3-6 10-8 16-3 c8 7 6 21-16 35z" fill="#ff2d55"/></svg>"##;

/// A provider's mark: its initial on a tile (vendors' own logos are their trademarks, and are
/// not shipped).
fn tile(name: &str) -> String {
    let initial: String = name.chars().take(1).flat_map(char::to_uppercase).collect();
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64"><rect width="64" height="64" rx="14" fill="#1f2937"/><text x="32" y="43" font-family="sans-serif" font-size="32" font-weight="700" text-anchor="middle" fill="#fff">{initial}</text></svg>"##
    )
}

async fn icon(Path(file): Path<String>) -> Response {
    let svg = |body: String| ([(header::CONTENT_TYPE, "image/svg+xml")], body).into_response();
    match file.strip_suffix(".svg") {
        Some("phonehealth") => svg(PHONEHEALTH_SVG.to_string()),
        Some(slug) => match vendors::provider(slug) {
            Some(p) => svg(tile(p.name)),
            None => StatusCode::NOT_FOUND.into_response(),
        },
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
