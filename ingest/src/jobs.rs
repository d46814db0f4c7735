//! The ingest jobs: announcements over durable work in PostgreSQL, on the one queue
//! ([`queue::Queue`]), in three lanes with their own consumers, so that long imports and pulls
//! waiting on vendors never starve SDK batches: stream `<prefix>:jobs` (SDK batches), `<prefix>:imports` (export
//! imports) and `<prefix>:pulls` (cloud vendor pulls), consumer group `workers`, each trimmed to about a million entries.
//!
//! - A job is acknowledged only after its batch's transaction committed (or the batch was found
//!   done, gone, or hopeless); a job whose worker died is claimed by another worker.
//! - Redis keeps nothing PostgreSQL does not: if it loses the stream, the group is recreated
//!   and the sweeper re-announces every batch and import still waiting in PostgreSQL.
//! - Sync status events go out on the pub/sub channel `<prefix>:sync:<user_id>`
//!   ([`queue::SyncChannels`]).

use queue::{Keys, Queue, QueueSpec, Stream, SyncChannels};
use redis::aio::ConnectionManager;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use queue::{Entry, Task};

pub const GROUP: &str = "workers";
const MAX_LEN: usize = 1_000_000;

/// What a worker is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Job {
    /// Process a stored SDK batch.
    SdkBatch { id: Uuid },
    /// Run a queued export import.
    Import { id: Uuid },
    /// Pull a cloud vendor's data (a `vendor_pulls` row).
    Pull { id: Uuid },
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

    /// Announces jobs of `lane` to its workers: stored SDK batches, queued imports or due pulls
    /// (the rows in PostgreSQL are the record; an announcement only wakes a worker).
    pub async fn announce_in(&self, lane: Lane, ids: &[Uuid]) -> queue::Result<()> {
        let job = |id| match lane {
            Lane::Batches => Job::SdkBatch { id },
            Lane::Imports => Job::Import { id },
            Lane::Pulls => Job::Pull { id },
        };
        let jobs: Vec<Job> = ids.iter().map(|&id| job(id)).collect();
        self.stream(lane).publish(&jobs).await
    }

    /// Announces stored SDK batches to the workers.
    pub async fn announce(&self, batch_ids: &[Uuid]) -> queue::Result<()> {
        self.announce_in(Lane::Batches, batch_ids).await
    }

    /// Announces queued imports to the workers.
    pub async fn announce_imports(&self, import_ids: &[Uuid]) -> queue::Result<()> {
        self.announce_in(Lane::Imports, import_ids).await
    }

    /// Announces due vendor pulls to the workers.
    pub async fn announce_pulls(&self, pull_ids: &[Uuid]) -> queue::Result<()> {
        self.announce_in(Lane::Pulls, pull_ids).await
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
    pub async fn publish_sync(&self, user_id: Uuid, event: &serde_json::Value) {
        if let Err(e) = self.sync.publish(user_id, &event.to_string()).await {
            tracing::warn!(error = %e, "could not publish a sync status event");
        }
    }
}
