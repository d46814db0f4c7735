//! Provider icons, referenced by the relative `icon_url` of providers and connections.

use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/static/provider-icons/{file}", get(icon))
}

const PHONEHEALTH_SVG: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64"><rect width="64" height="64" rx="14" fill="#fff"/><path d="M32 52 C10 38 8 24 16 17 c6-5 13-3 16 3 c3-6 10-8 16-3 c8 7 6 21-16 35z" fill="#ff2d55"/></svg>"##;

async fn icon(Path(file): Path<String>) -> Response {
    match file.as_str() {
        "phonehealth.svg" => {
            ([(header::CONTENT_TYPE, "image/svg+xml")], PHONEHEALTH_SVG).into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}
