//! Read replicas: which database a read asks. PostgreSQL streaming replicas (`pg_basebackup -R`)
//! take the read routes' queries off the primary while they are close enough behind it.
//!
//! How far behind a replica is, is measured against the primary's own WAL positions: every
//! [`Reads::probe`] notes the primary's current position, and a replica's lag is the age of
//! the oldest noted position it has not replayed yet. That holds whatever the cause (a slow
//! replay, a cut stream, a paused replica) and is zero on an idle pair. A replica further
//! behind than the allowed lag, or one that did not answer its last probe, is not asked; a
//! read then goes to the primary.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use crate::{Db, Result};

/// How long a probe waits for a replica's answer before counting it down.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// What every probe statement begins with: the API's sessions running one are not at work
/// for a client ([`crate::activity::api_sessions_active`] leaves them out), though the API
/// probes every [`PROBE_EVERY`].
pub(crate) const PROBE_MARK: &str = "/* replica probe */";
const PRIMARY_POSITION: &str =
    "/* replica probe */ select (pg_current_wal_lsn() - '0/0'::pg_lsn)::int8";
const REPLAYED_POSITION: &str = "/* replica probe */ select pg_is_in_recovery(),
    coalesce((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::int8, 0)";

/// How often [`Reads::probe`] is to run (the API's probing loop).
pub const PROBE_EVERY: Duration = Duration::from_millis(200);

/// What the last probe said of a replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    /// Not probed yet: not asked until it is.
    Unknown,
    /// Answered, this far behind the primary.
    Behind(Duration),
    /// Did not answer, answered as a primary (promoted), or failed a read.
    Down,
}

struct Replica {
    /// `host:port/db`, for logs.
    name: String,
    db: Db,
    health: Mutex<Health>,
}

/// The primary and its replicas, for the read routes. Cheap to clone.
#[derive(Clone)]
pub struct Reads {
    inner: std::sync::Arc<Inner>,
}

struct Inner {
    primary: Db,
    replicas: Vec<Replica>,
    max_lag: Duration,
    /// The primary's WAL positions as probed, oldest first, with when.
    primary_positions: Mutex<VecDeque<(Instant, u64)>>,
    /// Round-robin among the replicas that may be asked.
    next: AtomicUsize,
}

/// Where one read goes: a replica (by index) or the primary.
#[derive(Clone)]
pub struct ReadTarget {
    pub db: Db,
    replica: Option<usize>,
}

impl ReadTarget {
    pub fn is_replica(&self) -> bool {
        self.replica.is_some()
    }
}

impl std::fmt::Debug for Reads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reads")
            .field("replicas", &self.health())
            .field("max_lag", &self.inner.max_lag)
            .finish()
    }
}

impl Reads {
    /// The primary alone: every read goes there.
    pub fn primary_only(primary: Db) -> Reads {
        Reads::with_replicas(primary, Vec::new(), Duration::ZERO)
    }

    /// Pools of at most `max_size` connections to each replica URL, their sessions named as
    /// `role`'s: the API's read routes are counted as its reads there (imports yield to them),
    /// a worker's probes and samples are not. Nothing is connected yet (a replica down at
    /// start must not stop the service); the first probe says which answer.
    pub fn connect(
        primary: Db,
        urls: &[String],
        max_size: usize,
        max_lag: Duration,
        role: crate::db::Role,
    ) -> Result<Reads> {
        let mut replicas = Vec::new();
        for url in urls.iter().map(|u| u.trim()).filter(|u| !u.is_empty()) {
            let config = role.config(url)?;
            let name = describe(&config);
            let manager = Manager::from_config(
                config,
                NoTls,
                ManagerConfig { recycling_method: RecyclingMethod::Fast },
            );
            // No staging tables here (unlike the primary's pool): a standby refuses them, and
            // reads need none.
            let pool = Pool::builder(manager)
                .max_size(max_size)
                .wait_timeout(Some(PROBE_TIMEOUT))
                .create_timeout(Some(PROBE_TIMEOUT))
                .runtime(deadpool_postgres::Runtime::Tokio1)
                .build()?;
            let db = Db::from_pool(pool, primary.edition());
            replicas.push((name, db));
        }
        Ok(Reads::with_replicas(primary, replicas, max_lag))
    }

    fn with_replicas(primary: Db, replicas: Vec<(String, Db)>, max_lag: Duration) -> Reads {
        let replicas = replicas
            .into_iter()
            .map(|(name, db)| Replica { name, db, health: Mutex::new(Health::Unknown) })
            .collect();
        Reads {
            inner: std::sync::Arc::new(Inner {
                primary,
                replicas,
                max_lag,
                primary_positions: Mutex::new(VecDeque::new()),
                next: AtomicUsize::new(0),
            }),
        }
    }

    pub fn has_replicas(&self) -> bool {
        !self.inner.replicas.is_empty()
    }

    pub fn primary(&self) -> &Db {
        &self.inner.primary
    }

    /// The primary and then every replica, whatever their health: everywhere the API's read
    /// routes may run.
    pub(crate) fn databases(&self) -> impl Iterator<Item = &Db> {
        std::iter::once(&self.inner.primary).chain(self.inner.replicas.iter().map(|r| &r.db))
    }

    /// The replicas' health as last probed, by name.
    pub fn health(&self) -> Vec<(String, Health)> {
        self.inner.replicas.iter().map(|r| (r.name.clone(), health_of(r))).collect()
    }

    /// Where a read goes now: the next replica (round-robin) within the allowed lag, else the
    /// primary.
    pub fn pick(&self) -> ReadTarget {
        let inner = &*self.inner;
        let n = inner.replicas.len();
        let start = inner.next.fetch_add(1, Ordering::Relaxed);
        for i in (0..n).map(|k| (start + k) % n) {
            if may_ask(health_of(&inner.replicas[i]), inner.max_lag) {
                return ReadTarget { db: inner.replicas[i].db.clone(), replica: Some(i) };
            }
        }
        ReadTarget { db: inner.primary.clone(), replica: None }
    }

    /// A read on `target` failed on our side: that replica is not asked again until a probe
    /// finds it well.
    pub fn failed(&self, target: &ReadTarget) {
        if let Some(replica) = target.replica.and_then(|i| self.inner.replicas.get(i)) {
            set_health(replica, Health::Down);
        }
    }

    /// Notes the primary's WAL position and asks each replica how far it has replayed. Run
    /// every few hundred milliseconds while the service runs.
    pub async fn probe(&self) {
        let inner = &*self.inner;
        if inner.replicas.is_empty() {
            return;
        }
        let now = Instant::now();
        match tokio::time::timeout(PROBE_TIMEOUT, primary_position(&inner.primary)).await {
            Ok(Ok(position)) => {
                let mut positions = lock(&inner.primary_positions);
                positions.push_back((now, position));
                // Kept long enough to tell "just over the allowed lag" from "within it".
                let keep = inner.max_lag * 2 + Duration::from_secs(2);
                while positions.front().is_some_and(|(at, _)| now.duration_since(*at) > keep) {
                    positions.pop_front();
                }
            }
            // No primary position: the replicas' lag cannot be told; reads go to the primary
            // (which then fails or not on its own).
            _ => {
                for replica in &inner.replicas {
                    set_health(replica, Health::Unknown);
                }
                return;
            }
        }
        let probes = inner.replicas.iter().map(|replica| async move {
            let replayed =
                tokio::time::timeout(PROBE_TIMEOUT, replayed_position(&replica.db)).await;
            let health = match replayed {
                Ok(Ok(Some(position))) => {
                    Health::Behind(lag(&lock(&inner.primary_positions), position, Instant::now()))
                }
                Ok(Ok(None)) => {
                    tracing::warn!(replica = %replica.name, "a read replica is not in recovery (promoted?); reads skip it");
                    Health::Down
                }
                Ok(Err(e)) => {
                    tracing::debug!(replica = %replica.name, error = %e, "read replica down");
                    Health::Down
                }
                Err(_) => Health::Down,
            };
            let before = health_of(replica);
            if matches!(before, Health::Down) != matches!(health, Health::Down) {
                tracing::info!(replica = %replica.name, ?health, "read replica health changed");
            }
            set_health(replica, health);
        });
        futures::future::join_all(probes).await;
    }

    /// Waits until every replica has replayed what the primary has committed now: announcing
    /// data (a webhook) after this means a read right after it finds that data, on whichever
    /// database it lands. A replica that has not replayed it by the time the API's probes must
    /// have found it over the allowed lag (the lag, plus two probes: one to note the position,
    /// one to find it unreplayed, and two more for probes running late) is not waited for any
    /// longer: the API no longer asks it. Nor is one that does not answer.
    pub async fn wait_replayed(&self) -> Result<()> {
        let inner = &*self.inner;
        if inner.replicas.is_empty() {
            return Ok(());
        }
        let target = primary_position(&inner.primary).await?;
        let deadline = Instant::now() + inner.max_lag + PROBE_EVERY * 4;
        for replica in &inner.replicas {
            while Instant::now() < deadline {
                let replayed =
                    tokio::time::timeout(PROBE_TIMEOUT, replayed_position(&replica.db)).await;
                match replayed {
                    Ok(Ok(Some(p))) if p >= target => break,
                    Ok(Ok(Some(_))) => tokio::time::sleep(Duration::from_millis(10)).await,
                    _ => break,
                }
            }
        }
        Ok(())
    }
}

/// Whether a replica in `health` may be asked under `max_lag`.
fn may_ask(health: Health, max_lag: Duration) -> bool {
    matches!(health, Health::Behind(lag) if lag <= max_lag)
}

/// How far behind a replica that has replayed up to `replayed` is: the age of the oldest
/// primary position (`positions`, oldest first) it has not reached; zero when it has reached
/// them all. Older than every noted position means at least as old as the oldest.
fn lag(positions: &VecDeque<(Instant, u64)>, replayed: u64, now: Instant) -> Duration {
    positions
        .iter()
        .find(|(_, position)| *position > replayed)
        .map_or(Duration::ZERO, |(at, _)| now.saturating_duration_since(*at))
}

async fn primary_position(db: &Db) -> Result<u64> {
    let client = db.client().await?;
    let row = client.query_one(PRIMARY_POSITION, &[]).await?;
    Ok(u64::try_from(row.try_get::<_, i64>(0)?).unwrap_or(0))
}

/// How far a replica has replayed; `None` when it is not a replica (not in recovery).
async fn replayed_position(db: &Db) -> Result<Option<u64>> {
    let client = db.client().await?;
    let row = client.query_one(REPLAYED_POSITION, &[]).await?;
    let in_recovery: bool = row.try_get(0)?;
    let position: i64 = row.try_get(1)?;
    Ok(in_recovery.then(|| u64::try_from(position).unwrap_or(0)))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn health_of(replica: &Replica) -> Health {
    *lock(&replica.health)
}

fn set_health(replica: &Replica, health: Health) {
    *lock(&replica.health) = health;
}

fn describe(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_are_marked_so_that_imports_do_not_take_them_for_reads() {
        assert!([PRIMARY_POSITION, REPLAYED_POSITION].iter().all(|s| s.starts_with(PROBE_MARK)));
    }

    fn positions(now: Instant, ages_and_positions: &[(u64, u64)]) -> VecDeque<(Instant, u64)> {
        ages_and_positions
            .iter()
            .map(|(age_ms, p)| (now - Duration::from_millis(*age_ms), *p))
            .collect()
    }

    #[test]
    fn a_replica_that_replayed_everything_is_not_behind() {
        let now = Instant::now();
        let noted = positions(now, &[(600, 100), (400, 200), (200, 300)]);
        assert_eq!(lag(&noted, 300, now), Duration::ZERO);
        assert_eq!(lag(&noted, 350, now), Duration::ZERO);
        // An idle primary: its position does not move.
        let idle = positions(now, &[(600, 100), (400, 100), (200, 100)]);
        assert_eq!(lag(&idle, 100, now), Duration::ZERO);
    }

    #[test]
    fn lag_is_the_age_of_the_oldest_position_not_replayed() {
        let now = Instant::now();
        let noted = positions(now, &[(600, 100), (400, 200), (200, 300)]);
        assert_eq!(lag(&noted, 250, now), Duration::from_millis(200));
        assert_eq!(lag(&noted, 150, now), Duration::from_millis(400));
        // Behind everything noted: at least as old as the oldest.
        assert_eq!(lag(&noted, 50, now), Duration::from_millis(600));
    }

    #[test]
    fn only_replicas_known_within_the_lag_are_asked() {
        let max = Duration::from_secs(1);
        assert!(may_ask(Health::Behind(Duration::ZERO), max));
        assert!(may_ask(Health::Behind(max), max));
        assert!(!may_ask(Health::Behind(max + Duration::from_millis(1)), max));
        assert!(!may_ask(Health::Down, max));
        assert!(!may_ask(Health::Unknown, max));
    }
}
