//! The read routes (timeseries, events, summaries, scores, overview) on read replicas.
//!
//! [`route`] wraps those routes: a GET is handled against the replica [`schema::Reads`] picks
//! (one within `REPLICA_MAX_LAG`, else the primary), and the handler finds that database
//! through [`ReadState`]. When the replica's answer is a 5xx (it stopped, it cancelled the
//! query) or a 404 (a user created a moment ago, not replayed yet), the same request is
//! answered by the primary instead, so a replica going away costs no failed request and a
//! read right after a write finds what was written. Other methods (deletes) stay on the
//! primary.

use axum::Extension;
use axum::body::Body;
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use tokio_util::sync::CancellationToken;

use crate::AppState;

/// The database a read route's handler asks, put on the request by [`route`].
#[derive(Clone)]
struct ReadDb(schema::Db);

/// The service's state with `db` being the database this read goes to: what a read route's
/// handler takes instead of `State<AppState>`.
pub(crate) struct ReadState(pub AppState);

impl FromRequestParts<AppState> for ReadState {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let mut state = state.clone();
        if let Some(ReadDb(db)) = parts.extensions.get::<ReadDb>() {
            state.db = db.clone();
        }
        Ok(ReadState(state))
    }
}

/// The middleware of the read routes (see the module's doc). The router carries the
/// [`schema::Reads`] as an extension, since these routes are laid out before the state exists.
pub(crate) async fn route(
    Extension(reads): Extension<schema::Reads>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::GET || !reads.has_replicas() {
        return next.run(request).await;
    }
    let target = reads.pick();
    if !target.is_replica() {
        metrics::counter!("wearhouse_reads_total", "database" => "primary").increment(1);
        return next.run(request).await;
    }
    // A GET's body is not read by these routes; the request can be made again from its head.
    let (parts, _) = request.into_parts();
    let mut on_replica = Request::from_parts(parts.clone(), Body::empty());
    on_replica.extensions_mut().insert(ReadDb(target.db.clone()));
    let response = next.clone().run(on_replica).await;
    let status = response.status();
    if !status.is_server_error() && status != StatusCode::NOT_FOUND {
        metrics::counter!("wearhouse_reads_total", "database" => "replica").increment(1);
        return response;
    }
    if status.is_server_error() {
        reads.failed(&target);
    }
    metrics::counter!("wearhouse_reads_total", "database" => "primary_after_replica").increment(1);
    next.run(Request::from_parts(parts, Body::empty())).await
}

/// Probes the replicas every [`schema::replicas::PROBE_EVERY`] until `shutdown` (nothing when there are none).
pub(crate) fn watch(reads: schema::Reads, shutdown: CancellationToken) {
    if !reads.has_replicas() {
        return;
    }
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(schema::replicas::PROBE_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tick.tick() => reads.probe().await,
            }
        }
    });
}
