//! Sealed sessions (issue 31, V28): a source's sleep sessions and workouts that started in a past
//! UTC month move into one row per (user, source, month) that holds them as an array of the
//! table's own row type, compressed; a session row cost ~430 bytes with its indexes. Fresh
//! sessions stay rows.
//!
//! The rule every reader and writer relies on: a session is a row or in its month's block, never
//! both. Readers read both in one statement (`sleep_sessions_in`, `workouts_in`: [`Sessions::in_window`]).
//! Writers move the blocks they may touch back into rows first ([`unseal`]), so the lookups,
//! merges, upserts and deletes that find sessions by source, time or client id work on rows as
//! before. Both directions hold the user's writer lock.

use chrono::{DateTime, Datelike, Duration, TimeZone, Utc};
use deadpool_postgres::{GenericClient, Transaction};
use uuid::Uuid;

use crate::ids::UserId;
use crate::users::{WriterLock, lock_for_writing};
use crate::{Db, Result};

/// A table of sessions that seals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sessions {
    Sleep,
    Workouts,
}

impl Sessions {
    pub const ALL: [Sessions; 2] = [Sessions::Sleep, Sessions::Workouts];

    fn table(self) -> &'static str {
        match self {
            Sessions::Sleep => "sleep_sessions",
            Sessions::Workouts => "workouts",
        }
    }

    fn blocks(self) -> &'static str {
        match self {
            Sessions::Sleep => "sleep_blocks",
            Sessions::Workouts => "workout_blocks",
        }
    }

    /// Which rows (aliased `s`) seal: a workout with a route, or route files still to read,
    /// stays a row (a route is large, read and written on its own). The partial index
    /// `workouts_sealable_start_idx` has the same predicate.
    fn sealable(self) -> &'static str {
        match self {
            Sessions::Sleep => "true",
            Sessions::Workouts => {
                "s.route is null and jsonb_typeof(s.statistics -> 'route_files') is distinct from 'array'"
            }
        }
    }

    /// A user's (`user`, SQL) sessions that start in `[lo, hi)` (SQL), rows and sealed, with the
    /// table's columns: what a read puts where it read the table.
    pub(crate) fn in_window(self, user: &str, lo: &str, hi: &str) -> String {
        let function = match self {
            Sessions::Sleep => "sleep_sessions_in",
            Sessions::Workouts => "workouts_in",
        };
        format!("{function}({user}, {lo}, {hi})")
    }
}

/// How long a session lasts at most, as the stored sessions' rules assume (the events' duplicate
/// rule, the summaries' nights): a stored session that overlaps an instant started at most this
/// long before it.
pub const LONGEST: Duration = Duration::days(2);

/// What a writer may touch of one source's sessions: those that start in `[from, to)`, and the
/// one with its client id.
#[derive(Debug, Clone, PartialEq)]
pub struct Touch {
    pub data_source_id: Uuid,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub external_id: Option<String>,
}

/// The statement that moves the blocks of user `$1` (aliased `b`) that meet `condition` back
/// into rows; it counts the sessions moved.
fn restore(kind: Sessions, condition: &str) -> String {
    format!(
        "with taken as (
             delete from {blocks} b where b.user_id = $1 and {condition} returning b.sessions)
         insert into {table} select r.* from taken t cross join lateral unnest(t.sessions) r",
        blocks = kind.blocks(),
        table = kind.table(),
    )
}

/// Moves the blocks `touches` may reach back into rows (the months their windows meet, and any
/// that holds one of their client ids). Returns the sessions moved. The caller holds the user's
/// writer lock.
pub async fn unseal(
    tx: &Transaction<'_>,
    user_id: UserId,
    kind: Sessions,
    touches: &[Touch],
) -> Result<u64> {
    if touches.is_empty() {
        return Ok(0);
    }
    let sources: Vec<Uuid> = touches.iter().map(|t| t.data_source_id).collect();
    let froms: Vec<DateTime<Utc>> = touches.iter().map(|t| t.from).collect();
    let tos: Vec<DateTime<Utc>> = touches.iter().map(|t| t.to).collect();
    let ids: Vec<Option<&str>> = touches.iter().map(|t| t.external_id.as_deref()).collect();
    // Planned at each run: a key list joined to a table (see blocks::store's KEYS).
    let sql = restore(
        kind,
        "exists (
             select 1 from unnest($2::uuid[], $3::timestamptz[], $4::timestamptz[], $5::text[])
                           as k(d, lo, hi, ext)
             where k.d = b.data_source_id
               and ((b.month > k.lo - interval '1 month' and b.month < k.hi)
                    or k.ext = any(b.external_ids)))",
    );
    Ok(tx.execute(&sql, &[&user_id, &sources, &froms, &tos, &ids]).await?)
}

/// Moves the block that holds session `id` of the user back into rows (before it is deleted).
pub(crate) async fn unseal_id(
    tx: &Transaction<'_>,
    user_id: UserId,
    kind: Sessions,
    id: Uuid,
) -> Result<u64> {
    let sql = restore(kind, "exists (select 1 from unnest(b.sessions) r where r.id = $2)");
    Ok(tx.execute(&sql, &[&user_id, &id]).await?)
}

/// Moves all of a user's sealed sessions back into rows (before a reprocess deletes by batch).
/// The caller holds the user's exclusive writer lock.
pub async fn unseal_user(tx: &Transaction<'_>, user_id: UserId) -> Result<u64> {
    let mut moved = 0;
    for kind in Sessions::ALL {
        moved += tx.execute(&restore(kind, "true"), &[&user_id]).await?;
    }
    Ok(moved)
}

/// Moves back into rows the blocks of a user that hold sessions on both sides of `cutoff` (a
/// lifecycle cutoff: the sessions that ended by it go, the rest stay): the cutoff's own month,
/// and an earlier one with a session ending after it. The caller holds the user's exclusive
/// writer lock.
pub(crate) async fn unseal_across(
    tx: &Transaction<'_>,
    user_id: UserId,
    cutoff: DateTime<Utc>,
) -> Result<u64> {
    let mut moved = 0;
    let across = "b.month < $2
         and (b.month + interval '1 month' > $2
              or exists (select 1 from unnest(b.sessions) r where r.end_time > $2))";
    for kind in Sessions::ALL {
        moved += tx.execute(&restore(kind, across), &[&user_id, &cutoff]).await?;
    }
    Ok(moved)
}

/// The UTC midnight the month of `at` starts at: sessions that started before it seal once
/// `at` is the sealing age ago.
pub fn month_start(at: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(at.year(), at.month(), 1, 0, 0, 0).single().unwrap_or(at)
}

/// Users with sessions due for sealing (rows that started before `before` and may seal), those
/// of the oldest first, at most `limit`.
pub async fn due(db: &Db, before: DateTime<Utc>, limit: i64) -> Result<Vec<UserId>> {
    let client = db.client().await?;
    let mut users: Vec<UserId> = Vec::new();
    for kind in Sessions::ALL {
        let sql = format!(
            "select user_id from {} s where s.start_time < $1 and {} order by s.start_time limit $2",
            kind.table(),
            kind.sealable()
        );
        for r in client.query(&sql, &[&before, &limit]).await? {
            let user: UserId = r.try_get(0)?;
            if !users.contains(&user) {
                users.push(user);
            }
        }
    }
    Ok(users)
}

/// Seals the user's sessions that started before `before` (a UTC month start) into their
/// months' blocks, in one transaction under the user's exclusive writer lock. Returns the
/// sessions sealed (none when the user is gone).
pub async fn seal_user(db: &Db, user_id: UserId, before: DateTime<Utc>) -> Result<u64> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    if lock_for_writing(&tx, user_id, WriterLock::Exclusive).await?.is_none() {
        return Ok(0);
    }
    let mut sealed = 0;
    for kind in Sessions::ALL {
        let (table, blocks, sealable) = (kind.table(), kind.blocks(), kind.sealable());
        // A month with a block already (none should have: writers unseal first) gets the
        // sessions added to it.
        let sql = format!(
            "with moved as (
                 delete from {table} s where s.user_id = $1 and s.start_time < $2 and {sealable}
                 returning s),
             sealed as (
                 insert into {blocks} as b (user_id, data_source_id, month, sessions, external_ids)
                 select $1, (m.s).data_source_id, date_trunc('month', (m.s).start_time, 'UTC'),
                        array_agg(m.s order by (m.s).start_time, (m.s).id),
                        coalesce(array_agg((m.s).external_id)
                                     filter (where (m.s).external_id is not null), '{{}}')
                 from moved m group by 2, 3
                 on conflict (user_id, data_source_id, month) do update
                     set sessions = b.sessions || excluded.sessions,
                         external_ids = b.external_ids || excluded.external_ids)
             select count(*) from moved"
        );
        let n: i64 = tx.query_one(&sql, &[&user_id, &before]).await?.try_get(0)?;
        sealed += n as u64;
    }
    tx.commit().await?;
    Ok(sealed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_month_starts_at_its_first_utc_midnight() {
        let at = Utc.with_ymd_and_hms(2026, 3, 31, 23, 59, 59).single().unwrap_or_default();
        assert_eq!(
            month_start(at),
            Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).single().unwrap_or_default()
        );
        let first = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).single().unwrap_or_default();
        assert_eq!(month_start(first), first);
    }
}
