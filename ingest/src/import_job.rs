//! A worker's side of an export import: claim the import, stream the object from storage,
//! run the import, record the outcome. A heartbeat shows other workers that a long import is
//! alive; an import whose heartbeat stops is taken over (and, being idempotent, redone).

use std::time::Duration;

use schema::Db;
use tokio_util::io::SyncIoBridge;
use uuid::Uuid;

use crate::import::{ImportTarget, run_import};
use crate::jobs::JobQueue;
use crate::process;
use crate::storage::{Storage, StorageError};

/// An import without a heartbeat for this long is taken to have lost its worker.
pub const STALE_AFTER: Duration = Duration::from_secs(120);
const HEARTBEAT: Duration = Duration::from_secs(15);
const MAX_ATTEMPTS: i32 = 3;

/// Runs one import job; returns whether to acknowledge it.
pub async fn handle(
    db: &Db,
    queue: &JobQueue,
    storage: Option<&Storage>,
    events: bool,
    id: Uuid,
) -> bool {
    let Some(storage) = storage else {
        // Another worker, configured with storage, may take it.
        tracing::warn!(import_id = %id, "an import job arrived but object storage is not configured");
        return false;
    };
    let import = match schema::imports::claim(db, id, STALE_AFTER).await {
        Ok(Some(i)) => i,
        // Done, failed, gone, or alive in another worker.
        Ok(None) => return true,
        Err(e) => {
            tracing::warn!(import_id = %id, error = %e, "claiming an import failed");
            return false;
        }
    };
    let (body, _) = match storage.get(&import.object_key).await {
        Ok(b) => b,
        Err(StorageError::NoSuchKey) => {
            let _ = schema::imports::set_status(
                db,
                id,
                "failed",
                Some("the uploaded object does not exist"),
            )
            .await;
            return true;
        }
        Err(e) => {
            tracing::warn!(import_id = %id, error = %e, "reading the upload failed; retrying later");
            let _ = schema::imports::set_status(db, id, "queued", Some(&e.to_string())).await;
            return true;
        }
    };
    let beat = {
        let db = db.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(HEARTBEAT).await;
                let _ = schema::imports::heartbeat(&db, id).await;
            }
        })
    };
    let reader = SyncIoBridge::new(body.into_async_read());
    let target = ImportTarget { user_id: import.user_id, run_id: id, events };
    let done = run_import(db, target, Box::new(reader), |_| {}).await;
    beat.abort();
    let (status, error) = match &done.error {
        None => ("done", None),
        Some(e) if e.is_retriable() && import.attempts < MAX_ATTEMPTS => {
            ("queued", Some(e.to_string()))
        }
        Some(e) => ("failed", Some(e.to_string())),
    };
    if let Err(e) = schema::imports::set_status(db, id, status, error.as_deref()).await {
        tracing::warn!(import_id = %id, error = %e, "recording the import's outcome failed");
    }
    tracing::info!(import_id = %id, status, records = done.progress.records, "import finished");
    if status != "queued"
        && let Some(run) = &done.run
    {
        queue.publish_sync(run.user_id, &process::status_event(run)).await;
    }
    true
}
