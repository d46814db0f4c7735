//! The background worker: the process that turns accepted jobs into stored data.

use tokio_util::sync::CancellationToken;

/// Runs the worker until `shutdown` is cancelled.
pub async fn run(db: schema::Db, shutdown: CancellationToken) {
    tracing::info!(edition = ?db.edition(), "worker started");
    shutdown.cancelled().await;
    tracing::info!("worker stopped");
}
