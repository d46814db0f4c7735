//! The sealer: seals past, quiet days of samples into blocks (`schema::blocks`), oldest first,
//! one user's days a transaction. PostgreSQL holds its worklist (the UTC day rollups not sealed),
//! so it is durable and resumable as it stands: a worker that stops loses nothing, a day sealed
//! twice is sealed as it was, and several workers share the list (each user's days are sealed
//! under the user's writer lock).

use std::time::Duration;

use chrono::Utc;
use schema::Db;
use schema::blocks::Sealing;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

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
}

impl Default for SealConfig {
    fn default() -> Self {
        SealConfig {
            after: Duration::from_secs(48 * 3600),
            quiet: Duration::from_secs(3600),
            idle: Duration::from_secs(60),
            round: 512,
        }
    }
}

/// Days of one user sealed in one transaction, at most.
const DAYS_A_TRANSACTION: usize = 64;

/// Seals one round of due days; what it sealed (nothing: none were due).
pub async fn seal_due(db: &Db, config: &SealConfig) -> schema::Result<Sealing> {
    let now = Utc::now();
    let after = chrono::Duration::from_std(config.after).unwrap_or(chrono::Duration::MAX);
    let quiet = chrono::Duration::from_std(config.quiet).unwrap_or(chrono::Duration::MAX);
    let day_before = schema::blocks::store::utc_day(now - after);
    let due = schema::blocks::due(db, day_before, now - quiet, config.round).await?;
    // The users of the oldest due days, each once, in that order; each has all its due days
    // sealed (up to a round of them), so a backlog seals a transaction's worth of days at a
    // time, where the oldest days alone spread over many users, a few days each.
    let mut users: Vec<Uuid> = Vec::new();
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
        keys.sort();
        for chunk in keys.chunks(DAYS_A_TRANSACTION) {
            total += schema::blocks::seal(db, user, chunk).await?;
        }
        if !keys.is_empty() {
            // Sealing is where a user's bytes change most: the overview's figures follow.
            if let Err(e) = schema::storage::measure_user(db, user).await {
                tracing::warn!(error = %e, %user, "measuring a user's storage failed");
            }
        }
    }
    if total.days == 0 {
        // Caught up: the chunks sealing emptied give their disk back.
        let freed = schema::blocks::store::compact_sealed_chunks(db, day_before).await?;
        if freed > 0 {
            tracing::info!(bytes = freed, "compacted sample chunks emptied by sealing");
        }
        let freed = schema::blocks::store::compact_emptied_indexes(db, false).await?;
        if freed > 0 {
            tracing::info!(bytes = freed, "rebuilt the rollups' indexes sealing emptied");
        }
    }
    Ok(total)
}

/// Seals due days until `shutdown`, resting when none are due.
pub async fn run(db: Db, config: SealConfig, shutdown: CancellationToken) {
    tracing::info!(after = ?config.after, quiet = ?config.quiet, "sealer started");
    loop {
        let rest = match seal_due(&db, &config).await {
            Ok(done) if done.days > 0 => {
                metrics::counter!("wearhouse_days_sealed_total").increment(done.days);
                metrics::counter!("wearhouse_samples_sealed_total").increment(done.samples);
                tracing::info!(
                    days = done.days,
                    samples = done.samples,
                    bytes = done.bytes,
                    "sealed sample days"
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
