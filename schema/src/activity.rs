//! What the other sessions of the database are doing, as far as bulk writers care: how busy
//! the API keeps PostgreSQL now, so that an import yields to interactive reads on a shared box.

use crate::db::Role;
use crate::{Db, Result};

/// How many sessions of the API run a statement in this database right now. Sessions are
/// told apart by their `application_name` ([`Role`]). Sampled again and again, its mean is
/// the API's share of PostgreSQL: reads at 400 a second, each 2.5 ms in the database, keep one
/// session busy on average; the API's quick lookups (credentials) barely show.
pub async fn api_sessions_active(db: &Db) -> Result<i64> {
    let client = db.client().await?;
    let row = client
        .query_one(
            "select count(*) from pg_stat_activity
              where application_name = $1 and backend_type = 'client backend'
                and datname = current_database() and state = 'active'",
            &[&Role::Api.application_name()],
        )
        .await?;
    Ok(row.try_get(0)?)
}
