//! One Redis subscription per API process for every `/sync/stream` listener: a pattern
//! subscription to `<prefix>:sync:*`, fanned out in memory to each user's listeners. A
//! thousand open streams cost one Redis connection, not a thousand. When Redis goes away the
//! hub reconnects with backoff; while it is away, new streams are refused (503) rather than
//! left silent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use queue::{SyncChannels, SyncEvent};
use schema::ids::UserId;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::{CancellationToken, DropGuard};

/// Events kept for a listener that falls behind; older ones are skipped.
const BACKLOG: usize = 64;
const BACKOFF_MAX: Duration = Duration::from_secs(10);

pub(crate) struct SyncHub {
    inner: Arc<Inner>,
    connected: watch::Receiver<bool>,
    /// Stops the listening task when the last handle goes.
    _stop: DropGuard,
}

struct Inner {
    users: Mutex<HashMap<UserId, broadcast::Sender<Arc<str>>>>,
    connected: watch::Sender<bool>,
}

impl SyncHub {
    /// Starts listening on every user's sync channel.
    pub(crate) fn start(channels: SyncChannels) -> SyncHub {
        let (connected, watching) = watch::channel(false);
        let inner = Arc::new(Inner { users: Mutex::default(), connected });
        let stop = CancellationToken::new();
        tokio::spawn(listen(channels, inner.clone(), stop.clone()));
        SyncHub { inner, connected: watching, _stop: stop.drop_guard() }
    }

    /// Whether the hub's subscription is live (events would reach a new listener).
    pub(crate) fn is_connected(&self) -> bool {
        *self.connected.borrow()
    }

    /// Waits up to `limit` for the subscription to be live; whether it is.
    pub(crate) async fn wait_connected(&self, limit: Duration) -> bool {
        let mut connected = self.connected.clone();
        tokio::time::timeout(limit, connected.wait_for(|c| *c)).await.is_ok_and(|r| r.is_ok())
    }

    /// The events of `user` from now on.
    pub(crate) fn subscribe(&self, user: UserId) -> broadcast::Receiver<Arc<str>> {
        let mut users = self.inner.users.lock().unwrap_or_else(|e| e.into_inner());
        // Users whose listeners all left and got no event since: forget them.
        users.retain(|_, tx| tx.receiver_count() > 0);
        users.entry(user).or_insert_with(|| broadcast::channel(BACKLOG).0).subscribe()
    }
}

impl Inner {
    fn deliver(&self, event: SyncEvent) {
        let Ok(user) = event.user.parse::<UserId>() else { return };
        let payload = event.payload;
        let mut users = self.users.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = users.get(&user)
            && tx.send(payload.into()).is_err()
        {
            // No listener left.
            users.remove(&user);
        }
    }
}

async fn listen(channels: SyncChannels, inner: Arc<Inner>, stop: CancellationToken) {
    let mut backoff = Duration::from_millis(250);
    while !stop.is_cancelled() {
        match channels.listen().await {
            Ok(events) => {
                inner.connected.send_replace(true);
                backoff = Duration::from_millis(250);
                let mut events = std::pin::pin!(events);
                loop {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        event = events.next() => match event {
                            Some(event) => inner.deliver(event),
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
