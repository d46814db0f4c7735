//! What the other sessions of the database are doing, as far as bulk writers care: whether the
//! API is serving requests now, so that an import yields to interactive reads on a shared box.

use crate::db::Role;
use crate::{Db, Result};

/// Whether a session of the API ran a statement in the last `within` (or runs one now), on
/// this server. Sessions are told apart by their `application_name` ([`Role`]).
pub async fn api_busy(db: &Db, within: std::time::Duration) -> Result<bool> {
    let client = db.client().await?;
    let row = client
        .query_one(
            "select exists (select 1 from pg_stat_activity
                             where application_name = $1 and backend_type = 'client backend'
                               and (state = 'active'
                                    or state_change > now() - make_interval(secs => $2)))",
            &[&Role::Api.application_name(), &within.as_secs_f64()],
        )
        .await?;
    Ok(row.try_get(0)?)
}
