//! The samples hypertable's chunks, made before a writer needs them. TimescaleDB serialises
//! chunk creation on a lock of the hypertable that it holds to the end of the creating
//! transaction, so a writer that makes a chunk inside its own write holds back every other
//! writer that needs a new one until it commits: an import's two writers, each reaching a new
//! week, took turns (two fifths of a fresh import's time was that wait). Made here, in a
//! transaction of its own, the lock is held for two statements.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::Result;
use crate::db::Db;

/// A series id no sample has: the placeholder rows [`make`] writes and deletes again.
const PLACEHOLDER_SERIES: i16 = i16::MIN;

/// The UTC days among `times` that no chunk of the samples hypertable covers yet.
const MISSING: &str = "
    select d from unnest($1::timestamptz[]) as d
    where not exists (
        select from timescaledb_information.chunks c
        where c.hypertable_schema = current_schema() and c.hypertable_name = 'samples'
          and d >= c.range_start and d < c.range_end)";

/// Creates the chunks the UTC days of `times` fall in that do not exist yet; returns the days
/// that needed one. The hypertable's chunks are whole UTC days (seven of them, V1), so a day's
/// start names its chunk; were they not, a writer would make the rest itself, as before. A
/// placeholder row a day makes each chunk and is deleted in the same transaction: nobody sees
/// it, and an empty chunk is what TimescaleDB would have made anyway.
pub async fn make(
    db: &Db,
    user_id: Uuid,
    times: impl IntoIterator<Item = DateTime<Utc>>,
) -> Result<u64> {
    let days: Vec<DateTime<Utc>> = times
        .into_iter()
        .map(crate::blocks::store::utc_day)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if days.is_empty() {
        return Ok(0);
    }
    let mut client = db.client().await?;
    let missing: Vec<DateTime<Utc>> = client
        .query(MISSING, &[&days])
        .await?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?;
    if missing.is_empty() {
        return Ok(0);
    }
    let tx = client.transaction().await?;
    let made = tx
        .execute(
            "insert into samples (user_id, series_type_id, data_source_id, ts, value)
             select $1, $2, $1, d, 0 from unnest($3::timestamptz[]) as d
             on conflict do nothing",
            &[&user_id, &PLACEHOLDER_SERIES, &missing],
        )
        .await?;
    tx.execute(
        "delete from samples where user_id = $1 and series_type_id = $2 and ts = any($3)",
        &[&user_id, &PLACEHOLDER_SERIES, &missing],
    )
    .await?;
    tx.commit().await?;
    Ok(made)
}
