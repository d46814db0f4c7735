//! Moving a day's samples between rows and its block: sealing a quiet day into one block row,
//! and moving a block back into rows before a writer brings the day something new.
//!
//! The rule every reader and writer relies on: a (user, series, source, UTC day) holds its
//! samples in rows or in its block, never both. Both directions run under the user's exclusive
//! writer lock (`users::lock_for_writing`), which every writer of samples holds.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use deadpool_postgres::{GenericClient, Transaction};
use futures::pin_mut;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use super::codec::{self, BlockSample};
use super::days::{self, SpanDays};
use super::hours::{self, DAY_HOURS, SpanHours};
use super::local_days::{self, HeldDays};
use crate::ids::SeriesId;
use crate::ids::UserId;
use crate::rollups::{DayFigures, HourFigures, HourRows, LocalDays, Span};
use crate::sample_row::SampleRow;
use crate::users::{WriterLock, lock_for_writing};
use crate::{Db, Result};

const DAY: i64 = 86_400;
/// The most UTC days a block spans (every read of blocks looks this far before its window for
/// a block that reaches into it)...
pub(crate) const SPAN_DAYS: i64 = 32;
/// ...and the most samples it holds: a sparse series keeps weeks in a block, a dense one (a day
/// over this) a block a day. A read decodes whole blocks, so this bounds the
/// samples a read decodes beyond its window's days.
pub(crate) const SPAN_SAMPLES: usize = 2048;
/// How far from a changed sample's UTC day the rollups' recount reads samples: the local days
/// around the sample's (`rollups_recount.sql` rebuilds its local day and both neighbours, each
/// from the samples of the UTC days around it). A changed sample unseals these days first.
const RECOUNT_REACH_DAYS: i64 = 3;

/// One sealable unit of one user's samples: a series of a source on a UTC day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DayKey {
    pub series_type_id: SeriesId,
    pub data_source_id: Uuid,
    /// The UTC midnight the day starts at.
    pub day: DateTime<Utc>,
}

impl DayKey {
    /// The day a sample of this series and source at `ts` is stored in.
    pub fn of(series_type_id: SeriesId, data_source_id: Uuid, ts: DateTime<Utc>) -> DayKey {
        DayKey { series_type_id, data_source_id, day: utc_day(ts) }
    }

    /// A key from a row's `series_type_id, data_source_id, day`, from column `at` on.
    fn from_row(r: &tokio_postgres::Row, at: usize) -> Result<DayKey> {
        Ok(DayKey {
            series_type_id: r.try_get(at)?,
            data_source_id: r.try_get(at + 1)?,
            day: r.try_get(at + 2)?,
        })
    }

    fn shifted(self, days: i64) -> DayKey {
        DayKey { day: self.day + Duration::days(days), ..self }
    }
}

/// The UTC midnight `ts` falls after.
pub fn utc_day(ts: DateTime<Utc>) -> DateTime<Utc> {
    crate::rollups::floor_to(ts, DAY)
}

/// A list of keys as a table `k(s, d, day)`, from the parallel arrays `$2`–`$4` ([`columns`]).
/// Statements that join it to a table are planned at each run, never cached: a plan cached
/// while the table was small scans it whole for every key list (sealing a fresh deployment's
/// backlog spent 13 ms a transaction so, until the table was next analyzed).
const KEYS: &str = "unnest($2::smallint[], $3::uuid[], $4::timestamptz[]) as k(s, d, day)";

/// Matches the rows of a table keyed by user and day (`sample_blocks`, `utc_day_rollups`),
/// aliased `t`, to the keys of [`KEYS`] of user `$1`.
fn on_key(t: &str) -> String {
    format!(
        "{t}.user_id = $1 and {t}.series_type_id = k.s and {t}.data_source_id = k.d \
         and {t}.day = k.day"
    )
}

/// [`KEYS`] as stretches `k(s, d, lo, hi, days)`: per series and source, from its first day to
/// the end of its last, and its days. A statement reads a range of an index per stretch, not an
/// index probe per day (and, on the hypertable, per chunk): a transaction takes weeks of a
/// series.
fn stretches() -> String {
    format!(
        "(select k.s, k.d, min(k.day) as lo, max(k.day) + interval '1 day' as hi,
                 array_agg(k.day) as days
          from {KEYS} group by 1, 2) k"
    )
}

/// Matches the rows (aliased `t`, timed by `column`) of the days of [`stretches`] of user `$1`,
/// inside the span `[$5, $6)` (constant bounds, so the planner reads only its chunks).
fn on_stretch(t: &str, column: &str) -> String {
    format!(
        "{t}.user_id = $1 and {t}.series_type_id = k.s and {t}.data_source_id = k.d \
         and {t}.{column} >= k.lo and {t}.{column} < k.hi \
         and {t}.{column} >= $5 and {t}.{column} < $6 \
         and time_bucket(interval '1 day', {t}.{column}) = any(k.days)"
    )
}

/// The hourly rollup rows of `days`, whose span is `[from, to)`.
async fn hour_rows(
    client: &impl GenericClient,
    user_id: UserId,
    days: &[DayKey],
    (from, to): (DateTime<Utc>, DateTime<Utc>),
) -> Result<Vec<(DayKey, DateTime<Utc>, HourFigures)>> {
    let (series, sources, starts) = columns(days);
    let statement = format!(
        "select k.s, k.d, r.hour, r.sample_count, r.value_sum, r.total_count,
                    r.total_sum, r.value_max, r.zone_offset
             from {} join hourly_rollups r on {}",
        stretches(),
        on_stretch("r", "hour")
    );
    let rows =
        client.query(&statement, &[&user_id, &series, &sources, &starts, &from, &to]).await?;
    rows.iter()
        .map(|r| {
            let hour: DateTime<Utc> = r.try_get(2)?;
            Ok((DayKey::of(r.try_get(0)?, r.try_get(1)?, hour), hour, figures_at(r, 3)?))
        })
        .collect()
}

/// The UTC day rollups of those of `days` that have one, by day.
async fn day_rows(
    client: &impl GenericClient,
    user_id: UserId,
    days: &[DayKey],
) -> Result<BTreeMap<DayKey, HourFigures>> {
    let (series, sources, starts) = columns(days);
    let statement = format!(
        "select r.series_type_id, r.data_source_id, r.day, r.sample_count, r.value_sum,
                    r.total_count, r.total_sum, r.value_max, r.zone_offset
             from {KEYS} join utc_day_rollups r on {}",
        on_key("r")
    );
    let rows = client.query(&statement, &[&user_id, &series, &sources, &starts]).await?;
    rows.iter().map(|r| Ok((DayKey::from_row(r, 0)?, figures_at(r, 3)?))).collect()
}

/// Figures from a row's `sample_count, value_sum, total_count, total_sum, value_max,
/// zone_offset`, from column `at` on.
fn figures_at(r: &tokio_postgres::Row, at: usize) -> Result<HourFigures> {
    Ok(HourFigures {
        sample_count: r.try_get(at)?,
        value_sum: r.try_get(at + 1)?,
        total_count: r.try_get(at + 2)?,
        total_sum: r.try_get(at + 3)?,
        value_max: r.try_get(at + 4)?,
        zone_offset: r.try_get(at + 5)?,
    })
}

/// The parallel arrays `unnest` reads a list of keys from.
fn columns(keys: &[DayKey]) -> (Vec<SeriesId>, Vec<Uuid>, Vec<DateTime<Utc>>) {
    let series = keys.iter().map(|k| k.series_type_id).collect();
    let sources = keys.iter().map(|k| k.data_source_id).collect();
    let days = keys.iter().map(|k| k.day).collect();
    (series, sources, days)
}

/// Which of several sealers running side by side one is: each takes the users whose id hashes
/// to its index, so none waits on another's user lock or seals a day another just took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    index: u32,
    of: u32,
}

impl Share {
    /// The one sealer: every user.
    pub const ALL: Share = Share { index: 0, of: 1 };

    /// The `of` shares, each of one sealer (at least one).
    pub fn split(of: u32) -> impl Iterator<Item = Share> {
        let of = of.max(1);
        (0..of).map(move |index| Share { index, of })
    }

    /// The first share: the one that also does the work no share is split by (packing again,
    /// sessions, compaction).
    pub fn is_first(&self) -> bool {
        self.index == 0
    }
}

/// Days due for sealing, oldest first: not sealed, started before `day_before` and unchanged
/// since `unchanged_since`, at most `limit`, with their user; only users of `share`.
pub async fn due(
    db: &Db,
    day_before: DateTime<Utc>,
    unchanged_since: DateTime<Utc>,
    limit: i64,
    share: Share,
) -> Result<Vec<(UserId, DayKey)>> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached(
            "select user_id, series_type_id, data_source_id, day from utc_day_rollups
             where not sealed and day < $1 and changed_at <= $2
               and ($4::int = 1 or (hashtext(user_id::text) & 2147483647) % $4::int = $5::int)
             order by day limit $3",
        )
        .await?;
    let (of, index) = (share.of as i32, share.index as i32);
    let rows =
        client.query(&statement, &[&day_before, &unchanged_since, &limit, &of, &index]).await?;
    rows.iter().map(|r| Ok((r.try_get(0)?, DayKey::from_row(r, 1)?))).collect()
}

/// One user's days due for sealing (as [`due`] has them), oldest first, at most `limit`, each
/// with the samples its day rollup counts.
pub async fn due_for_user(
    db: &Db,
    user_id: UserId,
    day_before: DateTime<Utc>,
    unchanged_since: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<(DayKey, i64)>> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached(
            "select series_type_id, data_source_id, day,
                    sample_count::bigint + total_count::bigint
             from utc_day_rollups
             where user_id = $1 and not sealed and day < $2 and changed_at <= $3
             order by day limit $4",
        )
        .await?;
    let rows = client.query(&statement, &[&user_id, &day_before, &unchanged_since, &limit]).await?;
    rows.iter().map(|r| Ok((DayKey::from_row(r, 0)?, r.try_get(3)?))).collect()
}

/// The start of the oldest day not sealed (its samples are rows), if any: how far the sealer is
/// behind, beside `SEAL_AFTER_HOURS`. The first entry of the sealer's worklist index.
pub async fn oldest_unsealed(db: &Db) -> Result<Option<DateTime<Utc>>> {
    let client = db.client().await?;
    let statement =
        client.prepare_cached("select min(day) from utc_day_rollups where not sealed").await?;
    Ok(client.query_one(&statement, &[]).await?.try_get(0)?)
}

/// A user whose blocks are to be packed again (sealed before blocks spanned days), if any.
pub async fn repack_due(db: &Db) -> Result<Option<UserId>> {
    let client = db.client().await?;
    let row = client.query_opt("select user_id from block_repacks limit 1", &[]).await?;
    Ok(row.map(|r| r.try_get(0)).transpose()?)
}

/// The first days of a user's blocks that may share a block with others (those of a day over
/// [`SPAN_SAMPLES`] keep a block of their own), each with its samples, for [`seal`] to pack
/// again.
pub async fn packable_blocks(db: &Db, user_id: UserId) -> Result<Vec<(DayKey, i64)>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "select series_type_id, data_source_id, day, sample_count::bigint
             from sample_blocks where user_id = $1 and sample_count <= $2
             order by series_type_id, data_source_id, day",
            &[&user_id, &(SPAN_SAMPLES as i32)],
        )
        .await?;
    rows.iter().map(|r| Ok((DayKey::from_row(r, 0)?, r.try_get(3)?))).collect()
}

/// Takes a user off the repacking worklist.
pub async fn repacked(db: &Db, user_id: UserId) -> Result<()> {
    let client = db.client().await?;
    client.execute("delete from block_repacks where user_id = $1", &[&user_id]).await?;
    Ok(())
}

/// What one call to [`seal`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sealing {
    pub days: u64,
    pub samples: u64,
    /// Bytes of the blocks written.
    pub bytes: u64,
    /// Sessions sealed into their months' blocks (`session_blocks`).
    pub sessions: u64,
}

impl Sealing {
    /// Whether anything was sealed (or packed again): a sealer goes on without resting.
    pub fn progressed(&self) -> bool {
        self.days > 0 || self.sessions > 0
    }
}

impl std::ops::AddAssign for Sealing {
    fn add_assign(&mut self, done: Sealing) {
        self.days += done.days;
        self.samples += done.samples;
        self.bytes += done.bytes;
        self.sessions += done.sessions;
    }
}

/// Seals `days` of one user in one transaction: each day's rows become part of a block and the
/// rows are deleted, a statement for all the days at each step. The blocks already stored
/// around the days are taken apart and packed again with them ([`pack`]), so a sparse series
/// keeps growing one block a day at a time. Idempotent: a sealed day is sealed again as it is.
/// Nothing when the user is gone.
pub async fn seal(db: &Db, user_id: UserId, days: &[DayKey]) -> Result<Sealing> {
    if days.is_empty() {
        return Ok(Sealing::default());
    }
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    if lock_for_writing(&tx, user_id, WriterLock::Exclusive).await?.is_none() {
        return Ok(Sealing::default());
    }
    // The blocks the days may join, and every day they hold: all of them are packed again.
    let taken = blocks_near(&tx, user_id, days).await?;
    let taken_keys: Vec<DayKey> = taken.iter().map(|b| b.key).collect();
    let mut parts: BTreeMap<DayKey, DayPart> = BTreeMap::new();
    let mut local = LocalDays::new();
    for block in taken {
        local.extend(block.local_days()?);
        for part in block.into_parts()? {
            parts.insert(part.key, part);
        }
    }
    let all: BTreeSet<DayKey> = days.iter().copied().chain(parts.keys().copied()).collect();
    let all: Vec<DayKey> = all.into_iter().collect();
    let (Some(first_day), Some(last_day)) =
        (all.iter().map(|k| k.day).min(), all.iter().map(|k| k.day).max())
    else {
        return Ok(Sealing::default());
    };
    // The span the days cover: constant bounds, so only its chunks are read.
    let (from, to) = (first_day, last_day + Duration::days(1));
    let (series, sources, starts) = columns(&all);
    let on_day = on_stretch("s", "ts");
    let stretches = stretches();
    let select = format!(
        "select s.series_type_id, s.data_source_id, s.ts, s.value, s.zone_offset,
                    s.is_daily_total, s.batch_id
             from {stretches} join samples s on {on_day}
             order by 1, 2, 3"
    );
    let params: [&(dyn ToSql + Sync); 6] = [&user_id, &series, &sources, &starts, &from, &to];
    let rows = tx.query(&select, &params).await?;
    let mut by_day: BTreeMap<DayKey, Vec<BlockSample>> = BTreeMap::new();
    for r in &rows {
        let ts: DateTime<Utc> = r.try_get(2)?;
        let key = DayKey::of(r.try_get(0)?, r.try_get(1)?, ts);
        by_day.entry(key).or_default().push(BlockSample {
            ts,
            value: r.try_get(3)?,
            zone_offset: r.try_get(4)?,
            is_daily_total: r.try_get(5)?,
            batch_id: r.try_get(6)?,
        });
    }
    // Should a day have rows and a block (it never does: writers unseal first), the block's
    // samples are kept where the rows do not replace them.
    for (key, rows) in by_day {
        let part = parts.entry(key).or_insert_with(|| DayPart::empty(key));
        part.samples = merge(std::mem::take(&mut part.samples), rows);
    }
    // The days' hourly rollups and UTC day rollups still rows move into their blocks as stored.
    for (key, hour, figures) in hour_rows(&tx, user_id, &all, (from, to)).await? {
        if let (Some(h), Some(part)) = (hours::index(key.day, DAY_HOURS, hour), parts.get_mut(&key))
        {
            part.hours.get_or_insert_with(SpanHours::new).insert(h, figures);
        }
    }
    for (key, figures) in day_rows(&tx, user_id, &all).await? {
        if let Some(part) = parts.get_mut(&key) {
            part.day = Some(figures);
        }
    }
    let mut out =
        Sealing { days: days.len() as u64, samples: rows.len() as u64, ..Sealing::default() };
    let mut blocks = pack(parts.into_values().filter(|p| !p.samples.is_empty()).collect());
    // The local days the new blocks keep move in, from the blocks taken apart and from rows;
    // those of the old blocks the new ones do not keep go back into rows.
    local.extend(take_local_rows(&tx, user_id, &blocks).await?);
    let left = hold_local_days(&mut blocks, local);
    let (old_series, old_sources, old_days) = columns(&taken_keys);
    let delete_taken = format!("delete from sample_blocks b using {KEYS} where {}", on_key("b"));
    tx.execute(&delete_taken, &[&user_id, &old_series, &old_sources, &old_days]).await?;
    out.bytes = insert_blocks(&tx, user_id, &blocks).await?;
    crate::rollups::write_days(&tx, user_id, left).await?;
    // The hour rows and day rollups of the days now in blocks go (every sealed day is in one:
    // a day left without samples has none); a day left without a block is marked sealed, off
    // the worklist.
    let delete_hours =
        format!("delete from hourly_rollups r using {stretches} where {}", on_stretch("r", "hour"));
    tx.execute(&delete_hours, &params).await?;
    let delete = format!("delete from samples s using {stretches} where {on_day}");
    tx.execute(&delete, &params).await?;
    let in_blocks: Vec<DayKey> =
        blocks.iter().flat_map(|b| b.parts.iter().map(|p| p.key)).collect();
    let (series, sources, starts) = columns(&in_blocks);
    let delete_days = format!("delete from utc_day_rollups r using {KEYS} where {}", on_key("r"));
    tx.execute(&delete_days, &[&user_id, &series, &sources, &starts]).await?;
    tx.execute(
        &format!("update utc_day_rollups r set sealed = true from {KEYS} where {}", on_key("r")),
        &params[..4],
    )
    .await?;
    tx.commit().await?;
    Ok(out)
}

/// Deletes the `daily_rollups` rows of the local days `blocks` keep ([`local_days::held`]) and
/// returns them.
async fn take_local_rows(
    tx: &Transaction<'_>,
    user_id: UserId,
    blocks: &[Packed],
) -> Result<LocalDays> {
    let (mut series, mut sources, mut los, mut his) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for block in blocks {
        if let Some((lo, hi)) = block.held() {
            series.push(block.key.series_type_id);
            sources.push(block.key.data_source_id);
            los.push(lo);
            his.push(hi);
        }
    }
    if series.is_empty() {
        return Ok(LocalDays::new());
    }
    let rows = tx
        .query(
            "delete from daily_rollups r
             using unnest($2::smallint[], $3::uuid[], $4::date[], $5::date[]) as k(s, d, lo, hi)
             where r.user_id = $1 and r.series_type_id = k.s and r.data_source_id = k.d
               and r.local_date between k.lo and k.hi
             returning r.series_type_id, r.data_source_id, r.local_date, r.sample_count,
                       r.value_sum, r.value_min, r.value_max, r.total_count, r.total_sum",
            &[&user_id, &series, &sources, &los, &his],
        )
        .await?;
    rows.iter()
        .map(|r| Ok(((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?), DayFigures::from_row(r, 3)?)))
        .collect()
}

/// Gives each block the local days of `days` it keeps; returns the others.
fn hold_local_days(blocks: &mut [Packed], mut days: LocalDays) -> LocalDays {
    for block in blocks {
        let Some((lo, hi)) = block.held() else { continue };
        let (s, d) = (block.key.series_type_id, block.key.data_source_id);
        let keys: Vec<_> = days.range((s, d, lo)..=(s, d, hi)).map(|(k, _)| *k).collect();
        for k in keys {
            if let Some(f) = days.remove(&k) {
                block.local.insert(k.2, f);
            }
        }
    }
    days
}

/// Writes `blocks` (none of which overlaps a stored one). Returns the bytes of their encoded
/// samples, hours and days.
async fn insert_blocks(tx: &Transaction<'_>, user_id: UserId, blocks: &[Packed]) -> Result<u64> {
    let n = blocks.len();
    let mut bytes = 0;
    let (mut b_series, mut b_sources, mut b_days, mut spans) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut counts, mut firsts, mut lasts, mut data) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut bits, mut exceptions, mut figures, mut day_bits) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut local_bits, mut local_figures, mut local_samples) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    for block in blocks {
        let samples: Vec<BlockSample> =
            block.parts.iter().flat_map(|p| p.samples.iter().cloned()).collect();
        let (Some(first), Some(last)) = (samples.first(), samples.last()) else { continue };
        let encoded = codec::encode(&samples)?;
        let kept = hours::store(block.key.day, block.span * DAY_HOURS, &samples, &block.hours());
        let block_days = block.days();
        let day_bytes = days::store(block.key.day, block.span, &samples, &block_days);
        day_bits.push(days::bits(block.span, &block_days));
        bytes +=
            (encoded.len() + kept.exceptions.as_ref().map_or(0, Vec::len) + day_bytes.len()) as u64;
        b_series.push(block.key.series_type_id);
        b_sources.push(block.key.data_source_id);
        b_days.push(block.key.day);
        spans.push(block.span as i16);
        counts.push(i32::try_from(samples.len()).unwrap_or(i32::MAX));
        firsts.push(first.ts);
        lasts.push(last.ts);
        data.push(encoded);
        bits.push(kept.bits);
        exceptions.push(kept.exceptions);
        figures.push(day_bytes);
        let first = block.key.day.date_naive();
        let kept = (!block.local.is_empty()).then(|| local_days::store(first, &block.local));
        bytes += kept.as_ref().map_or(0, Vec::len) as u64;
        local_bits.push(kept.as_ref().map(|_| local_days::bits(first, block.span, &block.local)));
        local_samples.push(kept.as_ref().map(|_| local_days::samples(&block.local)));
        local_figures.push(kept);
    }
    tx.execute(
        "insert into sample_blocks
             (user_id, series_type_id, data_source_id, day, span, sample_count, first_ts, last_ts,
              data, hours, hour_exceptions, day_figures, days, local_days, local_figures,
              local_samples)
         select $1, b.s, b.d, b.day, b.span, b.n, b.f, b.l, b.data, b.bits::varbit, b.exc, b.days,
                b.day_bits::varbit, b.local_bits::varbit, b.local, b.local_n
         from unnest($2::smallint[], $3::uuid[], $4::timestamptz[], $5::smallint[],
                     $6::integer[], $7::timestamptz[], $8::timestamptz[], $9::bytea[],
                     $10::text[], $11::bytea[], $12::bytea[], $13::text[], $14::text[],
                     $15::bytea[], $16::integer[])
              as b(s, d, day, span, n, f, l, data, bits, exc, days, day_bits, local_bits, local,
                   local_n)",
        &[
            &user_id,
            &b_series,
            &b_sources,
            &b_days,
            &spans,
            &counts,
            &firsts,
            &lasts,
            &data,
            &bits,
            &exceptions,
            &figures,
            &day_bits,
            &local_bits,
            &local_figures,
            &local_samples,
        ],
    )
    .await?;
    Ok(bytes)
}

/// One day of a block, as sealing and unsealing move it.
#[derive(Debug, Clone)]
struct DayPart {
    key: DayKey,
    samples: Vec<BlockSample>,
    /// Its hours' figures (indexes 0–23); `None` while they are rows (a block of V22).
    hours: Option<SpanHours>,
    /// Its UTC day rollup; `None` while it is a row (a block sealed before V25) or it has none.
    day: Option<HourFigures>,
}

impl DayPart {
    fn empty(key: DayKey) -> DayPart {
        DayPart { key, samples: Vec::new(), hours: None, day: None }
    }
}

/// Days packed into one block: consecutive days of a series and source.
#[derive(Debug)]
struct Packed {
    /// Its first day.
    key: DayKey,
    /// Days from the first to the last, inclusive.
    span: u16,
    parts: Vec<DayPart>,
    /// The local days it keeps ([`local_days::held`]).
    local: HeldDays,
}

impl Packed {
    /// The local dates it keeps, if any.
    fn held(&self) -> Option<(chrono::NaiveDate, chrono::NaiveDate)> {
        local_days::held(self.key.day.date_naive(), self.span)
    }

    /// The UTC day rollups of its days, by index from its first day.
    fn days(&self) -> SpanDays {
        let days = self
            .parts
            .iter()
            .filter_map(|p| p.day.map(|f| (day_index(self.key.day, p.key.day), f)));
        days.collect()
    }

    /// The hours of its days, by index from its first day.
    fn hours(&self) -> SpanHours {
        let mut out = SpanHours::new();
        for part in &self.parts {
            let offset = day_index(self.key.day, part.key.day) * DAY_HOURS;
            for (h, f) in part.hours.iter().flatten() {
                out.insert(offset + h, *f);
            }
        }
        out
    }
}

/// How many days `day` lies after `first`.
fn day_index(first: DateTime<Utc>, day: DateTime<Utc>) -> u16 {
    u16::try_from((day - first).num_days()).unwrap_or(u16::MAX)
}

/// The rule of which days share a block: in day order, per series and source, a day joins the
/// block before it while the block stays within [`SPAN_DAYS`] days and [`SPAN_SAMPLES`] samples;
/// otherwise it starts the next. A day denser than that has a block of its own.
fn pack(parts: Vec<DayPart>) -> Vec<Packed> {
    let mut out: Vec<Packed> = Vec::new();
    let mut held = 0;
    let mut sorted = parts;
    sorted.sort_by_key(|p| p.key);
    for part in sorted {
        if let Some(last) = out.last_mut() {
            let same = (last.key.series_type_id, last.key.data_source_id)
                == (part.key.series_type_id, part.key.data_source_id);
            if same
                && part.key.day - last.key.day < Duration::days(SPAN_DAYS)
                && held + part.samples.len() <= SPAN_SAMPLES
            {
                held += part.samples.len();
                last.span = day_index(last.key.day, part.key.day) + 1;
                last.parts.push(part);
                continue;
            }
        }
        held = part.samples.len();
        out.push(Packed { key: part.key, span: 1, parts: vec![part], local: HeldDays::new() });
    }
    out
}

/// A stored block, its samples decoded: its hours and days are decoded only when it is taken
/// apart ([`Block::into_parts`]); a writer checking a sealed day needs only its samples.
#[derive(Debug, Clone)]
struct Block {
    /// Its first day.
    key: DayKey,
    span: u16,
    samples: Vec<BlockSample>,
    /// Its `hours` as text and its `hour_exceptions`; `None` for a block sealed before its
    /// hours moved in (still rows).
    hours: Option<(String, Option<Vec<u8>>)>,
    /// Its `day_figures`; `None` for a block sealed before its day rollups moved in (still
    /// rows).
    day_figures: Option<Vec<u8>>,
    /// Its `local_figures`: `None` when it keeps no local day.
    local_figures: Option<Vec<u8>>,
}

impl Block {
    /// A block from a row's [`BLOCK`] columns.
    fn from_row(r: &tokio_postgres::Row) -> Result<Block> {
        let span: i16 = r.try_get(3)?;
        let bits: Option<String> = r.try_get(5)?;
        Ok(Block {
            key: DayKey::from_row(r, 0)?,
            span: u16::try_from(span).unwrap_or(1),
            samples: codec::decode(r.try_get(4)?)?,
            hours: bits
                .map(|bits| r.try_get(6).map(|exceptions| (bits, exceptions)))
                .transpose()?,
            day_figures: r.try_get(7)?,
            local_figures: r.try_get(8)?,
        })
    }

    /// The local days it keeps, keyed as `daily_rollups` rows are.
    fn local_days(&self) -> Result<LocalDays> {
        let Some(bytes) = &self.local_figures else { return Ok(LocalDays::new()) };
        let (series, source) = (self.key.series_type_id, self.key.data_source_id);
        let days = local_days::load(self.key.day.date_naive(), bytes)?;
        Ok(days.into_iter().map(|(d, f)| ((series, source, d), f)).collect())
    }

    /// Its days, each with its samples, hours and day rollup (days without samples left out).
    fn into_parts(self) -> Result<Vec<DayPart>> {
        let Block { key, span, samples, hours, day_figures, .. } = self;
        let hours = hours
            .map(|(bits, exceptions)| hours::load(key.day, &samples, &bits, exceptions.as_deref()))
            .transpose()?;
        let days = day_figures.map(|f| days::load(key.day, span, &samples, &f)).transpose()?;
        let mut parts: BTreeMap<DateTime<Utc>, DayPart> = BTreeMap::new();
        for s in samples {
            let day = utc_day(s.ts);
            let empty = || DayPart::empty(DayKey { day, ..key });
            parts.entry(day).or_insert_with(empty).samples.push(s);
        }
        for (d, f) in days.iter().flatten() {
            if let Some(p) = parts.get_mut(&(key.day + Duration::days(i64::from(*d)))) {
                p.day = Some(*f);
            }
        }
        if let Some(hours) = &hours {
            for p in parts.values_mut() {
                p.hours = Some(SpanHours::new());
            }
            for (h, f) in hours {
                let day = key.day + Duration::days(i64::from(h / DAY_HOURS));
                if let Some(Some(p)) = parts.get_mut(&day).map(|p| p.hours.as_mut()) {
                    p.insert(h % DAY_HOURS, *f);
                }
            }
        }
        Ok(parts.into_values().collect())
    }
}

/// The columns [`Block::from_row`] reads, of a `sample_blocks` row aliased `b`.
const BLOCK: &str = "b.series_type_id, b.data_source_id, b.day, b.span, b.data, b.hours::text,
    b.hour_exceptions, b.day_figures, b.local_figures";

/// Matches the blocks (aliased `b`) of user `$1` that hold a day of [`KEYS`].
fn covering(b: &str) -> String {
    format!(
        "{b}.user_id = $1 and {b}.series_type_id = k.s and {b}.data_source_id = k.d \
         and {b}.day <= k.day and {b}.day > k.day - interval '{SPAN_DAYS} days' \
         and k.day < {b}.day + {b}.span * interval '1 day'"
    )
}

/// The decoded blocks that hold a day of `keys`, each once.
async fn blocks_among(
    client: &impl GenericClient,
    user_id: UserId,
    keys: &[DayKey],
) -> Result<Vec<Block>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let (series, sources, days) = columns(keys);
    let statement = format!(
        "select distinct on (b.series_type_id, b.data_source_id, b.day) {BLOCK}
         from {KEYS} join sample_blocks b on {}",
        covering("b")
    );
    let rows = client.query(&statement, &[&user_id, &series, &sources, &days]).await?;
    rows.iter().map(Block::from_row).collect()
}

/// The blocks a seal of `keys` packs again: per series and source, those that start from
/// [`SPAN_DAYS`] days before its first day to its last (any that holds or may take in one of
/// the days, and any between them).
async fn blocks_near(
    client: &impl GenericClient,
    user_id: UserId,
    keys: &[DayKey],
) -> Result<Vec<Block>> {
    let (series, sources, days) = columns(keys);
    let statement = format!(
        "select {BLOCK}
         from (select k.s, k.d, min(k.day) as lo, max(k.day) as hi from {KEYS} group by 1, 2) k
         join sample_blocks b
           on b.user_id = $1 and b.series_type_id = k.s and b.data_source_id = k.d
          and b.day > k.lo - interval '{SPAN_DAYS} days' and b.day <= k.hi"
    );
    let rows = client.query(&statement, &[&user_id, &series, &sources, &days]).await?;
    rows.iter().map(Block::from_row).collect()
}

/// A block's samples and a day's rows, in time order, a row replacing a block sample at the
/// same instant.
fn merge(block: Vec<BlockSample>, rows: Vec<BlockSample>) -> Vec<BlockSample> {
    let mut by_ts: BTreeMap<DateTime<Utc>, BlockSample> =
        block.into_iter().map(|s| (s.ts, s)).collect();
    by_ts.extend(rows.into_iter().map(|s| (s.ts, s)));
    by_ts.into_values().collect()
}

/// Which of `keys` are sealed (lie in a block's span).
pub(crate) async fn sealed_among(
    client: &impl GenericClient,
    user_id: UserId,
    keys: &[DayKey],
) -> Result<Vec<DayKey>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let (series, sources, days) = columns(keys);
    let statement = format!(
        "select distinct k.s, k.d, k.day from {KEYS} join sample_blocks b on {}",
        covering("b")
    );
    let rows = client.query(&statement, &[&user_id, &series, &sources, &days]).await?;
    rows.iter().map(|r| DayKey::from_row(r, 0)).collect()
}

/// Moves the blocks that hold a day of `keys` back into rows, every day of them, and marks
/// those days changed so the sealer seals them again once quiet. Returns the samples moved. The
/// caller holds the user's exclusive writer lock.
pub async fn unseal(tx: &Transaction<'_>, user_id: UserId, keys: &[DayKey]) -> Result<u64> {
    if keys.is_empty() {
        return Ok(0);
    }
    let (series, sources, days) = columns(keys);
    let taken = tx
        .query(
            &format!(
                "delete from sample_blocks b using {KEYS} where {} returning {BLOCK}",
                covering("b")
            ),
            &[&user_id, &series, &sources, &days],
        )
        .await?;
    if taken.is_empty() {
        return Ok(0);
    }
    let mut moved = 0;
    // The columns and order `samples::store` copies rows in.
    let sink = tx
        .copy_in(&format!(
            "copy samples ({}, user_id, batch_id) from stdin binary",
            crate::sample_row::COLUMNS
        ))
        .await?;
    let writer = BinaryCopyInWriter::new(sink, &crate::sample_row::TYPES);
    pin_mut!(writer);
    let mut unsealed = Vec::with_capacity(taken.len());
    let (mut restored, mut restored_days) = (HourRows::default(), HourRows::default());
    let mut restored_local = LocalDays::new();
    for r in &taken {
        let block = Block::from_row(r)?;
        restored_local.extend(block.local_days()?);
        for part in block.into_parts()? {
            let key = part.key;
            let (series, source) = (key.series_type_id, key.data_source_id);
            unsealed.push(key);
            for s in &part.samples {
                writer
                    .as_mut()
                    .write(&[
                        &series,
                        &source,
                        &s.ts,
                        &s.value,
                        &s.zone_offset,
                        &s.is_daily_total,
                        &user_id,
                        &s.batch_id,
                    ])
                    .await?;
                moved += 1;
            }
            for (h, f) in part.hours.iter().flatten() {
                restored.push(series, source, hours::start(key.day, *h), f);
            }
            if let Some(f) = &part.day {
                restored_days.push(series, source, key.day, f);
            }
        }
    }
    writer.finish().await?;
    restored.insert(tx, user_id, Span::Hour).await?;
    restored_days.insert(tx, user_id, Span::UtcDay).await?;
    crate::rollups::write_days(tx, user_id, restored_local).await?;
    let (series, sources, days) = columns(&unsealed);
    tx.execute(
        &format!(
            "update utc_day_rollups r set sealed = false, changed_at = now() from {KEYS} where {}",
            on_key("r")
        ),
        &[&user_id, &series, &sources, &days],
    )
    .await?;
    Ok(moved)
}

/// Moves back into rows the blocks of a user that hold days both before `at` and from it (a
/// lifecycle cutoff: the days before go, the rest stay). The caller holds the user's exclusive
/// writer lock.
pub(crate) async fn unseal_across(
    tx: &Transaction<'_>,
    user_id: UserId,
    at: DateTime<Utc>,
) -> Result<u64> {
    let rows = tx
        .query(
            &format!(
                "select series_type_id, data_source_id, day from sample_blocks
                 where user_id = $1 and day < $2 and day > $2 - interval '{SPAN_DAYS} days'
                   and day + span * interval '1 day' > $2"
            ),
            &[&user_id, &at],
        )
        .await?;
    let keys = rows.iter().map(|r| DayKey::from_row(r, 0)).collect::<Result<Vec<_>>>()?;
    unseal(tx, user_id, &keys).await
}

/// Moves all of a user's blocks back into rows (before a reprocess deletes and rebuilds by
/// batch). The caller holds the user's exclusive writer lock.
pub async fn unseal_user(tx: &Transaction<'_>, user_id: UserId) -> Result<u64> {
    let rows = tx
        .query(
            "select series_type_id, data_source_id, day from sample_blocks where user_id = $1",
            &[&user_id],
        )
        .await?;
    let keys = rows.iter().map(|r| DayKey::from_row(r, 0)).collect::<Result<Vec<_>>>()?;
    unseal(tx, user_id, &keys).await
}

/// The days `rows` fall on, each once.
pub(crate) fn day_keys(rows: &[&SampleRow]) -> Vec<DayKey> {
    let keys: BTreeSet<DayKey> =
        rows.iter().map(|r| DayKey::of(r.series_type_id, r.data_source_id, r.ts)).collect();
    keys.into_iter().collect()
}

/// A writer's rows once sealed days have had their say: the rows to store as before, and how
/// many were dropped as stored already exactly so in a block.
pub(crate) struct Absorbed<'a> {
    pub rows: Vec<&'a SampleRow>,
    pub unchanged: i64,
}

/// Whether a stored sample is `r` exactly, as the upsert compares them (SQL equality: NaN equals
/// NaN, -0 equals 0).
fn same(s: &BlockSample, r: &SampleRow) -> bool {
    let value = s.value == r.value || (s.value.is_nan() && r.value.is_nan());
    value && s.zone_offset == r.zone_offset && s.is_daily_total == r.is_daily_total
}

/// The days a recount of a changed sample's day reads samples of (see [`RECOUNT_REACH_DAYS`]).
fn recount_reach(key: DayKey) -> impl Iterator<Item = DayKey> {
    (-RECOUNT_REACH_DAYS..=RECOUNT_REACH_DAYS).map(move |d| key.shifted(d))
}

/// Readies sealed days for the recount of changed samples stored in rows (their own days are
/// rows, but the days around them, which the recount reads too, may be sealed): moves those
/// back into rows. The caller holds the user's exclusive writer lock.
pub(crate) async fn unseal_for_recount(
    tx: &Transaction<'_>,
    user_id: UserId,
    changed: &[&SampleRow],
) -> Result<u64> {
    let keys: BTreeSet<DayKey> = day_keys(changed).into_iter().flat_map(recount_reach).collect();
    unseal(tx, user_id, &keys.into_iter().collect::<Vec<_>>()).await
}

/// Readies sealed days for a writer holding the user's exclusive lock: rows a block holds
/// exactly so are dropped (a re-sent sample is stored once, and a re-sent day stays sealed);
/// days that get a new or changed sample are unsealed, and around a changed one the days the
/// rollups' recount reads too.
pub(crate) async fn absorb<'a>(
    tx: &Transaction<'_>,
    user_id: UserId,
    rows: Vec<&'a SampleRow>,
) -> Result<Absorbed<'a>> {
    let sealed = blocks_among(tx, user_id, &day_keys(&rows)).await?;
    if sealed.is_empty() {
        return Ok(Absorbed { rows, unchanged: 0 });
    }
    // Every day a block spans is sealed, those without samples too.
    let mut blocks: BTreeMap<DayKey, BTreeMap<DateTime<Utc>, BlockSample>> = BTreeMap::new();
    for block in sealed {
        for d in 0..i64::from(block.span) {
            blocks.insert(block.key.shifted(d), BTreeMap::new());
        }
        for s in block.samples {
            let key = DayKey { day: utc_day(s.ts), ..block.key };
            blocks.entry(key).or_default().insert(s.ts, s);
        }
    }
    let (mut kept, mut unchanged) = (Vec::with_capacity(rows.len()), 0);
    let mut unseal_keys: BTreeSet<DayKey> = BTreeSet::new();
    for r in rows {
        let key = DayKey::of(r.series_type_id, r.data_source_id, r.ts);
        match blocks.get(&key).map(|b| b.get(&r.ts)) {
            Some(Some(s)) if same(s, r) => unchanged += 1,
            Some(Some(_)) => {
                unseal_keys.extend(recount_reach(key));
                kept.push(r);
            }
            Some(None) => {
                unseal_keys.insert(key);
                kept.push(r);
            }
            None => kept.push(r),
        }
    }
    let unseal_keys: Vec<DayKey> = unseal_keys.into_iter().collect();
    unseal(tx, user_id, &unseal_keys).await?;
    Ok(Absorbed { rows: kept, unchanged })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, 0).unwrap_or_default()
    }

    fn sample(secs: i64, value: f64) -> BlockSample {
        BlockSample { ts: at(secs), value, zone_offset: None, is_daily_total: None, batch_id: None }
    }

    #[test]
    fn a_row_replaces_the_block_sample_at_its_instant() {
        let merged =
            merge(vec![sample(10, 1.0), sample(20, 2.0)], vec![sample(20, 5.0), sample(5, 3.0)]);
        let got: Vec<(i64, f64)> = merged.iter().map(|s| (s.ts.timestamp(), s.value)).collect();
        assert_eq!(got, vec![(5, 3.0), (10, 1.0), (20, 5.0)]);
    }

    #[test]
    fn days_are_utc_midnights() {
        assert_eq!(utc_day(at(DAY * 3 + 5)), at(DAY * 3));
        assert_eq!(utc_day(at(-5)), at(-DAY));
        assert_eq!(utc_day(at(DAY * 3)), at(DAY * 3));
    }

    #[test]
    fn sameness_is_sql_equality() {
        let row = SampleRow {
            series_type_id: SeriesId(1),
            data_source_id: Uuid::nil(),
            ts: at(0),
            value: 0.0,
            zone_offset: None,
            is_daily_total: None,
        };
        assert!(same(&sample(0, -0.0), &row));
        assert!(!same(&sample(0, 1.0), &row));
        let nan = SampleRow { value: f64::NAN, ..row.clone() };
        assert!(same(&sample(0, f64::NAN), &nan));
        let zoned = SampleRow { zone_offset: Some(60), ..row };
        assert!(!same(&sample(0, 0.0), &zoned));
    }
}
