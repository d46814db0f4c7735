//! `GET /health`: whether the service can reach its database and Redis, checked for real, and
//! whether its audit trail is written.

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use schema::Edition;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(health))
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct HealthOut {
    /// `ok` when every dependency answers, else `degraded`.
    pub status: &'static str,
    pub version: &'static str,
    /// `ok` or `unavailable`.
    pub database: &'static str,
    /// `ok` or `unavailable`.
    pub redis: &'static str,
    /// The TimescaleDB edition: `apache` or `community`.
    pub timescaledb: &'static str,
    /// The audit trail: `ok`, `unwritable` (requests that need credentials are refused with
    /// 503 until it is written again) or `off` (`AUDIT_TRAIL=false`).
    pub audit: &'static str,
}

const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

fn state_of(ok: bool) -> &'static str {
    if ok { "ok" } else { "unavailable" }
}

#[utoipa::path(get, path = "/health", tag = "health",
    responses((status = 200, body = HealthOut), (status = 503, body = HealthOut)))]
async fn health(State(state): State<AppState>) -> (StatusCode, Json<HealthOut>) {
    let db =
        async { matches!(tokio::time::timeout(CHECK_TIMEOUT, state.db.ping()).await, Ok(Ok(()))) };
    let redis = state.guards.ping();
    let (db_ok, redis_ok) = tokio::join!(db, redis);
    let trail = state.trail.state();
    let healthy = db_ok && redis_ok && trail != crate::audit::TrailState::Unwritable;
    let body = HealthOut {
        status: if healthy { "ok" } else { "degraded" },
        version: env!("CARGO_PKG_VERSION"),
        database: state_of(db_ok),
        redis: state_of(redis_ok),
        timescaledb: match state.db.edition() {
            Edition::Apache => "apache",
            Edition::Community => "community",
        },
        audit: trail.as_str(),
    };
    let status = if healthy { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(body))
}
