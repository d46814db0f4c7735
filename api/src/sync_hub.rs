//! One Redis subscription per API process for every `/sync/stream` listener: a pattern
//! subscription to `<prefix>:sync:*`, fanned out in memory to each user's listeners. A
//! thousand open streams cost one Redis connection, not a thousand. When Redis goes away the
//! hub reconnects with backoff; while it is away, new streams are refused (503) rather than
//! left silent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::{CancellationToken, DropGuard};
use uuid::Uuid;

/// Events kept for a listener that falls behind; older ones are skipped.
const BACKLOG: usize = 64;
const BACKOFF_MAX: Duration = Duration::from_secs(10);

pub struct SyncHub {
    inner: Arc<Inner>,
    connected: watch::Receiver<bool>,
    /// Stops the listening task when the last handle goes.
    _stop: DropGuard,
}

struct Inner {
    users: Mutex<HashMap<Uuid, broadcast::Sender<Arc<str>>>>,
    connected: watch::Sender<bool>,
}

impl SyncHub {
    /// Starts listening on the channels `pattern` matches.
    pub fn start(client: redis::Client, pattern: String) -> SyncHub {
        let (connected, watching) = watch::channel(false);
        let inner = Arc::new(Inner { users: Mutex::default(), connected });
        let stop = CancellationToken::new();
        tokio::spawn(listen(client, pattern, inner.clone(), stop.clone()));
        SyncHub { inner, connected: watching, _stop: stop.drop_guard() }
    }

    /// Whether the hub's subscription is live (events would reach a new listener).
    pub fn is_connected(&self) -> bool {
        *self.connected.borrow()
    }

    /// Waits up to `limit` for the subscription to be live; whether it is.
    pub async fn wait_connected(&self, limit: Duration) -> bool {
        let mut connected = self.connected.clone();
        tokio::time::timeout(limit, connected.wait_for(|c| *c)).await.is_ok_and(|r| r.is_ok())
    }

    /// The events of `user` from now on.
    pub fn subscribe(&self, user: Uuid) -> broadcast::Receiver<Arc<str>> {
        let mut users = self.inner.users.lock().unwrap_or_else(|e| e.into_inner());
        // Users whose listeners all left and got no event since: forget them.
        users.retain(|_, tx| tx.receiver_count() > 0);
        users.entry(user).or_insert_with(|| broadcast::channel(BACKLOG).0).subscribe()
    }
}

impl Inner {
    fn deliver(&self, msg: &redis::Msg) {
        let channel = msg.get_channel_name();
        let Some(user) = channel.rsplit(':').next().and_then(|s| Uuid::parse_str(s).ok()) else {
            return;
        };
        let Ok(payload) = msg.get_payload::<String>() else { return };
        let mut users = self.users.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = users.get(&user)
            && tx.send(payload.into()).is_err()
        {
            // No listener left.
            users.remove(&user);
        }
    }
}

async fn listen(
    client: redis::Client,
    pattern: String,
    inner: Arc<Inner>,
    stop: CancellationToken,
) {
    let mut backoff = Duration::from_millis(250);
    while !stop.is_cancelled() {
        match subscribe(&client, &pattern).await {
            Ok(mut pubsub) => {
                inner.connected.send_replace(true);
                backoff = Duration::from_millis(250);
                let mut messages = pubsub.on_message();
                loop {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        msg = messages.next() => match msg {
                            Some(msg) => inner.deliver(&msg),
                            None => break,
                        },
                    }
                }
                inner.connected.send_replace(false);
                tracing::warn!("sync status hub: lost its Redis subscription; reconnecting");
            }
            Err(e) => tracing::warn!(error = %e, "sync status hub: cannot subscribe in Redis"),
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

async fn subscribe(
    client: &redis::Client,
    pattern: &str,
) -> redis::RedisResult<redis::aio::PubSub> {
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.psubscribe(pattern).await?;
    Ok(pubsub)
}
