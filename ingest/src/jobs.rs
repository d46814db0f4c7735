//! The ingest jobs: announcements over durable work in PostgreSQL, on the one queue
//! ([`queue::Queue`]), in three lanes with their own consumers, so that long imports and pulls
//! waiting on vendors never starve SDK batches: stream `<prefix>:jobs` (SDK batches),
//! `<prefix>:imports` (export imports and users' record exports) and `<prefix>:pulls` (cloud vendor
//! pulls), consumer group `workers`, each trimmed to about a million entries.
//!
//! - A job is acknowledged only once its work is recorded (a batch's transaction committed, an
//!   import, export or pull settled) or found done, gone, or hopeless; a job whose worker died
//!   is claimed by another worker.
//! - Redis keeps nothing PostgreSQL does not: if it loses a stream, the group is recreated
//!   and the sweeper re-announces every batch, import and export still waiting and every pull
//!   due in PostgreSQL.
//! - Sync status events go out on the pub/sub channel `<prefix>:sync:<user_id>`
//!   ([`queue::SyncChannels`]).

use queue::{Keys, Queue, QueueSpec, Stream, SyncChannels};
use redis::aio::ConnectionManager;
use schema::ids::{BatchId, ExportId, ImportId, PullId, UserId};
use serde::{Deserialize, Serialize};

pub use queue::{Entry, Task};

pub const GROUP: &str = "workers";
const MAX_LEN: usize = 1_000_000;

/// What a worker is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Job {
    /// Process a stored SDK batch.
    SdkBatch { id: BatchId },
    /// Run a queued export import.
    Import { id: ImportId },
    /// Pull a cloud vendor's data (a `vendor_pulls` row).
    Pull { id: PullId },
    /// Make an export of a user's record (an `exports` row).
    Export { id: ExportId },
}

impl Job {
    /// The lane whose workers do it.
    pub fn lane(&self) -> Lane {
        match self {
            Job::SdkBatch { .. } => Lane::Batches,
            // Long work with object storage, as imports are.
            Job::Import { .. } | Job::Export { .. } => Lane::Imports,
            Job::Pull { .. } => Lane::Pulls,
        }
    }
}

impl From<BatchId> for Job {
    fn from(id: BatchId) -> Job {
        Job::SdkBatch { id }
    }
}

impl From<ImportId> for Job {
    fn from(id: ImportId) -> Job {
        Job::Import { id }
    }
}

impl From<ExportId> for Job {
    fn from(id: ExportId) -> Job {
        Job::Export { id }
    }
}

impl From<PullId> for Job {
    fn from(id: PullId) -> Job {
        Job::Pull { id }
    }
}

/// A stream of jobs with its own consumers (and so its own concurrency budget).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    Batches,
    Imports,
    /// Cloud vendor pulls: they wait on vendors' rate limits, so never in a lane of the others.
    Pulls,
}

impl Lane {
    pub const ALL: [Lane; 3] = [Lane::Batches, Lane::Imports, Lane::Pulls];

    fn stream(self) -> Stream {
        match self {
            Lane::Batches => Stream::Batches,
            Lane::Imports => Stream::Imports,
            Lane::Pulls => Stream::Pulls,
        }
    }
}

/// The job streams, and the sync-status channels beside them.
#[derive(Clone)]
pub struct JobQueue {
    batches: Queue<Job>,
    imports: Queue<Job>,
    pulls: Queue<Job>,
    sync: SyncChannels,
    keys: Keys,
}

impl JobQueue {
    pub fn new(client: redis::Client, conn: ConnectionManager, prefix: &str) -> JobQueue {
        let keys = Keys::new(prefix);
        let lane = |lane: Lane| {
            let stream = keys.stream(lane.stream());
            let spec = QueueSpec { stream, group: GROUP.into(), max_len: MAX_LEN };
            Queue::new(client.clone(), conn.clone(), spec)
        };
        JobQueue {
            batches: lane(Lane::Batches),
            imports: lane(Lane::Imports),
            pulls: lane(Lane::Pulls),
            sync: SyncChannels::new(client.clone(), conn, keys.clone()),
            keys,
        }
    }

    /// The deployment's Redis keys.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// One lane's stream: read, claim, acknowledge.
    pub fn stream(&self, lane: Lane) -> &Queue<Job> {
        match lane {
            Lane::Batches => &self.batches,
            Lane::Imports => &self.imports,
            Lane::Pulls => &self.pulls,
        }
    }

    pub fn client(&self) -> &redis::Client {
        self.batches.client()
    }

    /// Announces jobs to their lanes' workers: stored SDK batches, queued imports or exports, or
    /// due pulls, by their ids (the rows in PostgreSQL are the record; an announcement only wakes a
    /// worker).
    pub async fn announce<Id: Copy + Into<Job>>(&self, ids: &[Id]) -> queue::Result<()> {
        let jobs: Vec<Job> = ids.iter().map(|&id| id.into()).collect();
        for lane in Lane::ALL {
            let of_lane: Vec<Job> = jobs.iter().copied().filter(|j| j.lane() == lane).collect();
            if !of_lane.is_empty() {
                self.stream(lane).publish(&of_lane).await?;
            }
        }
        Ok(())
    }

    /// Whether Redis answers (within two seconds).
    pub async fn ping(&self) -> bool {
        self.batches.ping().await
    }

    /// The users' sync status channels.
    pub fn sync_channels(&self) -> &SyncChannels {
        &self.sync
    }

    /// Publishes a sync status event (best effort).
    pub async fn publish_sync(&self, user_id: UserId, event: &serde_json::Value) {
        if let Err(e) = self.sync.publish(user_id, &event.to_string()).await {
            tracing::warn!(error = %e, "could not publish a sync status event");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    #[test]
    fn a_job_reads_as_the_version_before_typed_ids_wrote_it_and_knows_its_lane() {
        // Entries in Redis outlive a deploy: the typed ids keep the wire format.
        let id = Uuid::from_u128(7);
        let written = format!(r#"{{"kind":"import","id":"{id}"}}"#);
        let job: Job = serde_json::from_str(&written).expect("a job");
        assert_eq!(job, Job::Import { id: ImportId(id) });
        assert_eq!(serde_json::to_string(&job).ok(), Some(written));
        assert_eq!(Job::from(BatchId(id)).lane(), Lane::Batches);
        assert_eq!(Job::from(ImportId(id)).lane(), Lane::Imports);
        assert_eq!(Job::from(PullId(id)).lane(), Lane::Pulls);
        assert_eq!(Job::from(ExportId(id)).lane(), Lane::Imports);
    }
}
