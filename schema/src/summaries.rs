//! The reads behind the summaries: per-day rollups, sleep sessions by wake-up time, averages
//! of samples over intervals, latest values, and counts. Summaries never scan a user's raw
//! history: days come from `daily_rollups` and the blocks that keep sealed local days,
//! samples only from short bounded intervals.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use postgres_types::ToSql;

use crate::blocks;
use crate::ids::SeriesId;
use crate::ids::UserId;
use crate::rollups::DayFigures;
use crate::session_blocks::Sessions;
use crate::sessions::{Event, Sleep};
use crate::{Db, Result};

/// One rollup: a local day of one series from one source, with its figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DayRollup {
    pub local_date: NaiveDate,
    pub series_type_id: SeriesId,
    pub data_source_id: Uuid,
    pub figures: DayFigures,
}

/// The user's rollups of `series` on the first `n` local days in `[from, to]` that have any
/// (the last `n`, when `backward`): one page of a summary of rollups, in one statement.
pub async fn page_rollups(
    db: &Db,
    user_id: UserId,
    series: &[SeriesId],
    (from, to): (NaiveDate, NaiveDate),
    backward: bool,
    n: i64,
) -> Result<Vec<DayRollup>> {
    let client = db.client().await?;
    let order = if backward { "desc" } else { "asc" };
    let sql = format!(
        "with days as (select d from ({}) x order by d {order} limit $5)
         {}",
        local_dates_sql(),
        rollups_sql("(select min(d) from days)", "(select max(d) from days)")
    );
    let statement = client.prepare_cached(&sql).await?;
    let rows = client.query(&statement, &[&user_id, &series, &from, &to, &n]).await?;
    day_rollups(&rows)
}

/// The local dates of `series` with rollups, as column `d`: rows' and sealed blocks' (see
/// [`blocks::read::local_dates_sql`]). $1 user, $2 series, $3/$4 first and last date.
fn local_dates_sql() -> String {
    format!(
        "select r.local_date as d from daily_rollups r
         where r.user_id = $1 and r.series_type_id = any($2) and r.local_date between $3 and $4
         union
         {}",
        blocks::read::local_dates_sql()
    )
}

/// The user's rollups of `series` for local days in `[from, to]`.
pub async fn rollups(
    db: &Db,
    user_id: UserId,
    series: &[SeriesId],
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Vec<DayRollup>> {
    let client = db.client().await?;
    let statement = client.prepare_cached(&rollups_sql("$3::date", "$4::date")).await?;
    let rows = client.query(&statement, &[&user_id, &series, &from, &to]).await?;
    day_rollups(&rows)
}

/// The rollups of user `$1`'s series `$2` (an array) for local days in `[lo, hi]` (SQL): the
/// rows, and the sealed blocks that may keep some (their `local_figures`, with `lo` and `hi`),
/// in one statement (one snapshot: a day is a row or in its block, never both).
fn rollups_sql(lo: &str, hi: &str) -> String {
    format!(
        "select r.series_type_id, r.data_source_id, r.local_date, r.sample_count, r.value_sum,
                r.value_min, r.value_max, r.total_count, r.total_sum, null::timestamptz as day,
                null::bytea as figures, null::date as lo, null::date as hi
         from daily_rollups r
         where r.user_id = $1 and r.series_type_id = any($2) and r.local_date between {lo} and {hi}
         union all
         select b.series_type_id, b.data_source_id, null, null, null, null, null, null, null,
                b.day, b.local_figures, {lo}, {hi}
         from sample_blocks b
         where b.user_id = $1 and b.series_type_id = any($2) and b.local_figures is not null
           and b.day > ({lo} - {SPAN_DAYS})::timestamp at time zone 'UTC'
           and b.day < ({hi})::timestamp at time zone 'UTC'",
        SPAN_DAYS = blocks::store::SPAN_DAYS
    )
}

/// The rollups [`rollups_sql`] read, in order of day, series and source.
fn day_rollups(rows: &[tokio_postgres::Row]) -> Result<Vec<DayRollup>> {
    let mut days = crate::rollups::LocalDays::new();
    for r in rows {
        let key = (r.try_get(0)?, r.try_get(1)?);
        match r.try_get::<_, Option<&[u8]>>(10)? {
            None => {
                days.insert((key.0, key.1, r.try_get(2)?), DayFigures::from_row(r, 3)?);
            }
            Some(bytes) => {
                let (day, lo, hi): (DateTime<Utc>, NaiveDate, NaiveDate) =
                    (r.try_get(9)?, r.try_get(11)?, r.try_get(12)?);
                for (date, f) in blocks::local_days::load(day.date_naive(), bytes)? {
                    if date >= lo && date <= hi {
                        days.insert((key.0, key.1, date), f);
                    }
                }
            }
        }
    }
    let mut out: Vec<DayRollup> = days
        .into_iter()
        .map(|((series_type_id, data_source_id, local_date), figures)| DayRollup {
            local_date,
            series_type_id,
            data_source_id,
            figures,
        })
        .collect();
    out.sort_by_key(|r| (r.local_date, r.series_type_id, r.data_source_id));
    Ok(out)
}

/// The user's sleep sessions ending in `[from, to)`, each with its wake-up day (the local day
/// it ends on, by the one `local_day` rule of migration V10), in order of their end, with a
/// night that two sources recorded kept once (the sessions' one duplicate rule,
/// `events_dedup.sql`, over the whole table: a better-ranked copy just outside the window still
/// wins). `sources`: the user's source ids and ranks (lower wins).
pub async fn sleep_ending(
    db: &Db,
    user_id: UserId,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    sources: &(Vec<Uuid>, Vec<i32>),
) -> Result<Vec<(NaiveDate, Sleep)>> {
    let client = db.client().await?;
    // Sessions are shorter than two days: the start bound lets the index do the work.
    let sql = format!(
        "select e.id, e.data_source_id, e.start_time, e.end_time, e.zone_offset,
                e.duration_seconds, e.sleep_seconds, e.in_bed_seconds, e.deep_minutes,
                e.rem_minutes, e.light_minutes, e.awake_minutes, e.efficiency_percent,
                e.is_nap, e.stages, local_day(e.end_time, e.zone_offset) as wake_day
         from {sessions} e
         where e.user_id = $1 and e.start_time >= $2::timestamptz - interval '2 days' and e.start_time < $3
           and e.end_time >= $2 and e.end_time < $3 {dedup}
         order by e.end_time, e.id",
        sessions = Sessions::Sleep.in_window("$1", "$2::timestamptz - interval '2 days'", "$3"),
        dedup = crate::sessions::dedup(crate::sessions::Kind::Sleep, "true", "$4", "$5"),
    );
    let statement = client.prepare_cached(&sql).await?;
    let (ids, ranks) = sources;
    client
        .query(&statement, &[&user_id, &from, &to, ids, ranks])
        .await?
        .iter()
        .map(|r| Ok((r.try_get("wake_day")?, Sleep::from_row(r)?)))
        .collect()
}

/// What makes a local day one of a day-paged summary's days.
#[derive(Debug, Clone, Copy)]
pub enum DataDays<'a> {
    /// A rollup of one of these series.
    Rollups(&'a [SeriesId]),
    /// The wake-up day of a sleep session, nap or night (duplicates resolved).
    Wakes,
    /// A rollup of one of these series, or the wake-up day of a night (not a nap).
    RollupsOrNights(&'a [SeriesId]),
    /// The wake-up day of a night (not a nap): a day with a sleep score.
    Nights,
}

/// Where to look for a summary's days: local days `[first, last]`, sessions ending in
/// `[ends_from, ends_to)` (a window wide enough for every offset), the user's sources and ranks.
#[derive(Debug, Clone, Copy)]
pub struct DayScope<'a> {
    pub first: NaiveDate,
    pub last: NaiveDate,
    pub ends_from: DateTime<Utc>,
    pub ends_to: DateTime<Utc>,
    pub sources: &'a (Vec<Uuid>, Vec<i32>),
}

impl DataDays<'_> {
    fn series(&self) -> &[SeriesId] {
        match self {
            DataDays::Rollups(series) | DataDays::RollupsOrNights(series) => series,
            DataDays::Wakes | DataDays::Nights => &[],
        }
    }

    /// 0: no sessions; 1: every session; 2: nights only.
    fn sessions(&self) -> i16 {
        match self {
            DataDays::Rollups(_) => 0,
            DataDays::Wakes => 1,
            DataDays::RollupsOrNights(_) | DataDays::Nights => 2,
        }
    }
}

/// The days of a `DataDays` in a `DayScope`, as column `d`. $1 user, $2 series, $3/$4 first and
/// last day, $5/$6 session ends, $7/$8 source ids and ranks, $9 `DataDays::sessions`.
fn data_days_sql() -> String {
    format!(
        "{}
         union
         select local_day(e.end_time, e.zone_offset) from {sessions} e
         where $9::smallint > 0 and e.user_id = $1
           and e.start_time >= $5::timestamptz - interval '2 days' and e.start_time < $6
           and e.end_time >= $5 and e.end_time < $6 and ($9 = 1 or not e.is_nap)
           and local_day(e.end_time, e.zone_offset) between $3 and $4 {dedup}",
        local_dates_sql(),
        sessions = Sessions::Sleep.in_window("$1", "$5::timestamptz - interval '2 days'", "$6"),
        dedup = crate::sessions::dedup(crate::sessions::Kind::Sleep, "true", "$7", "$8"),
    )
}

/// The first `n` days of `which` in scope (the last `n`, newest first, when `backward`): what
/// one page of a day-paged summary lists, found before anything is read for it.
pub async fn data_days(
    db: &Db,
    user_id: UserId,
    which: DataDays<'_>,
    scope: &DayScope<'_>,
    backward: bool,
    n: i64,
) -> Result<Vec<NaiveDate>> {
    let order = if backward { "desc" } else { "asc" };
    let sql = format!("select d from ({}) x order by d {order} limit $10", data_days_sql());
    let rows = query_days(db, &sql, user_id, which, scope, n).await?;
    rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
}

/// How many days of `which` the scope holds, counted in the database (for a scope as long as
/// a user's history).
pub async fn count_data_days(
    db: &Db,
    user_id: UserId,
    which: DataDays<'_>,
    scope: &DayScope<'_>,
) -> Result<i64> {
    // $10 unused but typed, so both queries take the same parameters.
    let sql = format!("select count(*) from ({}) x where $10::int8 >= 0", data_days_sql());
    let rows = query_days(db, &sql, user_id, which, scope, 0).await?;
    match rows.first() {
        Some(row) => Ok(row.try_get(0)?),
        None => Ok(0),
    }
}

async fn query_days(
    db: &Db,
    sql: &str,
    user_id: UserId,
    which: DataDays<'_>,
    scope: &DayScope<'_>,
    n: i64,
) -> Result<Vec<tokio_postgres::Row>> {
    let client = db.client().await?;
    let statement = client.prepare_cached(sql).await?;
    let (ids, ranks) = scope.sources;
    let (series, sessions) = (which.series(), which.sessions());
    let params: [&(dyn postgres_types::ToSql + Sync); 10] = [
        &user_id,
        &series,
        &scope.first,
        &scope.last,
        &scope.ends_from,
        &scope.ends_to,
        ids,
        ranks,
        &sessions,
        &n,
    ];
    Ok(client.query(&statement, &params).await?)
}

/// Means of each of `series` (any source) over each interval: `(interval index, series, mean)`.
pub async fn means_over(
    db: &Db,
    user_id: UserId,
    series: &[SeriesId],
    intervals: &[(DateTime<Utc>, DateTime<Utc>)],
) -> Result<Vec<(i32, SeriesId, f64)>> {
    if intervals.is_empty() {
        return Ok(Vec::new());
    }
    let (starts, ends): (Vec<DateTime<Utc>>, Vec<DateTime<Utc>>) =
        intervals.iter().copied().unzip();
    let (Some(first), Some(last)) = (starts.iter().min(), ends.iter().max()) else {
        return Ok(Vec::new());
    };
    let mut client = db.client().await?;
    let tx = blocks::snapshot(&mut client).await?;
    // One scan of the span, joined to the intervals: a scan per interval and series costs ten
    // times more on a hypertable (each one starts on every chunk). Sums and counts, so sealed
    // samples add to them: a mean is its sum over its count, as `avg` has it.
    let statement = tx
        .prepare_cached(
            "select (n.i - 1)::int, s.series_type_id, sum(s.value order by s.ts, s.data_source_id), count(*)
             from unnest($3::timestamptz[], $4::timestamptz[]) with ordinality as n(a, b, i)
             join samples s on s.ts >= n.a and s.ts < n.b
             where s.user_id = $1 and s.series_type_id = any($2) and s.ts >= $5 and s.ts < $6
             group by 1, 2",
        )
        .await?;
    let rows = tx.query(&statement, &[&user_id, &series, &starts, &ends, first, last]).await?;
    let sealed = blocks::fetch(
        &tx,
        blocks::Scope { user_id, series: Some(series), sources: None, from: *first, to: *last },
    )
    .await?;
    blocks::end_snapshot(tx);
    // Sealed samples first: they are the older ones where a night spans both.
    let mut sums: std::collections::BTreeMap<(i32, SeriesId), (f64, i64)> = Default::default();
    let mut by_time: Vec<usize> = (0..sealed.len()).collect();
    by_time.sort_by_key(|i| sealed.ts[*i]);
    for (k, (a, b)) in intervals.iter().enumerate() {
        let from = by_time.partition_point(|i| sealed.ts[*i] < *a);
        for i in by_time[from..].iter().take_while(|i| sealed.ts[**i] < *b) {
            let e = sums.entry((k as i32, sealed.series[*i])).or_insert((0.0, 0));
            e.0 += sealed.values[*i];
            e.1 += 1;
        }
    }
    for r in &rows {
        let e = sums.entry((r.try_get(0)?, r.try_get(1)?)).or_insert((0.0, 0));
        let (sum, n): (f64, i64) = (r.try_get(2)?, r.try_get(3)?);
        *e = if e.1 == 0 { (sum, n) } else { (e.0 + sum, e.1 + n) };
    }
    Ok(sums.into_iter().map(|((i, series), (sum, n))| (i, series, sum / n as f64)).collect())
}

/// A sample as it was recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub ts: DateTime<Utc>,
    pub value: f64,
    pub zone_offset: Option<i16>,
    pub data_source_id: Uuid,
}

/// The last day each source has a rollup of `series`: `(source, day)`.
pub async fn last_days(
    db: &Db,
    user_id: UserId,
    series: SeriesId,
) -> Result<Vec<(Uuid, NaiveDate)>> {
    let client = db.client().await?;
    let statement = client
        .prepare_cached(
            "select source, max(d) from (
                 select data_source_id as source, max(local_date) as d from daily_rollups
                 where user_id = $1 and series_type_id = $2 group by 1
                 union all
                 select b.data_source_id, max(d)
                 from sample_blocks b cross join lateral block_dates(b.day, b.local_days) d
                 where b.user_id = $1 and b.series_type_id = $2 and b.local_figures is not null
                 group by 1
             ) x group by source",
        )
        .await?;
    let rows = client.query(&statement, &[&user_id, &series]).await?;
    rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
}

/// The latest sample of `series` at or after `since`, from `source` or from any source.
pub async fn latest(
    db: &Db,
    user_id: UserId,
    series: SeriesId,
    source: Option<Uuid>,
    since: DateTime<Utc>,
) -> Result<Option<Reading>> {
    let mut client = db.client().await?;
    let tx = blocks::snapshot(&mut client).await?;
    let sources = source.map(|s| [s]);
    let scope = blocks::Scope {
        user_id,
        series: Some(&[series]),
        sources: sources.as_ref().map(|s| &s[..]),
        from: since,
        to: blocks::read::latest(),
    };
    let sealed = blocks::fetch(&tx, scope).await?;
    let statement = tx
        .prepare_cached(&format!(
            "select ts, value, zone_offset, data_source_id from {} s
             where user_id = $1 and series_type_id = $2 and ts >= $3
               and ($4::uuid is null or data_source_id = $4)
             order by ts desc limit 1",
            blocks::samples_sql(5)
        ))
        .await?;
    let params: [&(dyn ToSql + Sync); 4] = [&user_id, &series, &since, &source];
    let row = tx.query_opt(&statement, &[&params[..], &sealed.params()[..]].concat()).await?;
    blocks::end_snapshot(tx);
    row.map(|r| {
        Ok(Reading {
            ts: r.try_get(0)?,
            value: r.try_get(1)?,
            zone_offset: r.try_get(2)?,
            data_source_id: r.try_get(3)?,
        })
    })
    .transpose()
}

/// Counts of a user's data, overall or in a window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    /// `(series, source, samples)`.
    pub samples: Vec<(SeriesId, Uuid, i64)>,
    /// `(type, source, workouts)`.
    pub workouts: Vec<(Option<String>, Uuid, i64)>,
    /// `(source, sleep sessions)`.
    pub sleep: Vec<(Uuid, i64)>,
    pub cycles: i64,
}

/// Samples are counted by their time, sessions by their start. All-time sample counts come from
/// the rollups; windowed ones from the samples in the window.
pub async fn counts(
    db: &Db,
    user_id: UserId,
    window: Option<(DateTime<Utc>, DateTime<Utc>)>,
) -> Result<Counts> {
    let mut client = db.client().await?;
    let tx = blocks::snapshot(&mut client).await?;
    let (from, to) = window.unzip();
    let samples = match window {
        None => {
            // Local days are rows or kept by a block (its `local_samples` counts them).
            tx.query(
                "select series_type_id, data_source_id, sum(n)::bigint from (
                     select series_type_id, data_source_id, sum(sample_count + total_count) as n
                     from daily_rollups where user_id = $1 group by 1, 2
                     union all
                     select series_type_id, data_source_id, sum(local_samples) from sample_blocks
                     where user_id = $1 and local_figures is not null group by 1, 2
                 ) c group by 1, 2",
                &[&user_id],
            )
            .await?
        }
        Some((a, b)) => {
            // Sealed days wholly inside the window count by their blocks' counts; the days at
            // its edges are decoded.
            let edges = blocks::read::fetch_edges(&tx, user_id, a, b).await?;
            let sql = format!(
                "select series_type_id, data_source_id, sum(n)::bigint from (
                     select series_type_id, data_source_id, count(*) as n from {} s
                     where user_id = $1 and ts >= $2 and ts < $3 group by 1, 2
                     union all
                     select series_type_id, data_source_id, sum(sample_count) from sample_blocks
                     where user_id = $1 and first_ts >= $2 and last_ts < $3 group by 1, 2
                 ) c group by 1, 2",
                blocks::samples_sql(4)
            );
            let params: [&(dyn ToSql + Sync); 3] = [&user_id, &a, &b];
            tx.query(&sql, &[&params[..], &edges.params()[..]].concat()).await?
        }
    };
    // Sessions rows and sealed; an open end is no bound.
    let (lo, hi) = (
        "coalesce($2::timestamptz, '-infinity'::timestamptz)",
        "coalesce($3::timestamptz, 'infinity'::timestamptz)",
    );
    let workouts = tx
        .query(
            &format!(
                "select type, data_source_id, count(*) from {} e group by 1, 2",
                Sessions::Workouts.in_window("$1", lo, hi)
            ),
            &[&user_id, &from, &to],
        )
        .await?;
    let sleep = tx
        .query(
            &format!(
                "select data_source_id, count(*) from {} e group by 1",
                Sessions::Sleep.in_window("$1", lo, hi)
            ),
            &[&user_id, &from, &to],
        )
        .await?;
    let cycles = tx
        .query_one(
            "select count(*) from menstrual_cycles
             where user_id = $1 and ($2::timestamptz is null or start_time >= $2)
               and ($3::timestamptz is null or start_time < $3)",
            &[&user_id, &from, &to],
        )
        .await?;
    blocks::end_snapshot(tx);
    Ok(Counts {
        samples: samples
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect::<Result<_>>()?,
        workouts: workouts
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect::<Result<_>>()?,
        sleep: sleep.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect::<Result<_>>()?,
        cycles: cycles.try_get(0)?,
    })
}

/// A stored sample of one of `series`, with its series.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesReading {
    pub series_type_id: SeriesId,
    pub reading: Reading,
}

/// The newest `limit` samples of `series` in `[from, to)` (either bound optional), from the
/// given sources or any, newest first; and how many there are in all.
#[allow(clippy::too_many_arguments)]
pub async fn newest_readings(
    db: &Db,
    user_id: UserId,
    series: &[SeriesId],
    sources: Option<&[Uuid]>,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
    limit: i64,
) -> Result<(Vec<SeriesReading>, i64)> {
    let mut client = db.client().await?;
    let tx = blocks::snapshot(&mut client).await?;
    // Day-level series (vendors' scores): a block holds a day's one or few samples.
    let scope = blocks::Scope {
        user_id,
        series: Some(series),
        sources,
        from: from.unwrap_or_else(blocks::read::earliest),
        to: to.unwrap_or_else(blocks::read::latest),
    };
    let sealed = blocks::fetch(&tx, scope).await?;
    let filter = "user_id = $1 and series_type_id = any($2)
                  and ($3::uuid[] is null or data_source_id = any($3))
                  and ($4::timestamptz is null or ts >= $4)
                  and ($5::timestamptz is null or ts < $5)";
    let list = tx
        .prepare_cached(&format!(
            "select ts, value, zone_offset, data_source_id, series_type_id from {} s
             where {filter} order by ts desc, series_type_id, data_source_id limit $6",
            blocks::samples_sql(7)
        ))
        .await?;
    let count = tx
        .prepare_cached(&format!(
            "select count(*) from {} s where {filter}",
            blocks::samples_sql(6)
        ))
        .await?;
    let sources = sources.map(<[Uuid]>::to_vec);
    let params: [&(dyn ToSql + Sync); 6] = [&user_id, &series, &sources, &from, &to, &limit];
    let rows = tx.query(&list, &[&params[..], &sealed.params()[..]].concat()).await?;
    let total: i64 =
        tx.query_one(&count, &[&params[..5], &sealed.params()[..]].concat()).await?.try_get(0)?;
    blocks::end_snapshot(tx);
    let readings = rows
        .iter()
        .map(|r| {
            Ok(SeriesReading {
                series_type_id: r.try_get(4)?,
                reading: Reading {
                    ts: r.try_get(0)?,
                    value: r.try_get(1)?,
                    zone_offset: r.try_get(2)?,
                    data_source_id: r.try_get(3)?,
                },
            })
        })
        .collect::<Result<_>>()?;
    Ok((readings, total))
}
