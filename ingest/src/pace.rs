//! Imports yield to interactive reads on a shared database. While the API is busy (its
//! sessions, sampled every 50 ms, are at work a fifth of the time or more on average:
//! [`schema::activity::api_sessions_active`]; a client polling now and then does not count),
//! an import writes one chunk at a time instead of two and rests after each chunk twice as
//! long as writing it took: it then asks for about a sixth of the cores it would, and reads
//! find theirs. With the read routes on a replica the primary sees little of the API, and
//! imports run at full speed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use schema::Db;

/// Chunks written at once when nobody is reading: one PostgreSQL backend alone cannot keep up
/// with the reader.
pub(crate) const WRITERS: usize = 2;

/// How often the API's sessions are sampled, how much each sample weighs in the running mean,
/// the mean from which the API counts as busy, and how long an import rests then per second of
/// writing.
const SAMPLE_EVERY: Duration = Duration::from_millis(50);
const WEIGHT: f64 = 0.15;
const BUSY_FROM: f64 = 0.2;
const REST: u32 = 2;

/// The running mean of the API's sessions at work, kept by a sampler while the import runs.
pub(crate) struct Pace {
    mean: Arc<AtomicU64>,
    sampler: tokio::task::JoinHandle<()>,
}

impl Pace {
    pub(crate) fn start(db: Db) -> Pace {
        let mean = Arc::new(AtomicU64::new(0f64.to_bits()));
        let kept = mean.clone();
        let sampler = tokio::spawn(async move {
            let mut tick = tokio::time::interval(SAMPLE_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                // Unknown counts as idle: a failing check must not stall an import.
                let active = schema::activity::api_sessions_active(&db).await.unwrap_or(0);
                let before = f64::from_bits(kept.load(Ordering::Relaxed));
                kept.store(next_mean(before, active).to_bits(), Ordering::Relaxed);
            }
        });
        Pace { mean, sampler }
    }

    /// How many chunks may be written at once now.
    pub(crate) fn writers(&self) -> usize {
        if self.busy() { 1 } else { WRITERS }
    }

    /// After a chunk that took `took` to write: rest, while the API is busy.
    pub(crate) async fn after_chunk(&self, took: Duration) {
        if self.busy() {
            tokio::time::sleep((took * REST).min(Duration::from_secs(5))).await;
        }
    }

    fn busy(&self) -> bool {
        f64::from_bits(self.mean.load(Ordering::Relaxed)) >= BUSY_FROM
    }
}

impl Drop for Pace {
    fn drop(&mut self) {
        self.sampler.abort();
    }
}

/// The running mean of the API's sessions at work after a sample of `active`.
fn next_mean(mean: f64, active: i64) -> f64 {
    mean * (1.0 - WEIGHT) + active as f64 * WEIGHT
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(samples: &[i64]) -> f64 {
        samples.iter().fold(0.0, |m, a| next_mean(m, *a))
    }

    #[test]
    fn steady_reads_make_the_api_busy_and_a_poll_does_not() {
        // Reads keeping half a session at work: seen at work in one sample of two.
        assert!(after(&[1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]) >= BUSY_FROM);
        // A client polling once a second: one sample in twenty finds its session at work, and
        // the import never slows down for it.
        let mut polls = [0; 40];
        polls[7] = 1;
        polls[27] = 1;
        assert!((1..=polls.len()).all(|n| after(&polls[..n]) < BUSY_FROM));
        // Busy, then quiet: within a second the import runs at full speed again.
        let busy = after(&[2; 20]);
        assert!(busy >= BUSY_FROM);
        assert!((0..20).fold(busy, |m, _| next_mean(m, 0)) < BUSY_FROM);
    }
}
