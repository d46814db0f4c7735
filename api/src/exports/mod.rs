//! Exports of a user's whole record, for data-portability and right-of-access requests: one zip
//! in object storage, under the user's prefix (deleted with the user), made by a worker
//! (`ingest::worker::ExportHandler`) and downloaded through a presigned URL until it expires.
//!
//! The archive, in the API's own shapes (`records`): `user.json`, `connections.json`,
//! `sources.json`, then `samples.jsonl` (every sample, every source, as raw timeseries pages give
//! them), `workouts.jsonl`, `routes.jsonl`, `sleep.jsonl`, `cycles.jsonl` (every session, no
//! priority filtering: the record is what is held), `fhir.ndjson` (FHIR R4, `fhir`) and
//! `manifest.json` (what it holds). Written as a stream (`archive`): memory stays bounded
//! whatever the user's size.

mod archive;
mod fhir;
mod records;

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use ingest::jobs::JobQueue;
use ingest::object_store::{Storage, StorageError};
use schema::Db;
use schema::exports::{Claim, Export, ExportCounts, ExportStatus, Queued, Settled};
use schema::ids::ExportId;
use schema::ids::UserId;

use crate::AppState;
use crate::error::{ApiError, ApiResult};

/// Attempts at an export before it is failed.
const MAX_ATTEMPTS: i32 = 3;
/// Expired exports deleted a sweep.
const EXPIRED_A_SWEEP: i64 = 100;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportError {
    #[error(transparent)]
    Db(#[from] schema::Error),
    #[error("object storage: {0}")]
    Storage(#[from] StorageError),
    #[error("writing the archive: {0}")]
    Archive(String),
    #[error("the user no longer exists")]
    UserGone,
}

impl ExportError {
    /// Whether a later attempt can get past it.
    fn is_retriable(&self) -> bool {
        match self {
            ExportError::Db(e) => e.is_retriable(),
            ExportError::Storage(_) | ExportError::Archive(_) => true,
            ExportError::UserGone => false,
        }
    }
}

/// The key of an export's archive: under the user's prefix, so that deleting the user empties
/// it with their other objects.
pub(crate) fn object_key(export: &Export) -> String {
    format!("{}exports/{}.zip", schema::users::object_prefix(export.user_id), export.id)
}

fn storage(state: &AppState) -> ApiResult<&Storage> {
    state.storage.as_ref().ok_or_else(|| {
        ApiError::client(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "Exports need object storage, which is not configured",
        )
    })
}

/// Queues an export of a user's record and announces it to the workers (the sweeper does, should
/// Redis not answer).
pub(crate) async fn ask(state: &AppState, user: UserId) -> ApiResult<Queued> {
    storage(state)?;
    let queued = schema::exports::queue(&state.db, user, state.config.export_retention).await?;
    if let Queued::Export(e) = &queued
        && let Err(err) = state.queue.announce(&[e.id]).await
    {
        tracing::warn!(error = %err, export_id = %e.id, "could not announce an export; the sweeper will");
    }
    Ok(queued)
}

/// A download URL for a done export, valid `valid_for` (never past its expiry), and until when.
pub(crate) async fn download(
    state: &AppState,
    export: &Export,
    valid_for: Duration,
) -> ApiResult<Option<(String, chrono::DateTime<chrono::Utc>)>> {
    let (ExportStatus::Done, Some(key)) = (export.status, export.object_key.as_deref()) else {
        return Ok(None);
    };
    let now = chrono::Utc::now();
    let until =
        export.expires_at.min(now + chrono::Duration::from_std(valid_for).unwrap_or_default());
    let Ok(left) = (until - now).to_std() else { return Ok(None) };
    let name = format!("wearhouse-export-{}.zip", export.user_id);
    let url = storage(state)?.presigned_get(key, &name, left).await.map_err(|e| {
        tracing::warn!(error = %e, "presigning an export's download failed");
        ApiError::client(axum::http::StatusCode::BAD_GATEWAY, "Object storage failed; retry later")
    })?;
    Ok(Some((url, until)))
}

/// Makes exports for the worker.
#[derive(Clone)]
pub struct Exporter {
    db: Db,
    storage: Storage,
    queue: JobQueue,
    /// An export without a heartbeat for this long lost its worker and is taken over, as an
    /// import is (`WorkerConfig::import_stale_after`); it beats at the same rate.
    stale_after: Duration,
    /// How long a queued export may wait unannounced before the sweeper announces it again.
    sweep_grace: Duration,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Exporter")
    }
}

impl Exporter {
    /// `stale_after` and `sweep_grace` as the worker's for imports and pulls.
    pub fn new(
        db: Db,
        storage: Storage,
        queue: JobQueue,
        stale_after: Duration,
        sweep_grace: Duration,
    ) -> Exporter {
        Exporter { db, storage, queue, stale_after, sweep_grace }
    }

    /// Makes one export: claim, write, settle; whether its job is settled.
    async fn run_one(&self, id: ExportId) -> bool {
        let export =
            match schema::exports::claim(&self.db, id, self.stale_after, MAX_ATTEMPTS).await {
                Ok(Claim::Claimed(e)) => e,
                Ok(Claim::Parked(run)) => {
                    self.publish(&run).await;
                    return true;
                }
                Ok(Claim::Nothing) => return true,
                Err(e) => {
                    tracing::warn!(export_id = %id, error = %e, "claiming an export failed");
                    return false;
                }
            };
        let started_at = chrono::Utc::now();
        let counts = Arc::new(std::sync::Mutex::new(ExportCounts::default()));
        let beat = {
            let (db, export, counts, queue) =
                (self.db.clone(), export.clone(), counts.clone(), self.queue.clone());
            let every = ingest::import_job::heartbeat_for(self.stale_after);
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    let so_far = counts.lock().map(|c| *c).unwrap_or_default();
                    if let Ok(run) = schema::exports::heartbeat(&db, &export, &so_far).await {
                        queue.publish_sync(run.user_id, &ingest::process::status_event(&run)).await;
                    }
                }
            })
        };
        let key = object_key(&export);
        let made = records::write(&self.db, &self.storage, &export, &key, &counts).await;
        beat.abort();
        // The user deleted meanwhile (their export with them): an archive written after their
        // objects were emptied would be left behind.
        if matches!(schema::exports::get(&self.db, export.user_id, id).await, Ok(None)) {
            if let Err(e) = self.storage.delete(&key).await {
                tracing::warn!(export_id = %id, error = %e, "deleting a deleted user's export failed");
            }
            return true;
        }
        let settled = match made {
            Ok((bytes, counts)) => Settled::Done {
                object_key: key,
                bytes: i64::try_from(bytes).unwrap_or(i64::MAX),
                counts,
                started_at,
            },
            Err(e) if e.is_retriable() && export.attempts < MAX_ATTEMPTS => {
                Settled::Retry { error: e.to_string() }
            }
            Err(e) => Settled::Failed { error: e.to_string() },
        };
        tracing::info!(export_id = %id, outcome = ?settled, "export stopped");
        match schema::exports::settle(&self.db, &export, &settled).await {
            Ok(Some(run)) => self.publish(&run).await,
            Ok(None) => {}
            Err(e) => {
                // Left `processing`: without a heartbeat it is taken over and made again.
                tracing::warn!(export_id = %id, error = %e, "recording an export's outcome failed");
            }
        }
        true
    }

    async fn publish(&self, run: &schema::sync_runs::SyncRun) {
        self.queue.publish_sync(run.user_id, &ingest::process::status_event(run)).await;
    }

    /// Deletes expired exports (the archive, then the row); the waiting ones to announce again.
    async fn sweep_once(&self) -> Vec<ExportId> {
        match schema::exports::expired(&self.db, EXPIRED_A_SWEEP).await {
            Ok(expired) => {
                for (id, key) in expired {
                    if let Some(key) = key
                        && let Err(e) = self.storage.delete(&key).await
                    {
                        tracing::warn!(export_id = %id, error = %e, "deleting an expired export failed");
                        continue;
                    }
                    if let Err(e) = schema::exports::forget(&self.db, id).await {
                        tracing::warn!(export_id = %id, error = %e, "forgetting an expired export failed");
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "finding expired exports failed"),
        }
        let (grace, stale) = (self.sweep_grace, self.stale_after);
        schema::exports::take_unannounced(&self.db, grace, stale, 100).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "finding waiting exports failed");
            Vec::new()
        })
    }
}

impl ingest::worker::ExportHandler for Exporter {
    fn run(&self, id: ExportId) -> BoxFuture<'_, bool> {
        self.run_one(id).boxed()
    }

    fn sweep(&self) -> BoxFuture<'_, Vec<ExportId>> {
        self.sweep_once().boxed()
    }
}
