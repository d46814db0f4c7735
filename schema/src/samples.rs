//! Writing samples. A batch whose samples are all new (the usual case) is copied straight into
//! the hypertable with binary COPY; one that repeats stored samples (the COPY meets the unique
//! key and is rolled back) goes through a staging table and a deduplicating upsert
//! (`queries/samples_upsert.sql`). Either way the new samples are added to the daily and hourly
//! rollups, the days and hours of changed ones are recounted, and one outbox event per series
//! names what the batch brought.

use deadpool_postgres::Transaction;
use futures::pin_mut;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::Result;
use crate::ids::UserId;
use crate::outbox::Spans;
use crate::rollups::Additions;

pub use crate::sample_row::SampleRow;
use crate::sample_row::{COLUMNS, TYPES};

/// What storing a batch of samples did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stored {
    /// Rows after collapsing duplicates within the batch.
    pub distinct: i64,
    pub inserted: i64,
    /// Rows already stored with another value (or zone), now replaced.
    pub updated: i64,
    /// Rows already stored exactly so.
    pub unchanged: i64,
    pub events: i64,
}

const UPSERT: &str = include_str!("../queries/samples_upsert.sql");

/// The rows with one per dedup key (series, time, source), the last one sent winning, in key
/// order (which also suits the index they go into).
fn dedup(rows: &[SampleRow]) -> Vec<&SampleRow> {
    let mut sorted: Vec<&SampleRow> = rows.iter().collect();
    // Stable: among equal keys the order sent is kept, so the last is the latest.
    sorted.sort_by_key(|r| (r.series_type_id, r.ts, r.data_source_id));
    let mut out: Vec<&SampleRow> = Vec::with_capacity(sorted.len());
    for r in sorted {
        match out.last_mut() {
            Some(last)
                if (last.series_type_id, last.ts, last.data_source_id)
                    == (r.series_type_id, r.ts, r.data_source_id) =>
            {
                *last = r;
            }
            _ => out.push(r),
        }
    }
    out
}

/// Where a batch's rows are copied.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// Straight into the hypertable, with their user and batch.
    Samples { user_id: UserId, batch_id: Uuid },
    /// Into the session's staging table, for the upsert.
    Staging,
}

async fn copy(
    tx: &Transaction<'_>,
    target: Target,
    rows: &[&SampleRow],
) -> Result<(), tokio_postgres::Error> {
    let (statement, types) = match target {
        Target::Samples { .. } => {
            (format!("copy samples ({COLUMNS}, user_id, batch_id) from stdin binary"), &TYPES[..])
        }
        Target::Staging => (format!("copy samples_in ({COLUMNS}) from stdin binary"), &TYPES[..6]),
    };
    let sink = tx.copy_in(&statement).await?;
    let writer = BinaryCopyInWriter::new(sink, types);
    pin_mut!(writer);
    for r in rows {
        let columns: [&(dyn ToSql + Sync); 6] = [
            &r.series_type_id,
            &r.data_source_id,
            &r.ts,
            &r.value,
            &r.zone_offset,
            &r.is_daily_total,
        ];
        match &target {
            Target::Samples { user_id, batch_id } => {
                let [a, b, c, d, e, f] = columns;
                writer.as_mut().write(&[a, b, c, d, e, f, user_id, batch_id]).await?;
            }
            Target::Staging => writer.as_mut().write(&columns).await?,
        }
    }
    writer.finish().await?;
    Ok(())
}

/// Copies rows that are all new straight into the hypertable: no conflict check per row, no
/// staging. `false` when one of them is stored already; nothing is written then (the savepoint
/// is rolled back).
async fn insert_new(
    tx: &Transaction<'_>,
    user_id: UserId,
    batch_id: Uuid,
    rows: &[&SampleRow],
) -> Result<bool> {
    crate::db::copied_if_new(
        tx,
        "samples_new",
        copy(tx, Target::Samples { user_id, batch_id }, rows),
    )
    .await
}

/// Stages the rows and upserts them; returns the rows inserted (`true`) or changed (`false`).
async fn upsert(
    tx: &Transaction<'_>,
    user_id: UserId,
    batch_id: Uuid,
    rows: &[&SampleRow],
) -> Result<Vec<(SampleRow, bool)>> {
    copy(tx, Target::Staging, rows).await?;
    let upsert = tx.prepare_cached(UPSERT).await?;
    tx.query(&upsert, &[&user_id, &batch_id])
        .await?
        .iter()
        .map(|r| {
            let row = SampleRow {
                series_type_id: r.try_get("series_type_id")?,
                data_source_id: r.try_get("data_source_id")?,
                ts: r.try_get("ts")?,
                value: r.try_get("value")?,
                zone_offset: r.try_get("zone_offset")?,
                is_daily_total: r.try_get("is_daily_total")?,
            };
            Ok((row, r.try_get("inserted")?))
        })
        .collect()
}

/// Stores `rows` for one user inside the caller's transaction (which holds the user's row lock,
/// so no other batch of theirs is written meanwhile). `events`: whether to write one outbox
/// event per series type for the rows inserted or changed.
pub async fn store(
    tx: &Transaction<'_>,
    user_id: UserId,
    batch_id: Uuid,
    provider: &str,
    rows: &[SampleRow],
    events: bool,
) -> Result<Stored> {
    if rows.is_empty() {
        return Ok(Stored::default());
    }
    let rows = dedup(rows);
    let distinct = rows.len() as i64;
    // Sealed days first: what a block holds already is dropped, days that change are unsealed.
    let absorbed = crate::blocks::store::absorb(tx, user_id, rows).await?;
    let rows = absorbed.rows;
    if rows.is_empty() {
        return Ok(Stored { distinct, unchanged: distinct, ..Stored::default() });
    }
    if insert_new(tx, user_id, batch_id, &rows).await? {
        let stored = stored_new(tx, user_id, batch_id, provider, &rows, events).await?;
        return Ok(Stored { distinct, unchanged: absorbed.unchanged, ..stored });
    }
    let (mut additions, mut spans) = (Additions::default(), Spans::default());
    let (mut inserted, mut changed) = (0, Vec::new());
    let upserted = upsert(tx, user_id, batch_id, &rows).await?;
    for (r, new) in &upserted {
        if *new {
            additions.add(r);
            inserted += 1;
        } else {
            changed.push(r);
        }
        spans.add(r.series_type_id, r.ts);
    }
    let updated = changed.len() as i64;
    additions.write(tx, user_id).await?;
    let events = if events { spans.write(tx, user_id, batch_id, provider).await? } else { 0 };
    // After the additions: a recount rebuilds its days (and their neighbours) from the samples,
    // so sealed neighbours are rows again first.
    if updated > 0 {
        crate::blocks::store::unseal_for_recount(tx, user_id, &changed).await?;
        crate::rollups::recount_touched(tx, user_id).await?;
    }
    Ok(Stored { distinct, inserted, updated, unchanged: distinct - inserted - updated, events })
}

/// Deletes the samples `batches` stored for a user (before a reprocess writes them again),
/// sealed days included: under the user's exclusive writer lock, the user's blocks are moved
/// back into rows first (the sealer seals them again once quiet).
pub(crate) async fn delete_batches(
    tx: &Transaction<'_>,
    user_id: UserId,
    batches: &[Uuid],
) -> Result<u64> {
    if batches.is_empty() {
        return Ok(0);
    }
    crate::users::lock_for_writing(tx, user_id, crate::users::WriterLock::Exclusive).await?;
    crate::blocks::unseal_user(tx, user_id).await?;
    Ok(tx
        .execute(
            "delete from samples where user_id = $1 and batch_id = any($2)",
            &[&user_id, &batches],
        )
        .await?)
}

/// Rebuilds all of a user's rollups from their samples (after a reprocess). Rebuilt from rows:
/// under the user's exclusive writer lock, sealed days are moved back first (the sealer seals
/// them again once quiet).
pub async fn rebuild_rollups(db: &crate::Db, user_id: UserId) -> Result<()> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    crate::users::lock_for_writing(&tx, user_id, crate::users::WriterLock::Exclusive).await?;
    crate::blocks::unseal_user(&tx, user_id).await?;
    crate::rollups::rebuild_all(&tx, user_id).await?;
    tx.commit().await?;
    Ok(())
}

/// Like [`store`], for a writer that holds the user's row only in share mode, beside other such
/// writers (an import's chunks, written in parallel): stores the rows only if none of their keys
/// is stored yet. `None` when the COPY met a stored key: the caller rolls back and writes them
/// with [`store`] under the user's exclusive lock, since the deduplicating path's recount is
/// exact only when no other writer adds to the same days meanwhile. Adding to rollups is safe
/// in parallel: additions commute, and each statement takes its rows in key order.
pub async fn store_new(
    tx: &Transaction<'_>,
    user_id: UserId,
    batch_id: Uuid,
    provider: &str,
    rows: &[SampleRow],
    events: bool,
) -> Result<Option<Stored>> {
    if rows.is_empty() {
        return Ok(Some(Stored::default()));
    }
    let rows = dedup(rows);
    // A sealed day is unsealed under the exclusive lock only.
    if !crate::blocks::store::sealed_among(tx, user_id, &crate::blocks::store::day_keys(&rows))
        .await?
        .is_empty()
        || !insert_new(tx, user_id, batch_id, &rows).await?
    {
        return Ok(None);
    }
    stored_new(tx, user_id, batch_id, provider, &rows, events).await.map(Some)
}

/// Rollups and events of rows the COPY stored as new.
async fn stored_new(
    tx: &Transaction<'_>,
    user_id: UserId,
    batch_id: Uuid,
    provider: &str,
    rows: &[&SampleRow],
    events: bool,
) -> Result<Stored> {
    let (mut additions, mut spans) = (Additions::default(), Spans::default());
    for r in rows {
        additions.add(r);
        spans.add(r.series_type_id, r.ts);
    }
    additions.write(tx, user_id).await?;
    let events = if events { spans.write(tx, user_id, batch_id, provider).await? } else { 0 };
    let distinct = rows.len() as i64;
    Ok(Stored { distinct, inserted: distinct, updated: 0, unchanged: 0, events })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(series: i16, secs: i64, value: f64) -> SampleRow {
        SampleRow {
            series_type_id: crate::ids::SeriesId(series),
            data_source_id: Uuid::nil(),
            ts: chrono::DateTime::from_timestamp(secs, 0).unwrap_or_default(),
            value,
            zone_offset: None,
            is_daily_total: None,
        }
    }

    #[test]
    fn the_last_duplicate_wins() {
        let rows = [row(1, 10, 1.0), row(2, 5, 2.0), row(1, 10, 3.0), row(1, 5, 4.0)];
        let out: Vec<(i16, f64)> =
            dedup(&rows).iter().map(|r| (r.series_type_id.0, r.value)).collect();
        assert_eq!(out, vec![(1, 4.0), (1, 3.0), (2, 2.0)]);
    }
}
