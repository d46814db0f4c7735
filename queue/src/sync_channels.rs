//! The pub/sub channels of users' sync status events, one per user (`<prefix>:sync:<user>`):
//! workers publish, each API process listens to all of them on one subscription and fans out
//! to its `/sync/stream` listeners. Best effort: an event published while nobody listens is
//! gone, which is what a status stream wants.

use std::fmt::Display;

use futures::{Stream, StreamExt};
use redis::AsyncCommands;
use redis::aio::ConnectionManager;

use crate::Result;
use crate::keys::Keys;

/// One deployment's sync channels. Cheap to clone.
#[derive(Clone)]
pub struct SyncChannels {
    client: redis::Client,
    conn: ConnectionManager,
    keys: Keys,
}

/// An event as published: the user it is for (as named in its channel) and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncEvent {
    pub user: String,
    pub payload: String,
}

impl SyncChannels {
    pub fn new(client: redis::Client, conn: ConnectionManager, keys: Keys) -> SyncChannels {
        SyncChannels { client, conn, keys }
    }

    /// Publishes `payload` on `user`'s channel.
    pub async fn publish(&self, user: impl Display, payload: &str) -> Result<()> {
        let mut conn = self.conn.clone();
        let () = conn.publish(self.keys.sync_channel(user), payload).await?;
        Ok(())
    }

    /// Every user's events from now on, on a connection of its own; the stream ends when the
    /// subscription is lost (subscribe again).
    pub async fn listen(&self) -> Result<impl Stream<Item = SyncEvent> + Send + use<>> {
        let mut pubsub = self.client.get_async_pubsub().await?;
        pubsub.psubscribe(self.keys.sync_channel_pattern()).await?;
        Ok(pubsub.into_on_message().filter_map(|msg| {
            let user = msg.get_channel_name().rsplit(':').next().map(str::to_string);
            let payload = msg.get_payload::<String>().ok();
            std::future::ready(user.zip(payload).map(|(user, payload)| SyncEvent { user, payload }))
        }))
    }
}
