//! The job queue: a Redis stream of announcements over durable jobs in PostgreSQL.
//!
//! - Stream `<prefix>:jobs`, entries `{batch: <uuid>}` (an SDK batch) or `{import: <uuid>}`
//!   (an export import), trimmed approximately to a million.
//! - Consumer group `workers`; each worker loop reads with its own consumer name and its own
//!   connection (XREADGROUP BLOCK would stall a shared one).
//! - An entry is acknowledged only after the batch's transaction committed (or the batch was
//!   found done, gone, or hopeless). An entry whose worker died stays pending and is claimed by
//!   another worker with XAUTOCLAIM once idle for `claim_idle`.
//! - Redis keeps nothing PostgreSQL does not: if it loses the stream or the group, the group is
//!   recreated and the sweeper re-announces every batch still queued in PostgreSQL.
//! - Sync status events go out on the pub/sub channel `<prefix>:sync:<user_id>`.

use std::time::Duration;

use redis::AsyncCommands;
use redis::aio::{ConnectionManager, MultiplexedConnection};
use redis::streams::{
    StreamAutoClaimOptions, StreamAutoClaimReply, StreamId, StreamReadOptions, StreamReadReply,
};
use uuid::Uuid;

pub const GROUP: &str = "workers";
const MAX_LEN: usize = 1_000_000;

/// One delivered stream entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub entry: String,
    pub kind: JobKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobKind {
    SdkBatch(Uuid),
    Import(Uuid),
    /// An entry we cannot read (acknowledged and skipped).
    Unknown,
}

impl Job {
    fn from_stream(id: &StreamId) -> Job {
        let uuid = |field: &str| id.get::<String>(field).and_then(|s| Uuid::parse_str(&s).ok());
        let kind = match (uuid("batch"), uuid("import")) {
            (Some(b), _) => JobKind::SdkBatch(b),
            (None, Some(i)) => JobKind::Import(i),
            _ => JobKind::Unknown,
        };
        Job { entry: id.id.clone(), kind }
    }
}

#[derive(Clone)]
pub struct JobQueue {
    client: redis::Client,
    conn: ConnectionManager,
    prefix: String,
    stream: String,
}

impl JobQueue {
    pub fn new(client: redis::Client, conn: ConnectionManager, prefix: &str) -> JobQueue {
        JobQueue { client, conn, prefix: prefix.to_string(), stream: format!("{prefix}:jobs") }
    }

    pub fn stream_key(&self) -> &str {
        &self.stream
    }

    /// The pub/sub channel of one user's sync status events.
    pub fn sync_channel(&self, user_id: Uuid) -> String {
        format!("{}:sync:{user_id}", self.prefix)
    }

    pub fn client(&self) -> &redis::Client {
        &self.client
    }

    /// Announces stored SDK batches to the workers.
    pub async fn announce(&self, batch_ids: &[Uuid]) -> redis::RedisResult<()> {
        self.announce_as("batch", batch_ids).await
    }

    /// Announces queued imports to the workers.
    pub async fn announce_imports(&self, import_ids: &[Uuid]) -> redis::RedisResult<()> {
        self.announce_as("import", import_ids).await
    }

    /// Whether Redis answers (within two seconds).
    pub async fn ping(&self) -> bool {
        let mut conn = self.conn.clone();
        let cmd = redis::cmd("PING");
        let ping = cmd.query_async::<String>(&mut conn);
        matches!(tokio::time::timeout(Duration::from_secs(2), ping).await, Ok(Ok(_)))
    }

    async fn announce_as(&self, field: &str, ids: &[Uuid]) -> redis::RedisResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for id in ids {
            pipe.xadd_maxlen(
                &self.stream,
                redis::streams::StreamMaxlen::Approx(MAX_LEN),
                "*",
                &[(field, id.to_string())],
            )
            .ignore();
        }
        let mut conn = self.conn.clone();
        pipe.query_async::<()>(&mut conn).await
    }

    /// Creates the stream and the consumer group when missing.
    pub async fn ensure_group(&self) -> redis::RedisResult<()> {
        let mut conn = self.conn.clone();
        match conn.xgroup_create_mkstream::<_, _, _, ()>(&self.stream, GROUP, "0").await {
            Ok(()) => Ok(()),
            Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// A dedicated connection for blocking reads.
    pub async fn reader(&self) -> redis::RedisResult<MultiplexedConnection> {
        let config = redis::AsyncConnectionConfig::new()
            .set_response_timeout(None)
            .set_connection_timeout(Some(Duration::from_secs(3)));
        self.client.get_multiplexed_async_connection_with_config(&config).await
    }

    /// New entries for `consumer`, waiting up to `block`. Recreates a lost group.
    pub async fn read(
        &self,
        conn: &mut MultiplexedConnection,
        consumer: &str,
        count: usize,
        block: Duration,
    ) -> redis::RedisResult<Vec<Job>> {
        let opts = StreamReadOptions::default()
            .group(GROUP, consumer)
            .count(count)
            .block(block.as_millis() as usize);
        let reply: redis::RedisResult<Option<StreamReadReply>> =
            conn.xread_options(&[&self.stream], &[">"], &opts).await;
        match reply {
            Ok(reply) => Ok(reply
                .map(|r| r.keys.iter().flat_map(|k| k.ids.iter().map(Job::from_stream)).collect())
                .unwrap_or_default()),
            Err(e) if e.code() == Some("NOGROUP") => {
                tracing::warn!("job stream or group missing (Redis restarted?): recreating it");
                self.ensure_group().await?;
                Ok(Vec::new())
            }
            Err(e) => Err(e),
        }
    }

    pub async fn ack(&self, entry: &str) -> redis::RedisResult<()> {
        let mut conn = self.conn.clone();
        conn.xack::<_, _, _, ()>(&self.stream, GROUP, &[entry]).await
    }

    /// Takes over entries another consumer left pending for longer than `min_idle`.
    pub async fn claim(
        &self,
        consumer: &str,
        min_idle: Duration,
        count: usize,
    ) -> redis::RedisResult<Vec<Job>> {
        let mut conn = self.conn.clone();
        let opts = StreamAutoClaimOptions::default().count(count);
        let reply: redis::RedisResult<StreamAutoClaimReply> = conn
            .xautoclaim_options(
                &self.stream,
                GROUP,
                consumer,
                min_idle.as_millis() as u64,
                "0-0",
                opts,
            )
            .await;
        match reply {
            Ok(r) => Ok(r.claimed.iter().map(Job::from_stream).collect()),
            Err(e) if e.code() == Some("NOGROUP") => {
                self.ensure_group().await?;
                Ok(Vec::new())
            }
            Err(e) => Err(e),
        }
    }

    /// Publishes a sync status event (best effort).
    pub async fn publish_sync(&self, user_id: Uuid, event: &serde_json::Value) {
        let mut conn = self.conn.clone();
        let res: redis::RedisResult<()> =
            conn.publish(self.sync_channel(user_id), event.to_string()).await;
        if let Err(e) = res {
            tracing::warn!(error = %e, "could not publish a sync status event");
        }
    }
}
