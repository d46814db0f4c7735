//! The deployment's lifecycle setting (`DELETE_AFTER_DAYS`): health data whose time lies wholly
//! before a cutoff is deleted, whole blocks and whole chunks where it can be. Lossless until
//! then: nothing is aggregated away first, as the open system does. Everything the data made
//! goes with it (rollups, hours, sessions), so every read agrees with every other: the two
//! local days the cutoff cuts through (in some zone) are recounted from what is left.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use uuid::Uuid;

use crate::ids::SeriesId;
use crate::ids::UserId;
use crate::users::{WriterLock, lock_for_writing};
use crate::{Db, Result};

/// The first moment kept: the UTC midnight `days` days before `now`'s day. Blocks and UTC day
/// rollups are whole days, so a cutoff at a midnight drops whole ones.
pub fn cutoff(now: DateTime<Utc>, days: u32) -> DateTime<Utc> {
    crate::blocks::store::utc_day(now) - Duration::days(i64::from(days))
}

/// The last local day wholly before `cutoff`, in any zone: a local day ends at most 12 hours
/// after its UTC namesake does (zones run from -12:00 to +14:00), so a local day two days
/// before the cutoff's date has ended by the cutoff.
fn last_local_day_before(cutoff: DateTime<Utc>) -> NaiveDate {
    cutoff.date_naive() - Duration::days(2)
}

/// What dates a row of a table of health data.
#[derive(Debug, Clone, Copy)]
enum Before {
    /// A condition on `$2`, the cutoff.
    Time(&'static str),
    /// A condition on `$2`, the last local day wholly before the cutoff.
    LocalDay(&'static str),
}

/// Each table of health data and what says a row lies wholly before the cutoff. Each leads
/// with the user, as its index does.
const AGED: [(&str, Before); 11] = [
    ("sample_blocks", Before::Time("day < $2")),
    ("samples", Before::Time("ts < $2")),
    ("hourly_rollups", Before::Time("hour < $2")),
    ("utc_day_rollups", Before::Time("day < $2")),
    ("daily_rollups", Before::LocalDay("local_date <= $2")),
    ("workouts", Before::Time("start_time < $2 and end_time <= $2")),
    ("sleep_sessions", Before::Time("start_time < $2 and end_time <= $2")),
    // What is left of them before the cutoff ended by it (`session_blocks::unseal_across`).
    ("workout_blocks", Before::Time("month < $2")),
    ("sleep_blocks", Before::Time("month < $2")),
    ("activity_sessions", Before::Time("start_time < $2 and end_time <= $2")),
    ("menstrual_cycles", Before::Time("start_time < $2 and coalesce(end_time, start_time) <= $2")),
];

/// Deletes one user's data before `cutoff`, in one transaction under the user's writer lock
/// (sealing and recounts see all of it gone or none). Returns the rows deleted.
pub async fn delete_before(db: &Db, user_id: UserId, cutoff: DateTime<Utc>) -> Result<u64> {
    let last_local = last_local_day_before(cutoff);
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    if lock_for_writing(&tx, user_id, WriterLock::Exclusive).await?.is_none() {
        return Ok(0);
    }
    // A block that spans the cutoff goes back into rows first: its days before go, the rest stay.
    crate::blocks::store::unseal_across(&tx, user_id, cutoff).await?;
    crate::session_blocks::unseal_across(&tx, user_id, cutoff).await?;
    let mut rows: u64 = 0;
    for (table, before) in AGED {
        rows += match before {
            Before::Time(cond) => {
                let sql = format!("delete from {table} where user_id = $1 and {cond}");
                tx.execute(&sql, &[&user_id, &cutoff]).await?
            }
            Before::LocalDay(cond) => {
                let sql = format!("delete from {table} where user_id = $1 and {cond}");
                tx.execute(&sql, &[&user_id, &last_local]).await?
            }
        };
    }
    if rows > 0 {
        recount_cut_days(&tx, user_id, cutoff).await?;
    }
    tx.commit().await?;
    Ok(rows)
}

/// Recounts the local days the cutoff cuts through, the day before its date and its date
/// (their samples before the cutoff are gone), from the samples left: the UTC days their
/// recount reads (the cutoff's and the next) are moved back into rows first, to be sealed again
/// once quiet. Runs once a cutoff moves (a pass that deletes nothing recounts nothing).
async fn recount_cut_days(
    tx: &deadpool_postgres::Transaction<'_>,
    user_id: UserId,
    cutoff: DateTime<Utc>,
) -> Result<()> {
    let day_before = cutoff.date_naive() - Duration::days(1);
    let touched = tx
        .query(
            "insert into samples_touched (series_type_id, data_source_id, local_date, hour)
             select distinct series_type_id, data_source_id, $2::date, null::timestamptz
             from daily_rollups
             where user_id = $1 and local_date between $2 and $2 + 1
             returning series_type_id, data_source_id",
            &[&user_id, &day_before],
        )
        .await?;
    if touched.is_empty() {
        return Ok(());
    }
    let mut keys = Vec::with_capacity(touched.len() * 2);
    for r in &touched {
        let (series_type_id, data_source_id): (SeriesId, Uuid) = (r.try_get(0)?, r.try_get(1)?);
        for day in [cutoff, cutoff + Duration::days(1)] {
            keys.push(crate::blocks::DayKey { series_type_id, data_source_id, day });
        }
    }
    crate::blocks::unseal(tx, user_id, &keys).await?;
    crate::rollups::recount_local_days(tx, user_id).await
}

/// Drops the `samples` chunks that end by `cutoff` whole (no row-by-row delete, no dead rows
/// left to vacuum). Returns how many.
pub async fn drop_chunks(db: &Db, cutoff: DateTime<Utc>) -> Result<u64> {
    let client = db.client().await?;
    let rows = client
        .query("select drop_chunks('samples', older_than => $1::timestamptz)", &[&cutoff])
        .await?;
    Ok(rows.len() as u64)
}

/// The lifecycle pass's lock (`Db::try_lock`): one pass at a time, whatever the workers running.
pub const PASS_LOCK: &str = "wearhouse.lifecycle";

/// A page of users by id, after `after`: what a pass over every user walks.
pub async fn users_after(db: &Db, after: Option<UserId>, limit: i64) -> Result<Vec<UserId>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "select id from users where $1::uuid is null or id > $1 order by id limit $2",
            &[&after, &limit],
        )
        .await?;
    rows.iter().map(|r| r.try_get(0).map_err(Into::into)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_reaches_every_table_of_health_data() {
        let mut aged: Vec<&str> = AGED.iter().map(|(t, _)| *t).collect();
        let mut health: Vec<&str> = crate::storage::HEALTH.iter().map(|(t, _)| *t).collect();
        aged.sort_unstable();
        health.sort_unstable();
        assert_eq!(aged, health);
    }

    #[test]
    fn the_cutoff_is_a_midnight_and_local_days_before_it_have_ended_everywhere() {
        let now = DateTime::parse_from_rfc3339("2026-11-26T20:52:00Z").expect("time").to_utc();
        let cut = cutoff(now, 30);
        assert_eq!(cut.to_rfc3339(), "2026-10-27T00:00:00+00:00");
        let last = last_local_day_before(cut);
        // The local day ends at its midnight in the zone furthest west (-12:00).
        let end = last.succ_opt().and_then(|d| d.and_hms_opt(12, 0, 0)).expect("a day").and_utc();
        assert!(end <= cut, "{last} ends at {end}, after {cut}");
        // The next local day has not ended there.
        let next_end = end + Duration::days(1);
        assert!(next_end > cut);
    }
}
