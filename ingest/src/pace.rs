//! Imports yield to interactive reads on a shared database. While the API is busy (sampled
//! every 50 ms, three quarters of a session or more on average at work now or within the last
//! 100 ms: [`schema::activity::api_sessions_active`], about ten requests a second; a client
//! polling now and then does not count), an import writes one chunk at a time instead of two,
//! cuts its chunks 32 times smaller (a chunk's write is a burst that wants a core; a smaller one
//! is over before the reads queue behind it), and rests after each chunk four times as long as
//! writing it took: it then asks for about a tenth of the cores it would, in short bursts, and
//! reads find theirs. Its parser always runs at the lowest CPU priority ([`in_background`]), so
//! it takes only the cores nobody else wants. The API's sessions are counted on the primary and
//! on every read replica ([`schema::activity::api_sessions_active_anywhere`]): a replica replays
//! an import's writes on the cores its reads want, so an import yields to reads there as well.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use schema::Reads;

use crate::export::ChunkRecords;

/// Chunks written at once when nobody is reading: one PostgreSQL backend alone cannot keep up
/// with the reader.
pub(crate) const WRITERS: usize = 2;

/// How often the API's sessions are sampled, how much each sample weighs in the running mean,
/// the mean from which the API counts as busy, and how long an import rests then per second of
/// writing. (A session counts for [`schema::activity::RECENT`] after its statement, two
/// samples.)
const SAMPLE_EVERY: Duration = Duration::from_millis(50);
const WEIGHT: f64 = 0.15;
const BUSY_FROM: f64 = 0.75;
const REST: u32 = 4;
/// Records a chunk closes at while the API is busy (else [`ChunkRecords::MAX`]).
const BUSY_CHUNK_RECORDS: usize = ChunkRecords::MAX / 32;

/// The nice value of an import's parser threads: the lowest priority, as `nice -n 19` gives.
const BACKGROUND_NICE: i32 = 19;

/// The running mean of the API's sessions at work, kept by a sampler while the import runs.
pub(crate) struct Pace {
    mean: Arc<AtomicU64>,
    chunk_records: ChunkRecords,
    sampler: tokio::task::JoinHandle<()>,
}

impl Pace {
    /// Samples the API once before the import reads anything (the first sample is the mean
    /// to start from: an import begun beside busy reads starts small), then keeps sampling.
    pub(crate) async fn start(api: Reads) -> Pace {
        let sample = |api: Reads| async move {
            schema::activity::api_sessions_active_anywhere(&api).await as f64
        };
        let first = sample(api.clone()).await;
        let mean = Arc::new(AtomicU64::new(first.to_bits()));
        let chunk_records = ChunkRecords::new();
        let (kept, records) = (mean.clone(), chunk_records.clone());
        let size = |mean: f64| if is_busy(mean) { BUSY_CHUNK_RECORDS } else { ChunkRecords::MAX };
        records.set(size(first));
        tracing::info!(busy = is_busy(first), api_sessions = first, "import pace");
        let sampler = tokio::spawn(async move {
            let mut tick = tokio::time::interval(SAMPLE_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let before = f64::from_bits(kept.load(Ordering::Relaxed));
                let mean = next_mean(before, sample(api.clone()).await);
                kept.store(mean.to_bits(), Ordering::Relaxed);
                records.set(size(mean));
                if is_busy(mean) != is_busy(before) {
                    tracing::info!(busy = is_busy(mean), api_sessions = mean, "import pace");
                }
            }
        });
        Pace { mean, chunk_records, sampler }
    }

    /// The size the export's reader cuts its chunks at, kept up to date.
    pub(crate) fn chunk_records(&self) -> ChunkRecords {
        self.chunk_records.clone()
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
        is_busy(f64::from_bits(self.mean.load(Ordering::Relaxed)))
    }
}

fn is_busy(mean: f64) -> bool {
    mean >= BUSY_FROM
}

impl Drop for Pace {
    fn drop(&mut self) {
        self.sampler.abort();
    }
}

/// Runs `work` (an export's parsing) on threads of the lowest CPU priority, their own pool:
/// a burst of parsing then waits for the cores the API's reads and PostgreSQL leave, instead of
/// taking one from them. Nothing changes on an idle box. On a platform where the priority
/// cannot be lowered the pool runs at the normal one.
pub(crate) fn in_background<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    let pool = POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("import parser {i}"))
            .start_handler(|_| lower_this_thread())
            .build()
            .map_err(|e| tracing::warn!(error = %e, "no pool of its own for parsing imports"))
            .ok()
    });
    match pool {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

/// Gives the calling thread the lowest CPU priority, for good: only for threads that do
/// nothing else. (On Linux a nice value is a thread's own; `None` names the calling thread.)
pub(crate) fn lower_this_thread() {
    if let Err(e) = rustix::process::setpriority_process(None, BACKGROUND_NICE) {
        tracing::debug!(error = %e, "could not lower an import thread's priority");
    }
}

/// The running mean of the API's sessions at work after a sample of `active`.
fn next_mean(mean: f64, active: f64) -> f64 {
    mean * (1.0 - WEIGHT) + active * WEIGHT
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(samples: &[i64]) -> f64 {
        samples.iter().fold(0.0, |m, a| next_mean(m, *a as f64))
    }

    #[test]
    fn steady_reads_make_the_api_busy_and_a_poll_does_not() {
        // Reads at five a second (each seen in two samples, at work or just after): a session
        // in one sample of two, not yet busy; at ten a second, one or two in every sample.
        assert!(after(&[1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]) < BUSY_FROM);
        assert!(after(&[1, 1, 2, 1, 1, 1, 2, 1, 1, 1, 1, 2, 1, 1, 1, 1, 2, 1, 1, 1]) >= BUSY_FROM);
        // One statement that lasts: its session at work in every sample.
        assert!(after(&[1; 20]) >= BUSY_FROM);
        // A client polling once a second (its key's lookup and its read on two sessions):
        // two samples in twenty see them, and the import never slows down for it.
        let mut polls = [0; 40];
        polls[7..9].copy_from_slice(&[2, 2]);
        polls[27..29].copy_from_slice(&[2, 2]);
        assert!((1..=polls.len()).all(|n| after(&polls[..n]) < BUSY_FROM));
        // Busy, then quiet: within a second the import runs at full speed again.
        let busy = after(&[4; 20]);
        assert!(busy >= BUSY_FROM);
        assert!((0..20).fold(busy, |m, _| next_mean(m, 0.0)) < BUSY_FROM);
    }
}
