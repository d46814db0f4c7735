//! `GET /metrics`: Prometheus text format. Counters are this process's; the queue gauges are
//! read from PostgreSQL at scrape time, so they hold for the whole deployment.

use std::sync::OnceLock;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use chrono::Utc;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(metrics))
}

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Installs the process-wide recorder (once); `None` when another recorder is installed.
pub fn recorder() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let handle = PrometheusBuilder::new().install_recorder().ok()?;
            describe();
            Some(handle)
        })
        .as_ref()
}

fn describe() {
    metrics::describe_counter!(
        "wearhouse_batches_accepted_total",
        "SDK sync batches accepted (202)"
    );
    metrics::describe_counter!(
        "wearhouse_batches_processed_total",
        "SDK sync batches processed, by outcome"
    );
    metrics::describe_counter!("wearhouse_samples_stored_total", "Samples inserted or updated");
    metrics::describe_counter!(
        "wearhouse_items_dropped_total",
        "Items dropped by the pipeline, by reason"
    );
    metrics::describe_gauge!("wearhouse_queue_depth", "Batches accepted and not yet processed");
    metrics::describe_gauge!(
        "wearhouse_queue_oldest_age_seconds",
        "Age of the oldest unprocessed batch"
    );
}

/// Renders every metric, after refreshing the queue gauges.
pub async fn render(db: &schema::Db) -> String {
    if let Ok((depth, oldest)) = schema::sdk_batches::backlog(db).await {
        metrics::gauge!("wearhouse_queue_depth").set(depth as f64);
        let age =
            oldest.map(|t| (Utc::now() - t).num_milliseconds() as f64 / 1000.0).unwrap_or(0.0);
        metrics::gauge!("wearhouse_queue_oldest_age_seconds").set(age.max(0.0));
    }
    recorder().map(PrometheusHandle::render).unwrap_or_default()
}

#[utoipa::path(get, path = "/metrics", tag = "health",
    responses((status = 200, content_type = "text/plain", description = "Prometheus metrics")))]
async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], render(&state.db).await)
}
