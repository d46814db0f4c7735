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
use super::hours::{self, DayHours};
use crate::rollups::{HourFigures, HourRows, Span};
use crate::samples::SampleRow;
use crate::users::{WriterLock, lock_for_writing};
use crate::{Db, Result};

const DAY: i64 = 86_400;
/// How far from a changed sample's UTC day the rollups' recount reads samples: the local days
/// around the sample's (`rollups_recount.sql` rebuilds its local day and both neighbours, each
/// from the samples of the UTC days around it). A changed sample unseals these days first.
const RECOUNT_REACH_DAYS: i64 = 3;

/// One sealable unit of one user's samples: a series of a source on a UTC day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DayKey {
    pub series_type_id: i16,
    pub data_source_id: Uuid,
    /// The UTC midnight the day starts at.
    pub day: DateTime<Utc>,
}

impl DayKey {
    /// The day a sample of this series and source at `ts` is stored in.
    pub fn of(series_type_id: i16, data_source_id: Uuid, ts: DateTime<Utc>) -> DayKey {
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
    crate::timeseries::floor_to(ts, DAY)
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

/// Matches the `hourly_rollups` rows (aliased `t`) of the days of [`KEYS`] of user `$1`, inside
/// the span `[$5, $6)` (constant bounds, so the planner reads a range of the index).
fn on_hours(t: &str) -> String {
    format!(
        "{t}.user_id = $1 and {t}.series_type_id = k.s and {t}.data_source_id = k.d \
         and {t}.hour >= k.day and {t}.hour < k.day + interval '1 day' \
         and {t}.hour >= $5 and {t}.hour < $6"
    )
}

/// The hourly rollup rows of `days`, whose span is `[from, to)`.
async fn hour_rows(
    client: &impl GenericClient,
    user_id: Uuid,
    days: &[DayKey],
    (from, to): (DateTime<Utc>, DateTime<Utc>),
) -> Result<Vec<(DayKey, DateTime<Utc>, HourFigures)>> {
    let (series, sources, starts) = columns(days);
    let statement = format!(
        "select k.s, k.d, k.day, r.hour, r.sample_count, r.value_sum, r.total_count,
                    r.total_sum, r.value_max, r.zone_offset
             from {KEYS} join hourly_rollups r on {}",
        on_hours("r")
    );
    let rows =
        client.query(&statement, &[&user_id, &series, &sources, &starts, &from, &to]).await?;
    rows.iter().map(|r| Ok((DayKey::from_row(r, 0)?, r.try_get(3)?, figures_at(r, 4)?))).collect()
}

/// The UTC day rollups of those of `days` that have one, by day.
async fn day_rows(
    client: &impl GenericClient,
    user_id: Uuid,
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

/// A block row's day figures as the parallel arrays of `sample_blocks`' `day_*` columns, null
/// where a day has no rollup.
#[derive(Debug, Default)]
struct DayColumns {
    counts: Vec<Option<i32>>,
    sums: Vec<Option<f64>>,
    total_counts: Vec<Option<i32>>,
    total_sums: Vec<Option<f64>>,
    maxes: Vec<Option<f64>>,
    offsets: Vec<Option<i16>>,
}

impl DayColumns {
    fn push(&mut self, f: Option<&HourFigures>) {
        self.counts.push(f.map(|f| f.sample_count));
        self.sums.push(f.map(|f| f.value_sum));
        self.total_counts.push(f.map(|f| f.total_count));
        self.total_sums.push(f.map(|f| f.total_sum));
        self.maxes.push(f.map(|f| f.value_max));
        self.offsets.push(f.and_then(|f| f.zone_offset));
    }
}

/// The parallel arrays `unnest` reads a list of keys from.
fn columns(keys: &[DayKey]) -> (Vec<i16>, Vec<Uuid>, Vec<DateTime<Utc>>) {
    let series = keys.iter().map(|k| k.series_type_id).collect();
    let sources = keys.iter().map(|k| k.data_source_id).collect();
    let days = keys.iter().map(|k| k.day).collect();
    (series, sources, days)
}

/// Days due for sealing, oldest first: not sealed, started before `day_before` and unchanged
/// since `unchanged_since`, at most `limit`, with their user.
pub async fn due(
    db: &Db,
    day_before: DateTime<Utc>,
    unchanged_since: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<(Uuid, DayKey)>> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached(
            "select user_id, series_type_id, data_source_id, day from utc_day_rollups
             where not sealed and day < $1 and changed_at <= $2
             order by day limit $3",
        )
        .await?;
    let rows = client.query(&statement, &[&day_before, &unchanged_since, &limit]).await?;
    rows.iter().map(|r| Ok((r.try_get(0)?, DayKey::from_row(r, 1)?))).collect()
}

/// One user's days due for sealing (as [`due`] has them), oldest first, at most `limit`.
pub async fn due_for_user(
    db: &Db,
    user_id: Uuid,
    day_before: DateTime<Utc>,
    unchanged_since: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<DayKey>> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached(
            "select series_type_id, data_source_id, day from utc_day_rollups
             where user_id = $1 and not sealed and day < $2 and changed_at <= $3
             order by day limit $4",
        )
        .await?;
    let rows = client.query(&statement, &[&user_id, &day_before, &unchanged_since, &limit]).await?;
    rows.iter().map(|r| DayKey::from_row(r, 0)).collect()
}

/// The start of the oldest day not sealed (its samples are rows), if any: how far the sealer is
/// behind, beside `SEAL_AFTER_HOURS`. The first entry of the sealer's worklist index.
pub async fn oldest_unsealed(db: &Db) -> Result<Option<DateTime<Utc>>> {
    let client = db.client().await?;
    let statement =
        client.prepare_cached("select min(day) from utc_day_rollups where not sealed").await?;
    Ok(client.query_one(&statement, &[]).await?.try_get(0)?)
}

/// What one call to [`seal`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sealing {
    pub days: u64,
    pub samples: u64,
    /// Bytes of the blocks written.
    pub bytes: u64,
}

impl std::ops::AddAssign for Sealing {
    fn add_assign(&mut self, done: Sealing) {
        self.days += done.days;
        self.samples += done.samples;
        self.bytes += done.bytes;
    }
}

/// Seals `days` of one user in one transaction: each day's rows (and its block, should it have
/// one) become one block and the rows are deleted, a statement for all the days at each step.
/// Idempotent: a sealed day is sealed again as it is. Nothing when the user is gone.
pub async fn seal(db: &Db, user_id: Uuid, days: &[DayKey]) -> Result<Sealing> {
    let (Some(first_day), Some(last_day)) =
        (days.iter().map(|k| k.day).min(), days.iter().map(|k| k.day).max())
    else {
        return Ok(Sealing::default());
    };
    // The span the days cover: constant bounds, so only its chunks are read.
    let (from, to) = (first_day, last_day + Duration::days(1));
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    if lock_for_writing(&tx, user_id, WriterLock::Exclusive).await?.is_none() {
        return Ok(Sealing::default());
    }
    let (series, sources, starts) = columns(days);
    let on_day = "s.user_id = $1 and s.series_type_id = k.s and s.data_source_id = k.d
                  and s.ts >= k.day and s.ts < k.day + interval '1 day'
                  and s.ts >= $5 and s.ts < $6";
    let select = format!(
        "select s.series_type_id, s.data_source_id, s.ts, s.value, s.zone_offset,
                    s.is_daily_total, s.batch_id
             from {KEYS} join samples s on {on_day}
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
    // The days' hourly rollups move into their blocks: those a block holds already, and the
    // rows. Should a day have rows and a block (it never does: writers unseal first), the
    // block's samples are kept where the rows do not replace them.
    let mut hours_by_day: BTreeMap<DayKey, DayHours> = BTreeMap::new();
    let mut block_days: BTreeMap<DayKey, HourFigures> = BTreeMap::new();
    for block in blocks_among(&tx, user_id, days).await? {
        if let Some(hours) = block.hours()? {
            hours_by_day.insert(block.key, hours);
        }
        if let Some(figures) = block.day {
            block_days.insert(block.key, figures);
        }
        let rows = by_day.remove(&block.key).unwrap_or_default();
        by_day.insert(block.key, merge(block.samples, rows));
    }
    for (key, hour, figures) in hour_rows(&tx, user_id, days, (from, to)).await? {
        if let Some(h) = hours::index(key.day, hour) {
            hours_by_day.entry(key).or_default().insert(h, figures);
        }
    }
    // The days' UTC day rollups move into their blocks as stored.
    let day_figures = day_rows(&tx, user_id, days).await?;
    let mut out = Sealing { days: days.len() as u64, samples: rows.len() as u64, bytes: 0 };
    let n = by_day.len();
    let (mut b_series, mut b_sources, mut b_days) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut counts, mut firsts, mut lasts, mut data) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut masks, mut exceptions) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut day = DayColumns::default();
    for (key, samples) in &by_day {
        let (Some(first), Some(last)) = (samples.first(), samples.last()) else { continue };
        let bytes = codec::encode(samples)?;
        let kept =
            hours::store(key.day, samples, hours_by_day.get(key).unwrap_or(&DayHours::new()));
        out.bytes += (bytes.len() + kept.exceptions.as_ref().map_or(0, Vec::len)) as u64;
        b_series.push(key.series_type_id);
        b_sources.push(key.data_source_id);
        b_days.push(key.day);
        counts.push(i32::try_from(samples.len()).unwrap_or(i32::MAX));
        firsts.push(first.ts);
        lasts.push(last.ts);
        data.push(bytes);
        masks.push(kept.mask);
        exceptions.push(kept.exceptions);
        // A block sealed before day rollups moved in keeps its figures where they are.
        day.push(day_figures.get(key).or(block_days.get(key)));
    }
    tx.execute(
        "insert into sample_blocks as b
             (user_id, series_type_id, data_source_id, day, sample_count, first_ts, last_ts, data,
              hour_mask, hour_exceptions, day_sample_count, day_value_sum, day_total_count,
              day_total_sum, day_value_max, day_zone_offset)
         select $1, * from unnest($2::smallint[], $3::uuid[], $4::timestamptz[], $5::integer[],
                                  $6::timestamptz[], $7::timestamptz[], $8::bytea[],
                                  $9::integer[], $10::bytea[], $11::integer[], $12::float8[],
                                  $13::integer[], $14::float8[], $15::float8[], $16::smallint[])
         on conflict (user_id, series_type_id, data_source_id, day) do update
             set sample_count = excluded.sample_count, first_ts = excluded.first_ts,
                 last_ts = excluded.last_ts, data = excluded.data,
                 hour_mask = excluded.hour_mask, hour_exceptions = excluded.hour_exceptions,
                 day_sample_count = excluded.day_sample_count,
                 day_value_sum = excluded.day_value_sum,
                 day_total_count = excluded.day_total_count,
                 day_total_sum = excluded.day_total_sum,
                 day_value_max = excluded.day_value_max,
                 day_zone_offset = excluded.day_zone_offset",
        &[
            &user_id,
            &b_series,
            &b_sources,
            &b_days,
            &counts,
            &firsts,
            &lasts,
            &data,
            &masks,
            &exceptions,
            &day.counts,
            &day.sums,
            &day.total_counts,
            &day.total_sums,
            &day.maxes,
            &day.offsets,
        ],
    )
    .await?;
    // The hour rows of the days now in blocks (not of a day left without one).
    let written = [&user_id as &(dyn ToSql + Sync), &b_series, &b_sources, &b_days, &from, &to];
    let delete_hours = format!("delete from hourly_rollups r using {KEYS} where {}", on_hours("r"));
    tx.execute(&delete_hours, &written).await?;
    let delete = format!("delete from samples s using {KEYS} where {on_day}");
    tx.execute(&delete, &params).await?;
    // The day rollups now in blocks go; a day left without a block (no sample) is marked
    // sealed, off the worklist.
    let delete_days = format!("delete from utc_day_rollups r using {KEYS} where {}", on_key("r"));
    tx.execute(&delete_days, &written[..4]).await?;
    tx.execute(
        &format!("update utc_day_rollups r set sealed = true from {KEYS} where {}", on_key("r")),
        &params[..4],
    )
    .await?;
    tx.commit().await?;
    Ok(out)
}

/// Gives back the disk of the `samples` chunks that sealing emptied: a chunk whose time range
/// ended before `before` (every day in it past the sealing age), with no row left and more than
/// a few pages on disk, is rewritten empty (`VACUUM FULL`, which keeps what any open snapshot may
/// still read; plain VACUUM never shrinks an index). Returns the bytes given back.
pub async fn compact_sealed_chunks(db: &Db, before: DateTime<Utc>) -> Result<u64> {
    let client = db.client().await?;
    let chunks = client
        .query(
            "select format('%I.%I', c.chunk_schema, c.chunk_name),
                    pg_total_relation_size(format('%I.%I', c.chunk_schema, c.chunk_name)::regclass)
             from timescaledb_information.chunks c
             where c.hypertable_name = 'samples' and c.range_end <= $1",
            &[&before],
        )
        .await?;
    let mut freed = 0;
    for chunk in &chunks {
        let (name, size): (String, i64) = (chunk.try_get(0)?, chunk.try_get(1)?);
        // An emptied chunk keeps its index pages; a compact one is a page or two.
        if size < 256 * 1024 {
            continue;
        }
        // `name` comes from the catalogue, quoted by format('%I').
        let empty: bool = client
            .query_one(&format!("select not exists (select 1 from {name})"), &[])
            .await?
            .try_get(0)?;
        if !empty {
            continue;
        }
        client.batch_execute(&format!("vacuum full {name}")).await?;
        let after: i64 = client
            .query_one("select pg_total_relation_size($1::text::regclass)", &[&name])
            .await?
            .try_get(0)?;
        freed += (size - after).max(0) as u64;
    }
    Ok(freed)
}

/// The indexes whose rows come and go by the million (a day's hours and day rollup are written
/// at ingest and moved into its block when it seals), with their tables: a B-tree never
/// shrinks.
const EMPTIED_INDEXES: [(&str, &str); 4] = [
    ("hourly_rollups_pkey", "hourly_rollups"),
    ("utc_day_rollups_pkey", "utc_day_rollups"),
    ("utc_day_rollups_unsealed", "utc_day_rollups"),
    ("utc_day_rollups_unsealed_user", "utc_day_rollups"),
];
/// An index is rebuilt once it is this much larger than its table's rows need...
const INDEX_SLACK: i64 = 3;
/// ...and past this size (smaller, it is not worth a rebuild).
const INDEX_FLOOR: i64 = 1 << 20;
/// About what one row takes in such an index: a 42-byte key, its tuple header and line pointer,
/// at the B-tree's fill factor.
const INDEX_ROW: i64 = 64;

/// Gives back the disk of the rollup rows sealing moved into blocks: when one of
/// [`EMPTIED_INDEXES`] is far larger than its table's rows (by the planner's count, kept by
/// autovacuum and ANALYZE) need, it is rebuilt concurrently, without blocking writers. An import
/// of years of data writes all its hours and days at once; sealing then empties most of them.
/// With `recount`, the rows are counted first (ANALYZE), as they are stale right after sealing.
/// Returns the bytes given back.
pub async fn compact_emptied_indexes(db: &Db, recount: bool) -> Result<u64> {
    let client = db.client().await?;
    if recount {
        client.batch_execute("analyze hourly_rollups, utc_day_rollups").await?;
    }
    let mut bloated = Vec::new();
    for (index, table) in EMPTIED_INDEXES {
        let row = client
            .query_one(
                "select pg_relation_size($1::text::regclass),
                        (select reltuples::bigint from pg_class where oid = $2::text::regclass)",
                &[&index, &table],
            )
            .await?;
        let (size, rows): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
        // Never counted (-1): no telling whether it is bloated.
        if rows >= 0 && size >= INDEX_FLOOR && size >= INDEX_SLACK * rows * INDEX_ROW {
            bloated.push((index, size));
        }
    }
    if bloated.is_empty() {
        return Ok(0);
    }
    drop(client);
    // One rebuild at a time, whatever the workers (and `wearhouse seal`) running.
    const LOCK: &str = "wearhouse.compact_hour_index";
    let Some(client) = db.try_lock(LOCK).await? else {
        return Ok(0);
    };
    let rebuilt = async {
        let mut freed = 0;
        for (index, size) in bloated {
            // What a rebuild cut short left behind (REINDEX CONCURRENTLY's names).
            for leftover in ["ccnew", "ccold"] {
                client
                    .batch_execute(&format!("drop index concurrently if exists {index}_{leftover}"))
                    .await?;
            }
            client.batch_execute(&format!("reindex index concurrently {index}")).await?;
            let after: i64 = client
                .query_one("select pg_relation_size($1::text::regclass)", &[&index])
                .await?
                .try_get(0)?;
            freed += (size - after).max(0) as u64;
        }
        Ok::<_, crate::Error>(freed)
    }
    .await;
    crate::db::unlock(client, LOCK).await;
    rebuilt
}

/// A sealed day, decoded.
struct Block {
    key: DayKey,
    samples: Vec<BlockSample>,
    /// Its hours with figures; 0 for a block sealed before they moved in (still rows).
    hour_mask: i32,
    hour_exceptions: Option<Vec<u8>>,
    /// Its UTC day rollup; `None` for a block sealed before it moved in (still a row).
    day: Option<HourFigures>,
}

impl Block {
    /// A block from a row's [`BLOCK`] columns.
    fn from_row(r: &tokio_postgres::Row) -> Result<Block> {
        let day_count: Option<i32> = r.try_get(6)?;
        Ok(Block {
            key: DayKey::from_row(r, 0)?,
            samples: codec::decode(r.try_get(3)?)?,
            hour_mask: r.try_get(4)?,
            hour_exceptions: r.try_get(5)?,
            day: day_count.map(|_| figures_at(r, 6)).transpose()?,
        })
    }

    /// Its hourly rollups; none when they are still rows.
    fn hours(&self) -> Result<Option<DayHours>> {
        if self.hour_mask == 0 {
            return Ok(None);
        }
        let exceptions = self.hour_exceptions.as_deref();
        Ok(Some(hours::load(self.key.day, &self.samples, self.hour_mask, exceptions)?))
    }
}

/// The columns [`Block::from_row`] reads, of a `sample_blocks` row aliased `b`.
const BLOCK: &str = "b.series_type_id, b.data_source_id, b.day, b.data, b.hour_mask,
    b.hour_exceptions, b.day_sample_count, b.day_value_sum, b.day_total_count, b.day_total_sum,
    b.day_value_max, b.day_zone_offset";

/// The decoded blocks of those of `keys` that have one.
async fn blocks_among(
    client: &impl GenericClient,
    user_id: Uuid,
    keys: &[DayKey],
) -> Result<Vec<Block>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let (series, sources, days) = columns(keys);
    let statement = format!("select {BLOCK} from {KEYS} join sample_blocks b on {}", on_key("b"));
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

/// Which of `keys` are sealed (have a block).
pub async fn sealed_among(
    client: &impl GenericClient,
    user_id: Uuid,
    keys: &[DayKey],
) -> Result<Vec<DayKey>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let (series, sources, days) = columns(keys);
    let statement = format!(
        "select b.series_type_id, b.data_source_id, b.day
             from {KEYS} join sample_blocks b on {}",
        on_key("b")
    );
    let rows = client.query(&statement, &[&user_id, &series, &sources, &days]).await?;
    rows.iter().map(|r| DayKey::from_row(r, 0)).collect()
}

/// Moves the blocks of `keys` (those that have one) back into rows, and marks their days
/// changed so the sealer seals them again once quiet. Returns the samples moved. The caller
/// holds the user's exclusive writer lock.
pub async fn unseal(tx: &Transaction<'_>, user_id: Uuid, keys: &[DayKey]) -> Result<u64> {
    if keys.is_empty() {
        return Ok(0);
    }
    let (series, sources, days) = columns(keys);
    let taken = tx
        .query(
            &format!(
                "delete from sample_blocks b using {KEYS} where {} returning {BLOCK}",
                on_key("b")
            ),
            &[&user_id, &series, &sources, &days],
        )
        .await?;
    if taken.is_empty() {
        return Ok(0);
    }
    let mut moved = 0;
    // The columns and order samples::store copies rows in.
    let sink = tx
        .copy_in(&format!(
            "copy samples ({}, user_id, batch_id) from stdin binary",
            crate::samples::COLUMNS
        ))
        .await?;
    let writer = BinaryCopyInWriter::new(sink, &crate::samples::TYPES);
    pin_mut!(writer);
    let mut unsealed = Vec::with_capacity(taken.len());
    let (mut restored, mut restored_days) = (HourRows::default(), HourRows::default());
    for r in &taken {
        let block = Block::from_row(r)?;
        let key = block.key;
        let (series, source) = (key.series_type_id, key.data_source_id);
        unsealed.push(key);
        for s in &block.samples {
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
        for (h, f) in block.hours()?.iter().flatten() {
            restored.push(series, source, hours::start(key.day, *h), f);
        }
        if let Some(f) = &block.day {
            restored_days.push(series, source, key.day, f);
        }
    }
    writer.finish().await?;
    restored.insert(tx, user_id, Span::Hour).await?;
    restored_days.insert(tx, user_id, Span::UtcDay).await?;
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

/// Moves all of a user's blocks back into rows (before a reprocess deletes and rebuilds by
/// batch). The caller holds the user's exclusive writer lock.
pub async fn unseal_user(tx: &Transaction<'_>, user_id: Uuid) -> Result<u64> {
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
    user_id: Uuid,
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
    user_id: Uuid,
    rows: Vec<&'a SampleRow>,
) -> Result<Absorbed<'a>> {
    let sealed = blocks_among(tx, user_id, &day_keys(&rows)).await?;
    if sealed.is_empty() {
        return Ok(Absorbed { rows, unchanged: 0 });
    }
    let blocks: BTreeMap<DayKey, BTreeMap<DateTime<Utc>, BlockSample>> = sealed
        .into_iter()
        .map(|b| (b.key, b.samples.into_iter().map(|s| (s.ts, s)).collect()))
        .collect();
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
            series_type_id: 1,
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
