//! `GET /api/v1/developer/overview`: what the deployment is doing, for the portal's first page
//! (no Prometheus needed in a browser).

use axum::Json;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::DeveloperAuth;
use crate::read_routing::ReadState;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(overview))
        .route_layer(axum::middleware::from_fn(crate::read_routing::route))
}

/// The latest runs shown.
const RECENT_RUNS: i64 = 20;
/// The users with the most bytes stored shown.
const LARGEST_USERS: i64 = 20;

/// Work waiting (SDK batches, imports, vendor pulls, webhook deliveries), what runs stored in
/// the last hour, delivery attempts that failed in the last 24 hours, the latest runs, and
/// storage: each table's bytes and bytes a sample, and the users with the most bytes (each
/// user's figures measured at most a day ago).
#[utoipa::path(get, path = "/developer/overview", tag = "developer",
    responses((status = 200, body = Object, description = "The overview"),
              (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
async fn overview(
    _dev: DeveloperAuth,
    ReadState(state): ReadState,
) -> ApiResult<Json<schema::overview::Overview>> {
    Ok(Json(schema::overview::overview(&state.db, RECENT_RUNS, LARGEST_USERS).await?))
}
