//! The per-user-local-day rollups of samples: what new samples add, exact recounts of days whose
//! samples changed, and full rebuilds.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use deadpool_postgres::Transaction;
use uuid::Uuid;

use crate::samples::SampleRow;
use crate::{Db, Result, zone};

const ADD: &str = include_str!("../queries/rollups_add.sql");
const CLEAR: &str = include_str!("../queries/rollups_clear.sql");
const RECOUNT: &str = include_str!("../queries/rollups_recount.sql");

/// One day's figures: intraday samples and pre-aggregated daily totals kept apart, as summaries
/// read them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Figures {
    sample_count: i64,
    value_sum: f64,
    value_min: Option<f64>,
    value_max: Option<f64>,
    total_count: i32,
    total_sum: f64,
}

/// What new samples add to their (series, source, local day) rollups, gathered before one
/// statement writes them.
#[derive(Debug, Default)]
pub(crate) struct Additions(BTreeMap<(i16, Uuid, NaiveDate), Figures>);

impl Additions {
    /// Counts a newly stored sample into its day.
    pub(crate) fn add(&mut self, r: &SampleRow) {
        let day = zone::local_day(r.ts, r.zone_offset);
        let f = self.0.entry((r.series_type_id, r.data_source_id, day)).or_default();
        if r.is_daily_total == Some(true) {
            f.total_count += 1;
            f.total_sum += r.value;
        } else {
            f.sample_count += 1;
            f.value_sum += r.value;
            f.value_min = Some(f.value_min.map_or(r.value, |m| m.min(r.value)));
            f.value_max = Some(f.value_max.map_or(r.value, |m| m.max(r.value)));
        }
    }

    /// Adds the gathered figures to the stored rollups; returns the rows written.
    pub(crate) async fn write(self, tx: &Transaction<'_>, user_id: Uuid) -> Result<u64> {
        if self.0.is_empty() {
            return Ok(0);
        }
        let n = self.0.len();
        let (mut series, mut sources, mut days) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut counts, mut sums, mut mins, mut maxes, mut totals, mut total_sums) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for ((s, source, day), f) in self.0 {
            series.push(s);
            sources.push(source);
            days.push(day);
            counts.push(f.sample_count);
            sums.push(f.value_sum);
            mins.push(f.value_min);
            maxes.push(f.value_max);
            totals.push(f.total_count);
            total_sums.push(f.total_sum);
        }
        let add = tx.prepare_cached(ADD).await?;
        Ok(tx
            .execute(
                &add,
                &[
                    &user_id,
                    &series,
                    &sources,
                    &days,
                    &counts,
                    &sums,
                    &mins,
                    &maxes,
                    &totals,
                    &total_sums,
                ],
            )
            .await?)
    }
}

/// Recounts, from the raw samples, the days listed in the session's `samples_touched` (and
/// their neighbours).
pub(crate) async fn recount_touched(tx: &Transaction<'_>, user_id: Uuid) -> Result<()> {
    tx.execute(CLEAR, &[&user_id]).await?;
    tx.execute(RECOUNT, &[&user_id]).await?;
    Ok(())
}

/// Rebuilds all of a user's rollups from their samples (after a reprocess).
pub async fn rebuild_user(db: &Db, user_id: Uuid) -> Result<()> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    tx.execute("delete from daily_rollups where user_id = $1", &[&user_id]).await?;
    tx.execute(
        "insert into samples_touched (series_type_id, data_source_id, local_date)
         select distinct series_type_id, data_source_id, local_day(ts, zone_offset)
         from samples where user_id = $1",
        &[&user_id],
    )
    .await?;
    recount_touched(&tx, user_id).await?;
    tx.commit().await?;
    Ok(())
}
