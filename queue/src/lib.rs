//! The one queue: a Redis stream of typed tasks read through a consumer group. Every stream of
//! the service uses it: the ingest jobs' three lanes (`<prefix>:jobs`, `<prefix>:imports` and
//! `<prefix>:pulls`, group `workers`) and the webhook deliveries (`<prefix>:webhooks`, group
//! `senders`). The service's short-lived guards (OAuth flows, replay marks, counters) are
//! [`Guards`], users' sync status events [`SyncChannels`]. Every Redis key of the service is
//! named in [`keys`]; every failure is an [`Error`].
//!
//! - An entry is one field, `task`: the JSON of the stream's task type (a serde-tagged enum).
//!   An entry that does not decode (written by another version) is handed out as
//!   [`Task::Unreadable`], for the consumer to acknowledge and drop: PostgreSQL is the record,
//!   and each stream's sweeper re-announces what still waits there.
//! - Consumers read with XREADGROUP on a connection of their own ([`Queue::reader`]: a blocking
//!   read would stall a shared one). A lost stream or group (Redis restarted, it keeps nothing
//!   on disk) is recreated on the next read or claim (NOGROUP).
//! - An entry is acknowledged only when its work is recorded; acknowledging also deletes it
//!   (XACK + XDEL), so the stream holds only work not yet done. An entry whose consumer died
//!   stays pending and is taken over by another consumer with XAUTOCLAIM once idle long enough.
//! - Every XADD also trims the stream to about `max_len` entries (MAXLEN ~), a bound for when
//!   no consumer runs. A trimmed entry is not lost work: PostgreSQL still holds the job, and
//!   the sweeper announces it again.

use std::marker::PhantomData;
use std::time::Duration;

use redis::AsyncCommands;
use redis::aio::{ConnectionManager, MultiplexedConnection};
use redis::streams::{
    StreamAutoClaimOptions, StreamAutoClaimReply, StreamId, StreamMaxlen, StreamReadOptions,
    StreamReadReply,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

pub mod guards;
pub mod keys;
pub mod sync_channels;

pub use guards::Guards;
pub use keys::{Counted, Flow, Keys, Party, Stream};
pub use sync_channels::{SyncChannels, SyncEvent};

/// What went wrong with the queue.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("encoding a task: {0}")]
    Encode(#[from] serde_json::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The field every entry carries its task in.
const FIELD: &str = "task";

/// Where a queue lives and how long it may grow.
#[derive(Debug, Clone)]
pub struct QueueSpec {
    /// The stream's key.
    pub stream: String,
    /// The consumer group.
    pub group: String,
    /// About how many entries the stream keeps at most.
    pub max_len: usize,
}

/// One entry handed to a consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<T> {
    /// The stream entry id, to acknowledge.
    pub id: String,
    pub task: Task<T>,
}

/// What an entry holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Task<T> {
    Task(T),
    /// An entry this version cannot read: acknowledge it and move on.
    Unreadable,
}

/// A typed Redis stream queue. Cheap to clone.
pub struct Queue<T> {
    client: redis::Client,
    conn: ConnectionManager,
    spec: QueueSpec,
    task: PhantomData<fn() -> T>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue {
            client: self.client.clone(),
            conn: self.conn.clone(),
            spec: self.spec.clone(),
            task: PhantomData,
        }
    }
}

fn decode<T: DeserializeOwned>(entry: &StreamId) -> Entry<T> {
    let task = entry
        .get::<String>(FIELD)
        .and_then(|json| serde_json::from_str(&json).ok())
        .map_or(Task::Unreadable, Task::Task);
    Entry { id: entry.id.clone(), task }
}

impl<T: Serialize + DeserializeOwned> Queue<T> {
    pub fn new(client: redis::Client, conn: ConnectionManager, spec: QueueSpec) -> Queue<T> {
        Queue { client, conn, spec, task: PhantomData }
    }

    pub fn client(&self) -> &redis::Client {
        &self.client
    }

    /// Appends tasks in one round trip, trimming the stream to about `max_len`.
    pub async fn publish(&self, tasks: &[T]) -> Result<()> {
        if tasks.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for task in tasks {
            let json = serde_json::to_string(task)?;
            pipe.xadd_maxlen(
                &self.spec.stream,
                StreamMaxlen::Approx(self.spec.max_len),
                "*",
                &[(FIELD, json)],
            )
            .ignore();
        }
        let mut conn = self.conn.clone();
        Ok(pipe.query_async::<()>(&mut conn).await?)
    }

    /// Creates the stream and the consumer group when missing.
    pub async fn ensure_group(&self) -> Result<()> {
        let mut conn = self.conn.clone();
        let created: redis::RedisResult<()> =
            conn.xgroup_create_mkstream(&self.spec.stream, &self.spec.group, "0").await;
        match created {
            Err(e) if e.code() != Some("BUSYGROUP") => Err(e.into()),
            _ => Ok(()),
        }
    }

    /// A connection of its own for blocking reads (no response time-out).
    pub async fn reader(&self) -> Result<MultiplexedConnection> {
        let config = redis::AsyncConnectionConfig::new()
            .set_response_timeout(None)
            .set_connection_timeout(Some(Duration::from_secs(3)));
        Ok(self.client.get_multiplexed_async_connection_with_config(&config).await?)
    }

    /// New entries for `consumer`, waiting up to `block` for some. Recreates a lost group.
    pub async fn read(
        &self,
        reader: &mut MultiplexedConnection,
        consumer: &str,
        count: usize,
        block: Duration,
    ) -> Result<Vec<Entry<T>>> {
        let opts = StreamReadOptions::default()
            .group(&self.spec.group, consumer)
            .count(count)
            .block(block.as_millis() as usize);
        let reply: redis::RedisResult<Option<StreamReadReply>> =
            reader.xread_options(&[&self.spec.stream], &[">"], &opts).await;
        match reply {
            Ok(reply) => Ok(reply
                .map(|r| r.keys.iter().flat_map(|k| k.ids.iter().map(decode)).collect())
                .unwrap_or_default()),
            Err(e) => self.recover(e).await,
        }
    }

    /// Takes over entries another consumer left pending for longer than `min_idle`.
    pub async fn claim(
        &self,
        consumer: &str,
        min_idle: Duration,
        count: usize,
    ) -> Result<Vec<Entry<T>>> {
        let mut conn = self.conn.clone();
        let opts = StreamAutoClaimOptions::default().count(count);
        let reply: redis::RedisResult<StreamAutoClaimReply> = conn
            .xautoclaim_options(
                &self.spec.stream,
                &self.spec.group,
                consumer,
                min_idle.as_millis() as u64,
                "0-0",
                opts,
            )
            .await;
        match reply {
            Ok(r) => Ok(r.claimed.iter().map(decode).collect()),
            Err(e) => self.recover(e).await,
        }
    }

    /// A lost group is recreated (and nothing read this time); other errors are returned.
    async fn recover(&self, e: redis::RedisError) -> Result<Vec<Entry<T>>> {
        if e.code() != Some("NOGROUP") {
            return Err(e.into());
        }
        tracing::warn!(stream = %self.spec.stream, "stream or group missing (Redis restarted?): recreating it");
        self.ensure_group().await?;
        Ok(Vec::new())
    }

    /// Acknowledges an entry whose work is recorded, and deletes it from the stream.
    pub async fn ack(&self, id: &str) -> Result<()> {
        let mut pipe = redis::pipe();
        pipe.xack(&self.spec.stream, &self.spec.group, &[id]).ignore();
        pipe.xdel(&self.spec.stream, &[id]).ignore();
        let mut conn = self.conn.clone();
        Ok(pipe.query_async::<()>(&mut conn).await?)
    }

    /// How many entries the stream holds.
    pub async fn len(&self) -> Result<usize> {
        let mut conn = self.conn.clone();
        Ok(conn.xlen(&self.spec.stream).await?)
    }

    /// Whether Redis answers (within two seconds).
    pub async fn ping(&self) -> bool {
        ping(&self.conn).await
    }
}

/// Whether Redis answers on `conn` within two seconds: the one health check of the queue and
/// the guards.
pub(crate) async fn ping(conn: &ConnectionManager) -> bool {
    let mut conn = conn.clone();
    let cmd = redis::cmd("PING");
    let ping = cmd.query_async::<String>(&mut conn);
    matches!(tokio::time::timeout(Duration::from_secs(2), ping).await, Ok(Ok(_)))
}

#[cfg(test)]
mod tests;
