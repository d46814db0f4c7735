//! What the other sessions of the database are doing, as far as bulk writers care: how busy
//! the API keeps PostgreSQL now, so that an import yields to interactive reads on a shared box.

use std::time::Duration;

use crate::db::Role;
use crate::{Db, Reads, Result};

/// How long [`api_sessions_active_anywhere`] waits for a database's answer.
const ASK_TIMEOUT: Duration = Duration::from_secs(1);

/// How recently a session of the API must have run a statement to count as at work.
pub const RECENT: Duration = Duration::from_millis(100);

/// How many sessions of the API run a statement in this database now or ran one within
/// [`RECENT`], this one aside (the asking pool may be the API's own) and those whose statement
/// was the API's replica probe (every 200 ms, whether or not anyone reads). Sessions are told apart
/// by their `application_name` ([`Role`]). Counting the recent ones too makes this a measure
/// of how often the API reads, not of how long a read takes: a page planned and read in a
/// quarter of a millisecond is rarely caught running, yet 100 of them a second keep several
/// sessions recent in every sample, while a client polling once a second shows in one sample
/// in ten.
pub async fn api_sessions_active(db: &Db) -> Result<i64> {
    let client = db.client().await?;
    let recent = RECENT.as_secs_f64();
    let row = client
        .query_one(
            "select count(*) from pg_stat_activity
              where application_name = $1 and backend_type = 'client backend'
                and datname = current_database() and pid <> pg_backend_pid()
                and (state = 'active'
                     or state_change > clock_timestamp() - make_interval(secs => $2))
                and not starts_with(query, $3)",
            &[&Role::Api.application_name(), &recent, &crate::replicas::PROBE_MARK],
        )
        .await?;
    Ok(row.try_get(0)?)
}

/// [`api_sessions_active`] summed over the primary and its replicas, asked at once: an import
/// yields to the API's reads wherever they run, since a replica replays the import's writes on
/// the cores its reads want. A database that fails or does not answer within a second counts
/// as idle: a failing check must not stall an import.
pub async fn api_sessions_active_anywhere(reads: &Reads) -> i64 {
    let ask = |db: &Db| {
        let db = db.clone();
        async move {
            match tokio::time::timeout(ASK_TIMEOUT, api_sessions_active(&db)).await {
                Ok(Ok(n)) => n,
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "could not count the API's sessions");
                    0
                }
                Err(_) => 0,
            }
        }
    };
    futures::future::join_all(reads.databases().map(ask)).await.into_iter().sum()
}
