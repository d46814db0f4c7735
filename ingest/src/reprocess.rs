//! Re-deriving a user's data from their stored batches after a mapping or unit fix: the samples
//! and workouts the batches produced are deleted, the batches replayed in the order they
//! arrived, and the user's daily rollups rebuilt. Sleep sessions are re-merged in place (their
//! stages are stored as received). No webhook events are sent for replayed data.

use chrono::{DateTime, Utc};
use schema::Db;
use schema::ids::UserId;
use uuid::Uuid;

use crate::process::{self, Options, ProcessError, Processed};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reprocessed {
    pub batches: usize,
    pub failed: usize,
    pub samples_deleted: u64,
    pub workouts_deleted: u64,
}

pub async fn reprocess_user(
    db: &Db,
    user_id: UserId,
    since: Option<DateTime<Utc>>,
    mut progress: impl FnMut(usize, usize),
) -> Result<Reprocessed, ProcessError> {
    let ids = schema::sdk_batches::ids_for_user(db, user_id, since).await?;
    // What the batches stored carries their ids as its lineage.
    let lineage: Vec<Uuid> = ids.iter().map(|id| id.0).collect();
    let cleared = schema::replay::clear(db, user_id, &lineage).await?;
    let mut out = Reprocessed {
        samples_deleted: cleared.samples,
        workouts_deleted: cleared.workouts,
        ..Reprocessed::default()
    };
    for (i, id) in ids.iter().enumerate() {
        if let Processed::Failed(_) =
            process::process_sdk_batch(db, *id, Options { outbox: false, force: true }).await?
        {
            out.failed += 1
        }
        out.batches += 1;
        progress(i + 1, ids.len());
    }
    schema::samples::rebuild_rollups(db, user_id).await?;
    Ok(out)
}
