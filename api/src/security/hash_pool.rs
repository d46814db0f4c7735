//! Where password hashes run: a few threads of their own, never tokio's blocking pool (which
//! reads imports and compresses bodies), behind a bounded queue. A login flood waits at most
//! `wait` for a place and is then turned away: it costs those threads, nothing else.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

/// The pool's queue is full: try again shortly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many password checks at once")]
pub(crate) struct Busy;

pub(crate) struct HashPool {
    pool: rayon::ThreadPool,
    /// Hashes running or queued.
    places: Arc<Semaphore>,
    wait: Duration,
}

impl HashPool {
    /// `threads` hashing threads; up to four hashes per thread may wait for one.
    pub(crate) fn new(
        threads: usize,
        wait: Duration,
    ) -> Result<HashPool, rayon::ThreadPoolBuildError> {
        let threads = threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("password-hash-{i}"))
            .build()?;
        Ok(HashPool { pool, places: Arc::new(Semaphore::new(threads * 4)), wait })
    }

    /// Runs `f` on the pool once there is a place within `wait`.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Busy> {
        let place = tokio::time::timeout(self.wait, self.places.clone().acquire_owned())
            .await
            .map_err(|_| Busy)?
            .map_err(|_| Busy)?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.pool.spawn(move || {
            let _ = tx.send(f());
            drop(place);
        });
        rx.await.map_err(|_| Busy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_queue_turns_work_away_and_frees_up_after() {
        let pool = Arc::new(HashPool::new(1, Duration::from_millis(100)).expect("pool"));
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let hold = Arc::new(std::sync::Mutex::new(hold));
        // One running and three queued fill the four places of one thread.
        let mut busy = Vec::new();
        for _ in 0..4 {
            let (pool, hold) = (pool.clone(), hold.clone());
            busy.push(tokio::spawn(async move {
                pool.run(move || hold.lock().map(|h| h.recv().is_ok()).unwrap_or(false)).await
            }));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(pool.run(|| 1).await, Err(Busy));
        for _ in 0..4 {
            let _ = release.send(());
        }
        for b in busy {
            assert_eq!(b.await.ok(), Some(Ok(true)));
        }
        assert_eq!(pool.run(|| 2).await, Ok(2));
    }
}
