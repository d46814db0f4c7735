//! What is kept only for a while (`BATCH_RETENTION_DAYS`): stored SDK batches, ended sync runs,
//! ended vendor pulls with the pages they kept, invitation codes, connect links and team
//! invitations past their expiry. The data they produced stays.

use crate::{Db, Result};

/// A kind of row that expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiring {
    /// Processed SDK batches, by when they arrived.
    Batches,
    /// Ended sync runs, by their last change.
    Runs,
    /// Ended vendor pulls (their pages go with them), by their last change.
    Pulls,
    /// Invitation codes, by when they expired (redeemed or not).
    InvitationCodes,
    /// Connect links, by when they expired.
    ConnectLinks,
    /// Invitations to join the team, by when they expired (accepted or not).
    TeamInvitations,
}

impl Expiring {
    pub const ALL: [Expiring; 6] = [
        Expiring::Batches,
        Expiring::Runs,
        Expiring::Pulls,
        Expiring::InvitationCodes,
        Expiring::ConnectLinks,
        Expiring::TeamInvitations,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Expiring::Batches => "batches",
            Expiring::Runs => "sync runs",
            Expiring::Pulls => "vendor pulls",
            Expiring::InvitationCodes => "invitation codes",
            Expiring::ConnectLinks => "connect links",
            Expiring::TeamInvitations => "team invitations",
        }
    }

    /// The table, its age column and what "ended" means there.
    fn parts(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Expiring::Batches => ("sdk_batches", "received_at", "status <> 'queued'"),
            Expiring::Runs => {
                ("sync_runs", "updated_at", "status in ('success', 'partial', 'failed')")
            }
            Expiring::Pulls => ("vendor_pulls", "updated_at", "status <> 'queued'"),
            Expiring::InvitationCodes => ("invitation_codes", "expires_at", "true"),
            Expiring::ConnectLinks => ("connect_links", "expires_at", "true"),
            Expiring::TeamInvitations => ("team_invitations", "expires_at", "true"),
        }
    }
}

/// Deletes at most `limit` rows of `what` older than `days`; returns how many.
pub async fn delete_expired(db: &Db, what: Expiring, days: i32, limit: i64) -> Result<u64> {
    let (table, age, ended) = what.parts();
    let client = db.client().await?;
    let sql = format!(
        "delete from {table} where id in (
             select id from {table}
             where {age} < now() - make_interval(days => $1) and {ended}
             limit $2)"
    );
    Ok(client.execute(&sql, &[&days, &limit]).await?)
}
