//! Reading sealed samples beside the rows: a read decodes the blocks its window touches and
//! hands them to its statement as parallel arrays, and the statement reads [`samples_sql`] where
//! it read `samples`, so each statement keeps its own SQL and every answer stays as it was.
//!
//! The blocks and the rows must be read in one snapshot ([`snapshot`]): a day sealed between
//! the two reads would otherwise be missed (or, unsealed, counted twice).

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use deadpool_postgres::{GenericClient, Object, Transaction};
use tokio_postgres::IsolationLevel;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use super::codec::BlockSample;
use super::store::SPAN_DAYS;
use super::{codec, days, hours};
use crate::Result;
use crate::ids::SeriesId;
use crate::ids::UserId;
use crate::rollups::{HourFigures, HourRows};

/// The earliest and latest instants a scope means (years 1 and 9999): an open window's bounds,
/// well inside what PostgreSQL and chrono both hold.
pub(crate) fn earliest() -> DateTime<Utc> {
    DateTime::from_timestamp(-62_135_596_800, 0).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// See [`earliest`].
pub(crate) fn latest() -> DateTime<Utc> {
    DateTime::from_timestamp(253_402_300_799, 0).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// The local dates sealed blocks keep figures of, as column `d`, for user `$1`, series `$2`
/// (an array) and dates in `[$3, $4]`: to stand beside the dates of `daily_rollups` rows.
pub(crate) fn local_dates_sql() -> String {
    format!(
        "select d from sample_blocks b cross join lateral block_dates(b.day, b.local_days) d
         where b.user_id = $1 and b.series_type_id = any($2) and b.local_figures is not null
           and b.day > ($3::date - {SPAN_DAYS})::timestamp at time zone 'UTC'
           and b.day < $4::date::timestamp at time zone 'UTC'
           and d between $3 and $4"
    )
}

/// Which sealed samples a read needs.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub user_id: UserId,
    /// `None`: every series.
    pub series: Option<&'a [SeriesId]>,
    /// `None`: every source.
    pub sources: Option<&'a [Uuid]>,
    pub from: DateTime<Utc>,
    /// Exclusive.
    pub to: DateTime<Utc>,
}

/// A raw or sub-hour page, as [`SealedRows::keep_page`] trims for it.
#[derive(Debug, Clone, Copy)]
pub struct PageLimit {
    /// The cursor: (bucket or time, series, source), the page's rows lie past it.
    pub cursor: (DateTime<Utc>, SeriesId, Uuid),
    pub backward: bool,
    /// Rows the page fetches.
    pub rows: usize,
    /// Bucket width in seconds; `None`: raw samples.
    pub width: Option<i64>,
}

/// Sealed samples, decoded, as the parallel arrays [`samples_sql`] reads.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SealedRows {
    pub series: Vec<SeriesId>,
    pub sources: Vec<Uuid>,
    pub ts: Vec<DateTime<Utc>>,
    pub values: Vec<f64>,
    pub offsets: Vec<Option<i16>>,
    pub flags: Vec<Option<bool>>,
    pub batches: Vec<Option<Uuid>>,
    /// The runs of samples of one series and source, as the statement takes them.
    runs: Runs,
}

/// Where the elements of each (series, source) lie in parallel arrays handed to a statement:
/// each run of neighbours of one pair once, with its first and last element (1-based, as SQL
/// slices count). A statement reading one series (and source) slices its runs out of the arrays
/// ([`runs_sql`]) instead of unnesting every element and filtering them, once per series and
/// source it reads.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Runs {
    series: Vec<SeriesId>,
    sources: Vec<Uuid>,
    first: Vec<i32>,
    last: Vec<i32>,
}

impl Runs {
    /// Notes that element `i` (0-based, after the last noted) is of `(series, source)`: it
    /// extends the last run or starts one.
    pub(crate) fn note(&mut self, series: SeriesId, source: Uuid, i: usize) {
        let at = i32::try_from(i + 1).unwrap_or(i32::MAX);
        match (self.series.last(), self.sources.last(), self.last.last_mut()) {
            (Some(s), Some(d), Some(l)) if (*s, *d) == (series, source) => *l = at,
            _ => {
                self.series.push(series);
                self.sources.push(source);
                self.first.push(at);
                self.last.push(at);
            }
        }
    }

    /// The runs of `series` and `sources` (one per element).
    fn of(series: &[SeriesId], sources: &[Uuid]) -> Runs {
        let mut runs = Runs::default();
        for (i, (s, d)) in series.iter().zip(sources).enumerate() {
            runs.note(*s, *d, i);
        }
        runs
    }

    /// The statement's parameters, in [`runs_sql`]'s order.
    pub(crate) fn params(&self) -> [&(dyn ToSql + Sync); 4] {
        [&self.series, &self.sources, &self.first, &self.last]
    }
}

/// SQL for a `from` clause: the runs of parameters `$first` to `$first + 3` ([`Runs::params`])
/// that `pick` (a condition on a run's series `k.s` and source `k.d`) keeps, as `k`, each cross
/// joined with its slices of the arrays that follow (`columns`: names and element types), as
/// `alias`.
pub(crate) fn runs_sql(first: usize, pick: &str, columns: &[(&str, &str)], alias: &str) -> String {
    let p = |i: usize| format!("${}", first + i);
    let slices: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, (_, t))| format!("({}::{t}[])[k.a:k.b]", p(4 + i)))
        .collect();
    let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
    format!(
        "(select k.s, k.d, k.a, k.b
          from unnest({}::smallint[], {}::uuid[], {}::integer[], {}::integer[]) as k(s, d, a, b)
          where {pick}) as k
         cross join lateral unnest({}) as {alias}({})",
        p(0),
        p(1),
        p(2),
        p(3),
        slices.join(", "),
        names.join(", ")
    )
}

impl SealedRows {
    pub fn len(&self) -> usize {
        self.ts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ts.is_empty()
    }

    /// The statement's parameters, in [`samples_sql`]'s order: the runs, then the samples.
    pub fn params(&self) -> [&(dyn ToSql + Sync); 9] {
        let [series, sources, first, last] = self.runs.params();
        [
            series,
            sources,
            first,
            last,
            &self.ts,
            &self.values,
            &self.offsets,
            &self.flags,
            &self.batches,
        ]
    }

    /// Adds a sample `(time, value, zone offset, daily-total flag)` of `series` and `source`
    /// without a batch (tests build pages so).
    #[cfg(test)]
    pub(crate) fn push_sample(
        &mut self,
        series: SeriesId,
        source: Uuid,
        (ts, value, offset, flag): (DateTime<Utc>, f64, Option<i16>, Option<bool>),
    ) {
        let sample =
            BlockSample { ts, value, zone_offset: offset, is_daily_total: flag, batch_id: None };
        self.push(series, source, &sample);
    }

    /// Adds a sample, extending its run.
    fn push(&mut self, series: SeriesId, source: Uuid, s: &BlockSample) {
        self.series.push(series);
        self.sources.push(source);
        self.ts.push(s.ts);
        self.values.push(s.value);
        self.offsets.push(s.zone_offset);
        self.flags.push(s.is_daily_total);
        self.batches.push(s.batch_id);
        self.runs.note(series, source, self.ts.len() - 1);
    }

    /// Finds the runs again after the samples changed.
    fn index(&mut self) {
        self.runs = Runs::of(&self.series, &self.sources);
    }

    /// Keeps only what a raw or sub-hour page's statement can take of these samples: per series
    /// and source, those of its first `page.rows` buckets (a raw sample's bucket is its time)
    /// past the cursor. The statement takes at most that many rows of any one series and
    /// source, so a page that decodes days of a dense series hands it a page's worth, not the
    /// days. Not for pages resolving duplicates by priority: there a sample held by a better
    /// source drops out, and the next may be needed.
    pub fn keep_page(&mut self, page: PageLimit) {
        let bucket = |ts: DateTime<Utc>| page.width.map_or(ts, |w| crate::rollups::floor_to(ts, w));
        // Per series and source, its samples past the cursor (index, bucket).
        type Past = Vec<(usize, DateTime<Utc>)>;
        let mut groups: BTreeMap<(SeriesId, Uuid), Past> = BTreeMap::new();
        for i in 0..self.len() {
            let b = bucket(self.ts[i]);
            let key = (b, self.series[i], self.sources[i]);
            let past = if page.backward { key < page.cursor } else { key > page.cursor };
            if past {
                groups.entry((self.series[i], self.sources[i])).or_default().push((i, b));
            }
        }
        let mut keep = vec![false; self.len()];
        for samples in groups.values() {
            let mut buckets: Vec<DateTime<Utc>> = samples.iter().map(|(_, b)| *b).collect();
            buckets.sort_unstable();
            buckets.dedup();
            let chosen = if page.backward {
                &buckets[buckets.len().saturating_sub(page.rows)..]
            } else {
                &buckets[..page.rows.min(buckets.len())]
            };
            let (Some(lo), Some(hi)) = (chosen.first(), chosen.last()) else { continue };
            for (i, b) in samples {
                keep[*i] = b >= lo && b <= hi;
            }
        }
        fn kept<T: Clone>(v: &[T], keep: &[bool]) -> Vec<T> {
            v.iter().zip(keep).filter(|(_, k)| **k).map(|(x, _)| x.clone()).collect()
        }
        *self = SealedRows {
            series: kept(&self.series, &keep),
            sources: kept(&self.sources, &keep),
            ts: kept(&self.ts, &keep),
            values: kept(&self.values, &keep),
            offsets: kept(&self.offsets, &keep),
            flags: kept(&self.flags, &keep),
            batches: kept(&self.batches, &keep),
            runs: Runs::default(),
        };
        self.index();
    }

    /// Adds another read's samples.
    pub fn extend(&mut self, other: SealedRows) {
        self.series.extend(other.series);
        self.sources.extend(other.sources);
        self.ts.extend(other.ts);
        self.values.extend(other.values);
        self.offsets.extend(other.offsets);
        self.flags.extend(other.flags);
        self.batches.extend(other.batches);
        self.index();
    }
}

/// SQL standing for the `samples` table with the sealed samples of parameters `$first` to
/// `$first + 8` ([`SealedRows::params`]) added, for a read of user `$1`. Aliased by the caller
/// (`from {samples} s`).
pub(crate) fn samples_sql(first: usize) -> String {
    sealed_union(first, "true", None)
}

/// [`samples_sql`] for a statement that reads one series (the SQL expression `series`) and, given
/// one, one source at a time, in the stretch `during` (a condition on a sample's `ts` that the
/// statement applies too): only their runs of the sealed samples are unnested, and only the
/// hypertable's chunks that `during` can hold are planned and read.
///
/// Why the rows are chosen where they are read as well as above: with its conditions its own,
/// TimescaleDB leaves the chunks outside `during` out of a statement planned with the values (a
/// custom plan) before it looks at them. Applied only above the `union all`, it planned every
/// chunk first: 4 ms to plan a raw page over 149 weekly chunks, against 0.9 ms so (and a generic
/// plan, planned once, still descends every chunk's index and locks every chunk on each call:
/// 2.5 ms a page, with the lock manager contended under concurrent reads).
pub(crate) fn pair_samples_sql(
    first: usize,
    series: &str,
    source: Option<&str>,
    during: &str,
) -> String {
    match source {
        Some(source) => sealed_union(
            first,
            &format!("k.s = {series} and k.d = {source}"),
            Some(&format!("series_type_id = {series} and data_source_id = {source} and {during}")),
        ),
        None => sealed_union(
            first,
            &format!("k.s = {series}"),
            Some(&format!("series_type_id = {series} and {during}")),
        ),
    }
}

/// The rows of `samples` (of user `$1` that `rows`, a condition on its columns, keeps, given one)
/// and the sealed samples of the runs `pick` (a condition on the run's series `k.s` and source
/// `k.d`) keeps.
fn sealed_union(first: usize, pick: &str, rows: Option<&str>) -> String {
    let columns = [
        ("ts", "timestamptz"),
        ("value", "float8"),
        ("zone_offset", "smallint"),
        ("is_daily_total", "boolean"),
        ("batch_id", "uuid"),
    ];
    format!(
        "(select user_id, series_type_id, data_source_id, ts, value, zone_offset,
                 is_daily_total, batch_id
          from samples{}
          union all
          select $1::uuid, k.s, k.d, u.ts, u.value, u.zone_offset, u.is_daily_total, u.batch_id
          from {})",
        rows.map(|rows| format!(" where user_id = $1 and {rows}")).unwrap_or_default(),
        runs_sql(first, pick, &columns, "u")
    )
}

/// The sealed samples in `scope`, by series, source and time.
pub async fn fetch(client: &impl GenericClient, scope: Scope<'_>) -> Result<SealedRows> {
    let mut out = SealedRows::default();
    let scope = Scope { from: scope.from.max(earliest()), to: scope.to.min(latest()), ..scope };
    if scope.from >= scope.to {
        return Ok(out);
    }
    let statement = client
        .prepare_cached(
            "select series_type_id, data_source_id, data from sample_blocks
             where user_id = $1
               and ($2::smallint[] is null or series_type_id = any($2))
               and ($3::uuid[] is null or data_source_id = any($3))
               and day > $4 and day < $5 and last_ts >= $6 and first_ts < $5
             order by series_type_id, data_source_id, day",
        )
        .await?;
    let series = scope.series.map(<[SeriesId]>::to_vec);
    let sources = scope.sources.map(<[Uuid]>::to_vec);
    let day_before = scope.from - Duration::days(SPAN_DAYS);
    let rows = client
        .query(
            &statement,
            &[&scope.user_id, &series, &sources, &day_before, &scope.to, &scope.from],
        )
        .await?;
    decode_into(&mut out, &rows, |_, ts| ts >= scope.from && ts < scope.to)?;
    Ok(out)
}

/// The sealed samples in `[from, to)` of the blocks that lie only partly inside it (the
/// window's edge days), every series and source; the blocks wholly inside are counted by their
/// `sample_count` instead.
pub(crate) async fn fetch_edges(
    client: &impl GenericClient,
    user_id: UserId,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<SealedRows> {
    let mut out = SealedRows::default();
    let (from, to) = (from.max(earliest()), to.min(latest()));
    if from >= to {
        return Ok(out);
    }
    let statement = client
        .prepare_cached(
            "select series_type_id, data_source_id, data from sample_blocks
             where user_id = $1 and last_ts >= $2 and first_ts < $3
               and day > $4 and day < $3 and not (first_ts >= $2 and last_ts < $3)
             order by series_type_id, data_source_id, day",
        )
        .await?;
    let day_before = from - Duration::days(SPAN_DAYS);
    let rows = client.query(&statement, &[&user_id, &from, &to, &day_before]).await?;
    decode_into(&mut out, &rows, |_, ts| ts >= from && ts < to)?;
    Ok(out)
}

/// The sealed samples of `series` inside each window `(source, from, to)`, each sample once
/// however many windows hold it.
pub(crate) async fn fetch_windows(
    client: &impl GenericClient,
    user_id: UserId,
    series: SeriesId,
    windows: &[(Uuid, DateTime<Utc>, DateTime<Utc>)],
) -> Result<SealedRows> {
    let mut out = SealedRows::default();
    if windows.is_empty() {
        return Ok(out);
    }
    let sources: Vec<Uuid> = windows.iter().map(|w| w.0).collect();
    let starts: Vec<DateTime<Utc>> = windows.iter().map(|w| w.1).collect();
    let ends: Vec<DateTime<Utc>> = windows.iter().map(|w| w.2).collect();
    let statement = client
        .prepare_cached(&format!(
            "select distinct b.series_type_id, b.data_source_id, b.data, b.day
             from unnest($3::uuid[], $4::timestamptz[], $5::timestamptz[]) as w(src, a, z)
             join sample_blocks b
               on b.user_id = $1 and b.series_type_id = $2 and b.data_source_id = w.src
              and b.day > w.a - interval '{SPAN_DAYS} days' and b.day < w.z
              and b.last_ts >= w.a and b.first_ts < w.z
             order by 1, 2, 4"
        ))
        .await?;
    let rows = client.query(&statement, &[&user_id, &series, &sources, &starts, &ends]).await?;
    decode_into(&mut out, &rows, |source, ts| {
        windows.iter().any(|(src, a, z)| *src == source && ts >= *a && ts < *z)
    })?;
    Ok(out)
}

/// Decodes blocks (`series_type_id, data_source_id, data`) into `out`, keeping the samples
/// `keep(source, time)` wants.
fn decode_into(
    out: &mut SealedRows,
    rows: &[tokio_postgres::Row],
    keep: impl Fn(Uuid, DateTime<Utc>) -> bool,
) -> Result<()> {
    for r in rows {
        let (series, source): (SeriesId, Uuid) = (r.try_get(0)?, r.try_get(1)?);
        for s in codec::decode(r.try_get(2)?)? {
            if !keep(source, s.ts) {
                continue;
            }
            out.push(series, source, &s);
        }
    }
    Ok(())
}

/// Ends a read's [`snapshot`] without waiting for the server: dropping the transaction sends
/// `ROLLBACK` (the same as a commit for a read-only one) and returns at once; the connection's
/// next statement, whoever pools it next, queues behind it. A page saves a round trip.
pub(crate) fn end_snapshot(tx: Transaction<'_>) {
    drop(tx);
}

/// A read-only transaction in one snapshot, for a read of blocks and rows together.
pub async fn snapshot(client: &mut Object) -> Result<Transaction<'_>> {
    Ok(client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await?)
}

/// Sealed days' hourly rollups, as the parallel arrays [`hours_sql`] reads.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct SealedHours {
    pub rows: HourRows,
    /// Each (series, source) once, with the first and last of its hours, once
    /// [`SealedHours::index`] has sorted them.
    pairs: Runs,
}

/// The figure columns of [`hours_sql`], after its four parameters of runs.
const HOUR_COLUMNS: [(&str, &str); 7] = [
    ("hour", "timestamptz"),
    ("sample_count", "integer"),
    ("value_sum", "float8"),
    ("total_count", "integer"),
    ("total_sum", "float8"),
    ("value_max", "float8"),
    ("zone_offset", "smallint"),
];

impl SealedHours {
    /// How many parameters [`SealedHours::params`] gives and [`hours_sql`] reads.
    pub(crate) const PARAMS: usize = 4 + HOUR_COLUMNS.len();

    /// Sorts the hours by series, source and time and notes where each pair's lie, so a
    /// statement takes a pair's hours as a slice instead of filtering them all for each pair.
    pub(crate) fn index(&mut self) {
        self.rows.sort();
        self.pairs = Runs::of(&self.rows.series, &self.rows.sources);
    }

    /// The statement's parameters, in [`hours_sql`]'s order (after [`SealedHours::index`]): the
    /// pairs, then the hours and their figures.
    pub(crate) fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.pairs.params().into_iter().chain(self.rows.params().into_iter().skip(2)).collect()
    }
}

/// SQL for a `from` clause of the sealed hourly rollups of parameters `$first` on
/// ([`SealedHours::PARAMS`] of them, [`SealedHours::params`]) of one series and source (the SQL expressions `series` and
/// `source`), with `hourly_rollups`' figure columns, as `alias`.
pub(crate) fn hours_sql(first: usize, series: &str, source: &str, alias: &str) -> String {
    runs_sql(first, &format!("k.s = {series} and k.d = {source}"), &HOUR_COLUMNS, alias)
}

/// Which sealed hours a page of buckets of an hour or more reads: per series and source, the
/// hours with figures in `[from, to)` from the cursor's bucket on, at most `rows` of them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HourScope<'a> {
    pub user_id: UserId,
    pub series: &'a [SeriesId],
    pub sources: &'a [Uuid],
    pub from: DateTime<Utc>,
    /// Exclusive.
    pub to: DateTime<Utc>,
    /// The cursor's time and the bucket width (seconds): hours from its bucket on (before its
    /// bucket's end, backward), as the page's statement bounds them.
    pub cursor: DateTime<Utc>,
    pub width: i64,
    pub backward: bool,
    pub rows: i64,
}

/// What [`fetch_figures`] reads of sealed blocks: their hourly rollups or their UTC day
/// rollups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figures {
    Hours,
    Days,
}

/// The sealed hours (or UTC days, each as a row at its start) of `scope`. Only the blocks that
/// hold them are read and decoded: per series and source, blocks in the scope's direction until
/// they hold `rows` of them in it.
pub(crate) async fn fetch_figures(
    client: &impl GenericClient,
    scope: HourScope<'_>,
    figures: Figures,
) -> Result<SealedHours> {
    let mut out = SealedHours::default();
    if scope.from >= scope.to || scope.series.is_empty() || scope.sources.is_empty() {
        return Ok(out);
    }
    // The page's bound on hours from the cursor's bucket on, as the statement has it.
    let bucket = "time_bucket($7::bigint * interval '1 second', $6::timestamptz)";
    let (dir, span) = if scope.backward {
        (
            "desc",
            format!(
                "$4::timestamptz as lo, least($5::timestamptz, {bucket} + $7::bigint * interval '1 second') as hi"
            ),
        )
    } else {
        ("asc", format!("greatest($4::timestamptz, {bucket}) as lo, $5::timestamptz as hi"))
    };
    // How many of what is read a block holds in [lo, hi): hours or days with figures.
    let (count, has) = match figures {
        Figures::Hours => ("block_bits(b.day, b.hours, 3600, w.lo, w.hi)", "b.hours is not null"),
        Figures::Days => ("block_bits(b.day, b.days, 86400, w.lo, w.hi)", "b.days is not null"),
    };
    let statement = client
        .prepare_cached(&format!(
            "select b.series_type_id, b.data_source_id, b.day, b.data, b.hours::text,
                    b.hour_exceptions, b.span, b.day_figures, b.days::text
             from unnest($2::smallint[]) as t(id)
             cross join unnest($3::uuid[]) as src(id)
             cross join (select {span}) as w
             cross join lateral (
                 select c.*
                 from (
                     select b.*, sum(b.n) over (order by b.day {dir}) as upto
                     from (
                         select b.*, {count} as n
                         from sample_blocks b
                         where b.user_id = $1 and b.series_type_id = t.id
                           and b.data_source_id = src.id and {has}
                           and b.day > w.lo - interval '{SPAN_DAYS} days' and b.day < w.hi
                         order by b.day {dir}
                         limit $8::bigint + 2
                     ) b
                 ) c
                 where c.n > 0 and c.upto - c.n < $8::bigint
             ) b"
        ))
        .await?;
    let series = scope.series.to_vec();
    let sources = scope.sources.to_vec();
    let rows = client
        .query(
            &statement,
            &[
                &scope.user_id,
                &series,
                &sources,
                &scope.from,
                &scope.to,
                &scope.cursor,
                &scope.width,
                &scope.rows,
            ],
        )
        .await?;
    for r in &rows {
        let (series, source, day): (SeriesId, Uuid, DateTime<Utc>) =
            (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
        // Only the scope's hours or days: a block spanning days may hold those of other pieces
        // of the same page too, which read it again.
        let kept: Vec<(DateTime<Utc>, HourFigures)> = match figures {
            Figures::Hours => {
                let samples = codec::decode(r.try_get(3)?)?;
                let bits: String = r.try_get(4)?;
                let hours = hours::load(day, &samples, &bits, r.try_get(5)?)?;
                hours.into_iter().map(|(h, f)| (hours::start(day, h), f)).collect()
            }
            Figures::Days => {
                let span: i16 = r.try_get(6)?;
                let span = u16::try_from(span).unwrap_or(1);
                let bytes: &[u8] = r.try_get(7)?;
                let bits: String = r.try_get(8)?;
                // A dense block's days are written out: its samples are not decoded.
                let days = match days::load_written(span, &bits, bytes)? {
                    Some(days) => days,
                    None => days::load(day, span, &codec::decode(r.try_get(3)?)?, bytes)?,
                };
                days.into_iter().map(|(d, f)| (day + Duration::days(i64::from(d)), f)).collect()
            }
        };
        for (at, f) in kept {
            if at >= scope.from && at < scope.to {
                out.rows.push(series, source, at, &f);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_hours_give_as_many_parameters_as_their_sql_reads() {
        assert_eq!(SealedHours::default().params().len(), SealedHours::PARAMS);
        let sql = hours_sql(1, "s", "d", "u");
        assert!(sql.contains(&format!("${}", SealedHours::PARAMS)));
        assert!(!sql.contains(&format!("${}", SealedHours::PARAMS + 1)));
    }

    #[test]
    fn indexed_hours_lie_by_pair_and_time() {
        let at = |h: i64| DateTime::from_timestamp(h * 3600, 0).unwrap_or_default();
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let mut hours = SealedHours::default();
        for (series, source, hour) in [(2, a, 5), (1, b, 3), (2, a, 1), (1, b, 2), (1, a, 9)] {
            let f = HourFigures::of(0.0, None, None);
            hours.rows.push(
                SeriesId(series),
                source,
                at(hour),
                &HourFigures { sample_count: hour as i32, ..f },
            );
        }
        hours.index();
        assert_eq!(hours.rows.counts, vec![9, 2, 3, 1, 5]);
        let pairs = &hours.pairs;
        assert_eq!(
            (&pairs.series, &pairs.sources),
            (&vec![1, 1, 2].into_iter().map(SeriesId).collect(), &vec![a, b, a])
        );
        assert_eq!((&pairs.first, &pairs.last), (&vec![1, 2, 4], &vec![1, 3, 5]));
    }
}
