//! The sealer: seals past, quiet days of samples into blocks (`schema::blocks`), oldest first,
//! one user's days a transaction. PostgreSQL holds its worklist (the UTC day rollups not sealed),
//! so it is durable and resumable as it stands: a worker that stops loses nothing, a day sealed
//! twice is sealed as it was, and several workers share the list (each user's days are sealed
//! under the user's writer lock).

use std::time::Duration;

use chrono::{DateTime, Utc};
use schema::Db;
use schema::blocks::{DayKey, Sealing, Share};
use schema::ids::UserId;
use tokio_util::sync::CancellationToken;

/// When a day is sealed.
#[derive(Debug, Clone, Copy)]
pub struct SealConfig {
    /// A day is sealed once it ended at least this long ago...
    pub after: Duration,
    /// ...and no sample came to it for this long.
    pub quiet: Duration,
    /// How long the sealer rests when nothing is due.
    pub idle: Duration,
    /// Days taken from the worklist a round.
    pub round: i64,
    /// Sealers side by side (`SEAL_JOBS`), each with a share of the users.
    pub jobs: u32,
    /// The users this sealer takes.
    pub share: Share,
}

impl Default for SealConfig {
    fn default() -> Self {
        SealConfig {
            after: Duration::from_secs(48 * 3600),
            quiet: Duration::from_secs(3600),
            idle: Duration::from_secs(60),
            round: 512,
            jobs: 1,
            share: Share::ALL,
        }
    }
}

impl SealConfig {
    /// The first UTC day not due at `now`: days before it are past the sealing age.
    pub fn first_unsealed_day(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        let after = chrono::Duration::from_std(self.after).unwrap_or(chrono::Duration::MAX);
        schema::blocks::store::utc_day(now - after)
    }

    /// One sealer's config for each of the `jobs` shares of the users.
    pub fn shares(&self) -> Vec<SealConfig> {
        Share::split(self.jobs).map(|share| SealConfig { share, ..*self }).collect()
    }
}

/// Users whose past months of sessions a round seals (a user's in one transaction).
const SESSION_USERS_A_ROUND: i64 = 32;
/// Days of one user sealed in one transaction, at most...
const DAYS_A_TRANSACTION: usize = 512;
/// ...and samples, about: a sparse series' days are many to a transaction, a dense one's few.
const SAMPLES_A_TRANSACTION: i64 = 200_000;

/// A user's due days (sorted) cut into transactions: consecutive days of a series and source,
/// up to [`DAYS_A_TRANSACTION`] days and about [`SAMPLES_A_TRANSACTION`] samples each.
fn transactions(keys: &[(DayKey, i64)]) -> Vec<Vec<DayKey>> {
    let mut out: Vec<Vec<DayKey>> = Vec::new();
    let mut held = 0;
    for (key, samples) in keys {
        match out.last_mut() {
            Some(last)
                if last.len() < DAYS_A_TRANSACTION && held + samples <= SAMPLES_A_TRANSACTION =>
            {
                last.push(*key);
                held += samples;
            }
            _ => {
                out.push(vec![*key]);
                held = *samples;
            }
        }
    }
    out
}

/// Seals one round of due days; what it sealed (nothing: none were due).
pub async fn seal_due(db: &Db, config: &SealConfig) -> schema::Result<Sealing> {
    let now = Utc::now();
    let after = chrono::Duration::from_std(config.after).unwrap_or(chrono::Duration::MAX);
    let quiet = chrono::Duration::from_std(config.quiet).unwrap_or(chrono::Duration::MAX);
    let day_before = config.first_unsealed_day(now);
    let due = schema::blocks::due(db, day_before, now - quiet, config.round, config.share).await?;
    // The users of the oldest due days, each once, in that order; each has all its due days
    // sealed (up to a round of them), so a backlog seals a transaction's worth of days at a
    // time, where the oldest days alone spread over many users, a few days each.
    let mut users: Vec<UserId> = Vec::new();
    for (user, _) in &due {
        if !users.contains(user) {
            users.push(*user);
        }
    }
    let mut total = Sealing::default();
    for user in users {
        // A round seals about a round of days, so a worker stopping waits for little.
        if total.days >= config.round as u64 {
            break;
        }
        let mut keys =
            schema::blocks::store::due_for_user(db, user, day_before, now - quiet, config.round)
                .await?;
        // A transaction takes consecutive days of a series and source, so a backlog's blocks
        // are packed whole at once, not rewritten a few days at a time.
        keys.sort_by_key(|(key, _)| *key);
        for chunk in transactions(&keys) {
            total += schema::blocks::seal(db, user, &chunk).await?;
        }
        // Sealing is where a user's bytes change most: the overview's figures follow, once the
        // user's due days are all sealed (measuring a large user reads all its rows: a backlog
        // measured each round spent half its time so).
        let caught_up = (keys.len() as i64) < config.round
            || schema::blocks::store::due_for_user(db, user, day_before, now - quiet, 1)
                .await?
                .is_empty();
        if !keys.is_empty()
            && caught_up
            && let Err(e) = schema::storage::measure_user(db, user).await
        {
            tracing::warn!(error = %e, %user, "measuring a user's storage failed");
        }
    }
    if total.days == 0 && config.share.is_first() {
        // Caught up: the blocks sealed before blocks spanned days are packed again, a user a
        // round (counted as sealed days, so the sealer goes on without resting).
        if let Some(user) = schema::blocks::store::repack_due(db).await? {
            let keys = schema::blocks::store::packable_blocks(db, user).await?;
            for chunk in transactions(&keys) {
                total += schema::blocks::seal(db, user, &chunk).await?;
            }
            schema::blocks::store::repacked(db, user).await?;
            tracing::info!(%user, blocks = keys.len(), "packed a user's blocks of a day again");
            total.days = total.days.max(1);
            return Ok(total);
        }
        // Caught up with samples: the sessions of past months, a few users a round.
        let before = schema::session_blocks::month_start(now - after);
        let users = schema::session_blocks::due(db, before, SESSION_USERS_A_ROUND).await?;
        if !users.is_empty() {
            for user in users {
                total.sessions += schema::session_blocks::seal_user(db, user, before).await?;
            }
            return Ok(total);
        }
        // The chunks sealing emptied give their disk back.
        let freed = schema::blocks::compact::compact_sealed_chunks(db, day_before, false).await?;
        if freed > 0 {
            tracing::info!(bytes = freed, "compacted the sample chunks sealing emptied");
        }
        let packing = schema::blocks::compact::pack_local_days(db).await?;
        if packing.progressed() {
            let (bytes, more) = (packing.freed, packing.more);
            tracing::info!(bytes, more, "packed the local day rollups sealing emptied");
        }
        let freed = schema::blocks::compact::compact_emptied_indexes(db, false).await?;
        if freed > 0 {
            tracing::info!(bytes = freed, "rebuilt the rollups' indexes sealing emptied");
        }
    }
    Ok(total)
}

/// Seals due days until `shutdown`, resting when none are due.
pub async fn run(db: Db, config: SealConfig, shutdown: CancellationToken) {
    tracing::info!(after = ?config.after, quiet = ?config.quiet, share = ?config.share, "sealer started");
    loop {
        let rest = match seal_due(&db, &config).await {
            Ok(done) if done.progressed() => {
                metrics::counter!("wearhouse_days_sealed_total").increment(done.days);
                metrics::counter!("wearhouse_samples_sealed_total").increment(done.samples);
                metrics::counter!("wearhouse_sessions_sealed_total").increment(done.sessions);
                tracing::info!(
                    days = done.days,
                    samples = done.samples,
                    bytes = done.bytes,
                    sessions = done.sessions,
                    "sealed sample days and sessions"
                );
                Duration::ZERO
            }
            Ok(_) => config.idle,
            Err(e) => {
                tracing::warn!(error = %e, "sealing failed; the next round retries");
                config.idle
            }
        };
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(rest) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Duration};
    use uuid::Uuid;

    use super::*;

    #[test]
    fn a_transaction_holds_many_sparse_days_or_few_dense_ones() {
        let day = |d: i64| DayKey {
            series_type_id: schema::ids::SeriesId(1),
            data_source_id: Uuid::nil(),
            day: DateTime::from_timestamp(0, 0).unwrap_or_default() + Duration::days(d),
        };
        let sparse: Vec<(DayKey, i64)> = (0..1000).map(|d| (day(d), 7)).collect();
        let cut = transactions(&sparse);
        assert_eq!(cut.iter().map(Vec::len).collect::<Vec<_>>(), vec![512, 488]);
        let dense: Vec<(DayKey, i64)> = (0..5).map(|d| (day(d), 90_000)).collect();
        let cut = transactions(&dense);
        assert_eq!(cut.iter().map(Vec::len).collect::<Vec<_>>(), vec![2, 2, 1]);
        // A day over the budget alone is a transaction of its own.
        let huge = vec![(day(0), 1), (day(1), 500_000), (day(2), 1)];
        assert_eq!(transactions(&huge).len(), 3);
        assert!(transactions(&[]).is_empty());
    }
}
