//! Clearing what a user's batches stored, so they can be replayed after a mapping or unit fix:
//! one rule for both replays (SDK batches in `ingest::reprocess`, vendor pulls in
//! `vendors::pulls`), whose ids are the `batch_id` lineage of every sample and workout.

use uuid::Uuid;

use crate::ids::UserId;
use crate::{Db, Result};

/// What clearing deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cleared {
    pub samples: u64,
    pub workouts: u64,
}

/// Deletes the samples and workouts `batches` stored for a user, sealed ones included, in one
/// transaction under the user's exclusive writer lock (a reader sees all of it or none).
pub async fn clear(db: &Db, user_id: UserId, batches: &[Uuid]) -> Result<Cleared> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let samples = crate::samples::delete_batches(&tx, user_id, batches).await?;
    let workouts = crate::workouts::delete_batches(&tx, user_id, batches).await?;
    tx.commit().await?;
    Ok(Cleared { samples, workouts })
}
