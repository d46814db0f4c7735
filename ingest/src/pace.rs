//! Imports yield to interactive reads on a shared database. While the API is busy (one of its
//! sessions ran a statement a moment ago, [`schema::activity::api_busy`]), an import writes one
//! chunk at a time instead of two and rests after each chunk as long as writing it took: it
//! then asks about a quarter of the cores it would, and reads find theirs. With the read
//! routes on a replica the primary sees little of the API, and imports run at full speed.

use std::time::{Duration, Instant};

use schema::Db;

/// Chunks written at once when nobody is reading: one PostgreSQL backend alone cannot keep up
/// with the reader.
pub(crate) const WRITERS: usize = 2;

/// How long "a moment ago" is, and how long an answer is trusted.
const BUSY_WITHIN: Duration = Duration::from_millis(250);
const CHECK_EVERY: Duration = Duration::from_millis(100);

pub(crate) struct Pace {
    db: Db,
    checked: Option<(Instant, bool)>,
}

impl Pace {
    pub(crate) fn new(db: Db) -> Pace {
        Pace { db, checked: None }
    }

    /// How many chunks may be written at once now.
    pub(crate) async fn writers(&mut self) -> usize {
        if self.busy().await { 1 } else { WRITERS }
    }

    /// After a chunk that took `took` to write: rest as long, while the API is busy.
    pub(crate) async fn after_chunk(&mut self, took: Duration) {
        if self.busy().await {
            tokio::time::sleep(took.min(Duration::from_secs(2))).await;
        }
    }

    async fn busy(&mut self) -> bool {
        if let Some((at, busy)) = self.checked
            && at.elapsed() < CHECK_EVERY
        {
            return busy;
        }
        // Unknown is not busy: a failing check must not stall an import.
        let busy = schema::activity::api_busy(&self.db, BUSY_WITHIN).await.unwrap_or(false);
        self.checked = Some((Instant::now(), busy));
        busy
    }
}
