//! The samples hypertable's chunks, made before a writer needs them. TimescaleDB serialises
//! chunk creation on a lock of the hypertable that it holds to the end of the creating
//! transaction, so a writer that makes a chunk inside its own write holds back every other
//! writer that needs a new one until it commits: an import's two writers, each reaching a new
//! week, took turns (two fifths of a fresh import's time was that wait). Made here, in a
//! transaction of its own, the lock is held for two statements.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use crate::Result;
use crate::db::Db;
use crate::ids::SeriesId;
use crate::ids::UserId;

/// A series id no sample has: the placeholder rows [`Chunks::make`] writes and deletes again.
const PLACEHOLDER_SERIES: SeriesId = SeriesId(i16::MIN);

/// The ranges of the samples hypertable's chunks that overlap the days from `$1` to `$2`: one
/// evaluation of the catalogue's view (~3 ms with a hundred chunks), where asking it day by day
/// cost that a day.
const OVERLAPPING: &str = "
    select range_start, range_end from timescaledb_information.chunks
    where hypertable_schema = current_schema() and hypertable_name = 'samples'
      and range_end > $1 and range_start <= $2";

/// The chunks one writer (an import, with its parallel writers) knows to exist, by their time
/// ranges: a chunk of samples whose days they cover asks the catalogue nothing (a query of
/// ~3 ms a chunk of samples otherwise, a quarter of a second a GB). Known once, a range is
/// trusted: were its chunk dropped meanwhile (`delete_after_days`), the writer's COPY makes it
/// again itself, as before chunks were made ahead, so the cache costs speed at worst, never a
/// sample.
#[derive(Debug, Default)]
pub struct Chunks {
    /// Known ranges, by start.
    known: Mutex<BTreeMap<DateTime<Utc>, DateTime<Utc>>>,
}

impl Chunks {
    pub fn new() -> Chunks {
        Chunks::default()
    }

    /// Whether a known chunk covers `ts`.
    pub fn covers(&self, ts: DateTime<Utc>) -> bool {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        known.range(..=ts).next_back().is_some_and(|(_, end)| ts < *end)
    }

    fn learn(&self, ranges: impl IntoIterator<Item = (DateTime<Utc>, DateTime<Utc>)>) {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        known.extend(ranges);
    }

    /// Creates the chunks the UTC days of `times` fall in that do not exist yet; returns the
    /// days that needed one. The hypertable's chunks are whole UTC days (seven of them, V1), so
    /// a day's start names its chunk; were they not, a writer would make the rest itself, as
    /// before. A placeholder row a day makes each chunk and is deleted in the same transaction:
    /// nobody sees it, and an empty chunk is what TimescaleDB would have made anyway.
    pub async fn make(
        &self,
        db: &Db,
        user_id: UserId,
        times: impl IntoIterator<Item = DateTime<Utc>>,
    ) -> Result<u64> {
        let days: Vec<DateTime<Utc>> = times
            .into_iter()
            .map(crate::blocks::store::utc_day)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .filter(|d| !self.covers(*d))
            .collect();
        if days.is_empty() {
            return Ok(0);
        }
        let mut client = db.client().await?;
        let missing = self.look_up(&client, days).await?;
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
        // Their ranges are learnt by the next look-up, which the next chunk of samples with a
        // day in them makes anyway.
        Ok(made)
    }

    /// Learns the ranges of the chunks that overlap `days` (in order); returns the days none
    /// covers.
    async fn look_up(
        &self,
        client: &deadpool_postgres::Client,
        days: Vec<DateTime<Utc>>,
    ) -> Result<Vec<DateTime<Utc>>> {
        let (Some(first), Some(last)) = (days.first(), days.last()) else { return Ok(days) };
        let statement = client.prepare_cached(OVERLAPPING).await?;
        let ranges = client
            .query(&statement, &[first, last])
            .await?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<Vec<_>>>()?;
        self.learn(ranges);
        Ok(days.into_iter().filter(|d| !self.covers(*d)).collect())
    }
}
