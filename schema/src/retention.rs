//! What is kept only for a while (`BATCH_RETENTION_DAYS`): stored SDK batches, ended sync runs,
//! ended vendor pulls with the pages they kept, invitation codes, connect links and team
//! invitations past their expiry. The data they produced stays.

use postgres_types::ToSql;

use crate::sdk_batches::BatchStatus;
use crate::sync_runs::RunStatus;
use crate::vendor_pulls::PullStatus;
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

    /// The table, its age column and the states its rows end in (`None`: every row expires).
    fn parts(self) -> (&'static str, &'static str, Option<Box<dyn ToSql + Sync + Send>>) {
        match self {
            Expiring::Batches => (
                "sdk_batches",
                "received_at",
                Some(Box::new(vec![BatchStatus::Done, BatchStatus::Failed])),
            ),
            Expiring::Runs => {
                let ended = vec![RunStatus::Success, RunStatus::Partial, RunStatus::Failed];
                ("sync_runs", "updated_at", Some(Box::new(ended)))
            }
            Expiring::Pulls => (
                "vendor_pulls",
                "updated_at",
                Some(Box::new(vec![PullStatus::Done, PullStatus::Failed])),
            ),
            Expiring::InvitationCodes => ("invitation_codes", "expires_at", None),
            Expiring::ConnectLinks => ("connect_links", "expires_at", None),
            Expiring::TeamInvitations => ("team_invitations", "expires_at", None),
        }
    }
}

/// Deletes at most `limit` rows of `what` older than `days`; returns how many.
pub async fn delete_expired(db: &Db, what: Expiring, days: i32, limit: i64) -> Result<u64> {
    let (table, age, ended) = what.parts();
    let client = db.client().await?;
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![&days, &limit];
    let states = match &ended {
        Some(states) => {
            params.push(states.as_ref());
            "status = any($3)"
        }
        None => "true",
    };
    let sql = format!(
        "delete from {table} where id in (
             select id from {table}
             where {age} < now() - make_interval(days => $1) and {states}
             limit $2)"
    );
    Ok(client.execute(&sql, &params).await?)
}
