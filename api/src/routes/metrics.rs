//! `GET /metrics`: Prometheus text format. Counters are this process's; the queue gauges are
//! read from PostgreSQL at scrape time (at most once per 5 s), so they hold for the whole
//! deployment.

use std::sync::OnceLock;

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::IntoResponse;
use axum::response::Response;
use chrono::Utc;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(metrics))
}

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Installs the process-wide recorder (once); `None` when another recorder is installed.
pub(crate) fn recorder() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            // Quantiles over the last 30 seconds (three rolling 10 s buckets).
            let handle = PrometheusBuilder::new()
                .set_bucket_duration(std::time::Duration::from_secs(10))
                .ok()?
                .install_recorder()
                .ok()?;
            describe();
            Some(handle)
        })
        .as_ref()
}

/// Installs the recorder and drains its histograms every 5 s while the runtime runs. Installed
/// with `install_recorder`, it keeps every observation until upkeep or a scrape: with nobody
/// scraping, the soak saw RSS creep by ~17 bytes a request.
pub(crate) fn start() {
    if let Some(handle) = recorder() {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(std::time::Duration::from_secs(5));
            loop {
                tick.tick().await;
                handle.run_upkeep();
            }
        });
    }
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
    metrics::describe_histogram!(
        "wearhouse_http_request_duration_seconds",
        metrics::Unit::Seconds,
        "Time from a request's arrival to its response, by route (quantiles of the last 30 s)"
    );
    metrics::describe_histogram!(
        "wearhouse_db_pool_wait_seconds",
        metrics::Unit::Seconds,
        "Time a task waited for a database connection from the pool (quantiles of the last 30 s)"
    );
    metrics::describe_gauge!(
        "wearhouse_queue_oldest_age_seconds",
        "Age of the oldest unprocessed batch"
    );
    metrics::describe_gauge!(
        "wearhouse_seal_oldest_unsealed_day_age_seconds",
        "Age of the start of the oldest UTC day of samples still stored as rows (the sealer's \
         backlog: it stays near SEAL_AFTER_HOURS plus a day when the sealer keeps up)"
    );
    metrics::describe_counter!("wearhouse_days_sealed_total", "Days of samples sealed into blocks");
    metrics::describe_counter!("wearhouse_samples_sealed_total", "Samples sealed into blocks");
    metrics::describe_counter!(
        "wearhouse_sessions_sealed_total",
        "Sleep sessions and workouts sealed into their months' blocks"
    );
}

/// Middleware: the server-side duration of every routed request, by method and route pattern
/// (never the raw path, which would make one series per user).
pub(crate) async fn track(request: Request, next: Next) -> Response {
    let route = request.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string());
    let method = request.method().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    if let Some(route) = route {
        metrics::histogram!("wearhouse_http_request_duration_seconds", "method" => method, "route" => route)
            .record(started.elapsed().as_secs_f64());
    }
    response
}

/// How long the queue gauges hold: `/metrics` is open to anyone who can reach it, so a flood
/// of scrapes costs one query per interval, not one each.
const GAUGES_TTL: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether this scrape is the one to refresh the gauges (at most one per `GAUGES_TTL`).
fn gauges_due() -> bool {
    static LAST: std::sync::Mutex<Option<Instant>> = std::sync::Mutex::new(None);
    let Ok(mut last) = LAST.lock() else { return false };
    if last.is_some_and(|t| t.elapsed() < GAUGES_TTL) {
        return false;
    }
    *last = Some(Instant::now());
    true
}

/// Seconds since `t` (none, or a time ahead: 0).
fn age_seconds(t: Option<chrono::DateTime<Utc>>) -> f64 {
    t.map(|t| (Utc::now() - t).num_milliseconds() as f64 / 1000.0).unwrap_or(0.0).max(0.0)
}

/// Renders every metric, after refreshing the queue gauges when they are due.
pub(crate) async fn render(db: &schema::Db) -> String {
    if gauges_due() {
        metrics::counter!("wearhouse_metrics_gauge_refreshes_total").increment(1);
        if let Ok((depth, oldest)) = schema::sdk_batches::backlog(db).await {
            metrics::gauge!("wearhouse_queue_depth").set(depth as f64);
            metrics::gauge!("wearhouse_queue_oldest_age_seconds").set(age_seconds(oldest));
        }
        if let Ok(oldest) = schema::blocks::store::oldest_unsealed(db).await {
            metrics::gauge!("wearhouse_seal_oldest_unsealed_day_age_seconds")
                .set(age_seconds(oldest));
        }
    }
    recorder()
        .map(|h| {
            h.run_upkeep();
            h.render()
        })
        .unwrap_or_default()
}

#[utoipa::path(get, path = "/metrics", tag = "health",
    responses((status = 200, content_type = "text/plain", description = "Prometheus metrics")))]
async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], render(&state.db).await)
}
