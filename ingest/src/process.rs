//! Processing one stored SDK batch: decompress, parse and normalise (off the async threads),
//! then write everything in one transaction that also marks the batch done and records its
//! sync run. A batch is processed at most once: its row is locked (skip-locked) and its status
//! checked inside that transaction.

use chrono::Utc;
use schema::Db;
use schema::ids::BatchId;
use schema::ids::UserId;
use schema::sdk_batches::BatchStatus;
use schema::sync_runs::{Finish, RunCounts, RunStatus, SyncRun};
use serde_json::json;
use uuid::Uuid;

use crate::batch::Normalised;
use crate::sdk::{self, EnvelopeError};
use crate::store::{self, Target, Written};

#[derive(Debug)]
pub enum Processed {
    /// Stored now; the run as recorded.
    Done(SyncRun),
    /// The envelope could not be read: the batch is marked failed.
    Failed(SyncRun),
    /// Already processed (or failed) earlier.
    AlreadyDone,
    /// Another worker holds it right now.
    Busy,
    /// The batch (or its user) no longer exists.
    Missing,
}

impl From<deadpool_postgres::tokio_postgres::Error> for ProcessError {
    fn from(e: deadpool_postgres::tokio_postgres::Error) -> Self {
        ProcessError::Db(e.into())
    }
}

impl ProcessError {
    /// Whether a later attempt can succeed (see `schema::Error::is_retriable`).
    pub fn is_retriable(&self) -> bool {
        match self {
            ProcessError::Db(e) => e.is_retriable(),
            ProcessError::Body(_) => false,
            ProcessError::Join(_) => true,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error(transparent)]
    Db(#[from] schema::Error),
    #[error("reading the stored body: {0}")]
    Body(std::io::Error),
    #[error("the parser stopped: {0}")]
    Join(#[from] tokio::task::JoinError),
}

/// Options of a run.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Write outbox events.
    pub outbox: bool,
    /// Process even when the batch is already done (reprocessing).
    pub force: bool,
}

/// Decompresses and normalises a stored body.
pub fn decode(compressed: &[u8]) -> Result<Result<Normalised, EnvelopeError>, std::io::Error> {
    let mut body = sdk::PaddedJson::new(decompress(compressed)?);
    Ok(sdk::normalise_padded(&mut body))
}

/// Bodies the frame says are larger than this are decoded as a stream (no body accepted is; the
/// frame's figure is trusted only this far).
const DECODE_WHOLE_UP_TO: u64 = 256 << 20;

/// A stored body, decompressed. The accept path's compressor wrote the body's size into the
/// frame: the body is decoded straight into a vector of that size with room for the parser's
/// padding (no growing, no zeroing, no padded copy).
fn decompress(compressed: &[u8]) -> Result<Vec<u8>, std::io::Error> {
    match zstd::zstd_safe::get_frame_content_size(compressed) {
        Ok(Some(n)) if n <= DECODE_WHOLE_UP_TO => {
            let mut body = Vec::with_capacity(sdk::PaddedJson::capacity_for(n as usize));
            match zstd::bulk::Decompressor::new()?.decompress_to_buffer(compressed, &mut body) {
                Ok(_) => Ok(body),
                // Not one frame of that size after all (several frames, say): as a stream.
                Err(_) => zstd::decode_all(compressed),
            }
        }
        _ => zstd::decode_all(compressed),
    }
}

pub async fn process_sdk_batch(
    db: &Db,
    batch_id: BatchId,
    opts: Options,
) -> Result<Processed, ProcessError> {
    let started_at = Utc::now();
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let Some(batch) = schema::sdk_batches::lock(&tx, batch_id).await? else {
        // Gone, or another worker holds it.
        return Ok(Processed::Busy);
    };
    if batch.status != BatchStatus::Queued && !opts.force {
        return Ok(Processed::AlreadyDone);
    }
    // One writer per user at a time: rollups and sleep merges stay consistent.
    let lock = schema::users::WriterLock::Exclusive;
    let Some(last_offset) = schema::users::lock_for_writing(&tx, batch.user_id, lock).await? else {
        return Ok(Processed::Missing);
    };
    // Small bodies are decoded right here; large ones off the async threads.
    let parsed = if batch.body.len() < 64 * 1024 {
        decode(&batch.body)
    } else {
        let body = batch.body.clone();
        tokio::task::spawn_blocking(move || decode(&body)).await?
    }
    .map_err(ProcessError::Body)?;

    let n = match parsed {
        Ok(n) => n,
        Err(e) => {
            let finish = Finish {
                status: RunStatus::Failed,
                message: format!("{} batch failed", batch.provider),
                counts: None,
                dropped: json!({}),
                error: Some(e.to_string()),
                started_at,
            };
            let run =
                schema::sdk_batches::complete(&tx, &batch, &batch.provider, None, &finish).await?;
            tx.commit().await?;
            return Ok(Processed::Failed(run));
        }
    };

    let latest_offset = n.latest_offset.offset();
    let target = Target {
        user_id: batch.user_id,
        // The samples' lineage: the batch's id.
        batch_id: batch_id.0,
        default_offset: latest_offset.or(last_offset),
        outbox: opts.outbox,
        link: schema::data_sources::Link::Push,
    };
    let written = store::write(&tx, target, &n).await?;
    let finish = Finish {
        status: RunStatus::completed(n.report.problem_count()),
        message: format!("{} batch saved{}", n.provider, n.report.said()),
        counts: Some(store::run_counts(&n.report, &written)),
        dropped: n.report.dropped_json(),
        error: None,
        started_at,
    };
    let run =
        schema::sdk_batches::complete(&tx, &batch, n.provider, latest_offset, &finish).await?;
    tx.commit().await?;
    record_metrics(&n, &written);
    Ok(Processed::Done(run))
}

/// Writes a batch normalised elsewhere (a cloud vendor's pull) in the caller's transaction,
/// as an SDK batch is written: the user locked while it is, samples without an offset at the
/// user's latest. Returns what was written and the run's counts.
pub async fn write_pulled(
    tx: &deadpool_postgres::Transaction<'_>,
    user_id: UserId,
    run_id: Uuid,
    n: &Normalised,
    outbox: bool,
) -> Result<(Written, RunCounts), schema::Error> {
    let last_offset =
        schema::users::lock_for_writing(tx, user_id, schema::users::WriterLock::Exclusive)
            .await?
            .ok_or(schema::Error::Inconsistent("the user of a pull is gone"))?;
    let target = Target {
        user_id,
        batch_id: run_id,
        default_offset: n.latest_offset.offset().or(last_offset),
        outbox,
        link: schema::data_sources::Link::Cloud,
    };
    let written = store::write(tx, target, n).await?;
    record_metrics(n, &written);
    let counts = store::run_counts(&n.report, &written);
    Ok((written, counts))
}

fn record_metrics(n: &Normalised, w: &Written) {
    metrics::counter!("wearhouse_samples_stored_total")
        .increment((w.samples.inserted + w.samples.updated) as u64);
    for (reason, tally) in &n.report.dropped {
        metrics::counter!("wearhouse_items_dropped_total", "reason" => *reason)
            .increment(tally.count);
    }
}

/// The sync status event of a run, as the stream sends it.
pub fn status_event(run: &SyncRun) -> serde_json::Value {
    json!({
        "run_id": run.id,
        "user_id": run.user_id,
        "provider": run.provider,
        "source": run.source,
        "stage": run.stage,
        "status": run.status,
        "message": run.message,
        "counts": run.counts,
        "dropped": run.dropped,
        "error": run.error,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "timestamp": run.updated_at,
    })
}
