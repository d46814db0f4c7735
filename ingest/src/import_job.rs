//! A worker's side of an export import: claim the import, stream the object from storage,
//! run the import, settle the outcome. A heartbeat shows other workers that a long import is
//! alive; an import whose heartbeat stops is taken over (and, being idempotent, redone).

use std::io::Read;
use std::time::Duration;

use schema::ids::ImportId;
use schema::imports::{Claim, Import, Settled};
use schema::{Db, Reads};
use tokio_util::io::SyncIoBridge;

use crate::import::{ImportError, ImportTarget, Imported, run_import};
use crate::jobs::JobQueue;
use crate::object_store::{Storage, StorageError};
use crate::process;

/// An import without a heartbeat for this long is taken to have lost its worker.
pub const STALE_AFTER: Duration = Duration::from_secs(120);

/// How often a running import says it is alive: often enough that `stale_after` without a
/// word means its worker died.
pub fn heartbeat_for(stale_after: Duration) -> Duration {
    stale_after / 8
}
/// Attempts at an import: it stops on errors a retry could get past, or its worker stops
/// (killed, out of memory) without settling it.
pub const MAX_ATTEMPTS: i32 = 3;

/// Runs one import job; returns whether to acknowledge it.
pub async fn handle(
    db: &Db,
    api: &Reads,
    queue: &JobQueue,
    storage: Option<&Storage>,
    outbox: bool,
    id: ImportId,
    stale_after: Duration,
) -> bool {
    let Some(storage) = storage else {
        // Another worker, configured with storage, may take it.
        tracing::warn!(import_id = %id, "an import job arrived but object storage is not configured");
        return false;
    };
    let import = match schema::imports::claim(db, id, stale_after, MAX_ATTEMPTS).await {
        Ok(Claim::Claimed(i)) => i,
        Ok(Claim::Parked(run)) => {
            tracing::warn!(import_id = %id, "an import that kept stopping its worker is failed");
            queue.publish_sync(run.user_id, &process::status_event(&run)).await;
            return true;
        }
        Ok(Claim::Nothing) => return true,
        Err(e) => {
            tracing::warn!(import_id = %id, error = %e, "claiming an import failed");
            return false;
        }
    };
    let body = match storage.get(&import.object_key).await {
        Ok((body, _)) => Ok(Box::new(SyncIoBridge::new(body.into_async_read())) as Input),
        Err(StorageError::NoSuchKey) => Err(ImportError::ObjectMissing),
        Err(e) => Err(ImportError::Storage(e.to_string())),
    };
    if let Some(run) = run_claimed(db, api, &import, body, outbox, heartbeat_for(stale_after)).await
    {
        queue.publish_sync(run.user_id, &process::status_event(&run)).await;
    }
    true
}

/// An export's bytes, read on a blocking thread.
pub type Input = Box<dyn Read + Send>;

/// Runs a claimed import on `input` (or on the error opening it) and settles it: done, failed,
/// or queued again; it yields to the API's reads on `api`. Returns the run when it is final.
pub async fn run_claimed(
    db: &Db,
    api: &Reads,
    import: &Import,
    input: Result<Input, ImportError>,
    outbox: bool,
    heartbeat: Duration,
) -> Option<schema::sync_runs::SyncRun> {
    let id = import.id;
    let target = ImportTarget { user_id: import.user_id, run_id: id.0, outbox };
    let done = match input {
        Ok(reader) => {
            let beat = {
                let db = db.clone();
                tokio::spawn(async move {
                    loop {
                        tokio::time::sleep(heartbeat).await;
                        let _ = schema::imports::heartbeat(&db, id).await;
                    }
                })
            };
            let done = run_import(db, api, target, reader, |_| {}).await;
            beat.abort();
            done
        }
        Err(e) => Imported::stopped(e),
    };
    let settled = match retry_error(&done, import.attempts) {
        Some(error) => Settled::Retry { error },
        None => Settled::Finished(Box::new(done.run_report())),
    };
    let status = settled.status();
    tracing::info!(import_id = %id, ?status, records = done.progress.records, "import stopped");
    match schema::imports::settle(db, id, import.user_id, &settled).await {
        Ok(run) => run,
        Err(e) => {
            // The import stays `processing`; without a heartbeat it is taken over and redone.
            tracing::warn!(import_id = %id, error = %e, "recording the import's outcome failed");
            None
        }
    }
}

/// The one retry rule: an import that stopped on an error a later attempt can get past is
/// queued again (with that error) until it has had `MAX_ATTEMPTS`; `None`: it is final.
fn retry_error(done: &Imported, attempts: i32) -> Option<String> {
    done.error
        .as_ref()
        .filter(|e| e.is_retriable() && attempts < MAX_ATTEMPTS)
        .map(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_retriable_errors_are_retried_and_only_a_few_times() {
        let stopped = |e| Imported::stopped(e);
        let io = || ImportError::Storage("connection reset".into());
        assert_eq!(
            retry_error(&stopped(io()), 1).as_deref(),
            Some("reading the upload: connection reset")
        );
        assert!(retry_error(&stopped(io()), MAX_ATTEMPTS - 1).is_some());
        assert_eq!(retry_error(&stopped(io()), MAX_ATTEMPTS), None);
        assert_eq!(retry_error(&stopped(ImportError::ObjectMissing), 1), None);
        assert_eq!(retry_error(&stopped(ImportError::UserGone), 1), None);
        let mut fine = stopped(io());
        fine.error = None;
        assert_eq!(retry_error(&fine, 1), None);
    }
}
