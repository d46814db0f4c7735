//! Timeseries reads: one user's samples of some series in a time window, in pages ordered by
//! (time, series type, source), raw or downsampled into UTC buckets, optionally with
//! cross-source duplicates resolved by source priority.
//!
//! Every page reads a bounded stretch, whatever the window and however far into it the cursor
//! is; the rollups (kept exact at ingest) say where the samples are:
//! - raw: the daily rollups count each local day's samples, so the page's stretch ends at the
//!   day by which it is surely full, widened for zone offsets (`timeseries_bound_days.sql`);
//!   only that stretch of the hypertable is planned and read, each series by its own index
//!   range scan (`samples_dedup_key` leads with user and series), merged and cut to the page;
//! - buckets of an hour or a day: from the rollups themselves, whole days from the UTC day
//!   rollups and whole hours from the hourly ones, at most (rows + 1) buckets of them per series
//!   and source (`timeseries_rollups.sql`);
//! - buckets under an hour: the raw samples of the stretch by whose end the hourly rollups
//!   count as many hours with samples as the page has rows (`timeseries_bound.sql`), in one
//!   scan per series and source (`timeseries_subhour.sql`).
//!
//! Series the user has no rollup for in the window are skipped without touching the hypertable.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use chrono::{DateTime, Duration, NaiveDate, NaiveTime, Utc};
use deadpool_postgres::GenericClient;
use postgres_types::ToSql;
use uuid::Uuid;

use crate::blocks::store::SPAN_DAYS;
use crate::blocks::{
    self, Figures, HourScope, PageLimit, Scope, SealedBuckets, SealedHours, SealedRows,
};
use crate::catalogue::series_types::{self, Aggregation};
use crate::ids::SeriesId;
use crate::ids::UserId;
use crate::rollups::{floor_to, hour_of};
use crate::{Db, Result};

const RAW: &str = include_str!("../queries/timeseries_raw.sql");
const BOUND: &str = include_str!("../queries/timeseries_bound.sql");
const BOUND_DAYS: &str = include_str!("../queries/timeseries_bound_days.sql");
const ROLLUPS: &str = include_str!("../queries/timeseries_rollups.sql");
const ROLLUP_HOURS: &str = include_str!("../queries/timeseries_rollups_hours.sql");
const SUBHOUR: &str = include_str!("../queries/timeseries_subhour.sql");
const SERIES: &str = include_str!("../queries/timeseries_series.sql");
const HOURS_HELD: &str = include_str!("../queries/hours_held.sql");

const HOUR: i64 = 3600;
const DAY: i64 = 86_400;

/// Where a page starts: the last row seen (exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub ts: DateTime<Utc>,
    pub series_type_id: SeriesId,
    pub data_source_id: Uuid,
}

#[derive(Debug, Clone)]
pub struct SeriesQuery {
    pub user_id: UserId,
    /// Series type ids; empty means every series.
    pub types: Vec<SeriesId>,
    pub start: DateTime<Utc>,
    /// Exclusive.
    pub end: DateTime<Utc>,
    pub after: Option<Position>,
    /// Read towards older rows from `after` (a `prev_` cursor); rows come nearest first.
    pub backward: bool,
    /// Rows to fetch (the caller asks one more than it shows, to know whether more exist).
    pub fetch: i64,
    /// Bucket width in seconds (a divisor or a multiple of an hour); `None` for raw samples.
    pub bucket_seconds: Option<i64>,
    /// The user's sources and their ranks (`ids`, `ranks`; lower wins).
    pub sources: (Vec<Uuid>, Vec<i32>),
    /// Leave a sample out when a better-ranked source has samples of the same series in the
    /// same hour (or bucket, if wider).
    pub resolve: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SeriesPoint {
    pub ts: DateTime<Utc>,
    pub series_type_id: SeriesId,
    pub data_source_id: Uuid,
    pub value: f64,
    pub zone_offset: Option<i16>,
    pub is_daily_total: Option<bool>,
}

/// Statements rendered, by reading and direction (backward or not).
type Rendered = HashMap<(Reading, bool), Arc<str>>;

/// How a page is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Reading {
    Raw,
    /// Buckets shorter than an hour, from the raw samples of the page's stretch.
    SubHour {
        width: i64,
    },
    /// Buckets of an hour or more, from the hourly rollups.
    Rollups {
        width: i64,
    },
}

impl Reading {
    fn of(bucket_seconds: Option<i64>) -> Reading {
        match bucket_seconds {
            None => Reading::Raw,
            Some(width) if width < HOUR => Reading::SubHour { width },
            Some(width) => Reading::Rollups { width },
        }
    }

    /// The statement for this reading and direction, rendered once per process: a rollups
    /// page's is some 10 kB put together by a score of replacements, for every page otherwise.
    /// Bounded: widths come from a fixed list, never from input text.
    fn statement(self, backward: bool) -> Arc<str> {
        static RENDERED: LazyLock<Mutex<Rendered>> = LazyLock::new(Default::default);
        let mut rendered = RENDERED.lock().unwrap_or_else(PoisonError::into_inner);
        rendered.entry((self, backward)).or_insert_with(|| self.render(backward).into()).clone()
    }

    /// The statement for this reading and direction.
    fn render(self, backward: bool) -> String {
        let (cmp, dir) = if backward { ("<", "desc") } else { (">", "asc") };
        let sql = match self {
            Reading::Raw => {
                let own = "select own.rank from ranked own where own.id = s.data_source_id";
                let hour = "time_bucket(interval '1 hour', s.ts)";
                RAW.replace(
                    "{held}",
                    &hours_held(
                        "s.series_type_id",
                        hour,
                        &format!("{hour} + interval '1 hour'"),
                        &format!("select better.id from ranked better where better.rank < ({own})"),
                    ),
                )
            }
            Reading::SubHour { width } => {
                let interval = format!("interval '{width} seconds'");
                // The samples of the cursor's bucket and past it.
                let (from, to) = if backward {
                    ("$4".to_string(), format!("$6::timestamptz + {interval}"))
                } else {
                    ("$6".to_string(), "$5".to_string())
                };
                let hour = "time_bucket(interval '1 hour', b.ts)";
                let held =
                    hours_held("types.id", hour, &format!("{hour} + interval '1 hour'"), BETTER);
                SUBHOUR
                    .replace("{buckets}", &blocks::buckets_sql(22, "types.id", "ranked.id", "u"))
                    .replace("{held}", &held)
                    .replace("{from}", &from)
                    .replace("{to}", &to)
                    .replace("{width}", &interval)
            }
            Reading::Rollups { width } => {
                let interval = format!("interval '{width} seconds'");
                // From the cursor's bucket on (the window's edge's, without a cursor).
                let bucket = format!("time_bucket({interval}, $6::timestamptz)");
                let bound = |column: &str| {
                    if backward {
                        format!("{column} < {bucket} + {interval}")
                    } else {
                        format!("{column} >= {bucket}")
                    }
                };
                let end = format!("g.ts + {interval}");
                // A day has samples when it has a UTC day rollup or a block holds an hour of it
                // (a block of V22, its hours still rows, holds its one day).
                let held = if width >= DAY {
                    format!(
                        "(exists (select 1 from utc_day_rollups x
                                  where x.user_id = $1 and x.series_type_id = types.id
                                    and x.day >= g.ts and x.day < {end}
                                    and x.data_source_id in ({BETTER}))
                          or exists (select 1 from sample_blocks x
                                     where x.user_id = $1 and x.series_type_id = types.id
                                       and x.day > g.ts - interval '{SPAN_DAYS} days'
                                       and x.day < {end}
                                       and (block_bits(x.day, x.hours, 3600, g.ts, {end}) > 0
                                            or x.hours is null and x.day >= g.ts)
                                       and x.data_source_id in ({BETTER})))"
                    )
                } else {
                    hours_held("types.id", "g.ts", &end, BETTER)
                };
                // Each piece reads its own sealed figures (`sealed_hours`, in its order).
                let figures = |k| blocks::hours_sql(sealed_param(k), "types.id", "ranked.id", "u");
                let mut sql = ROLLUPS.replace("{sealed_hours}", &figures(1));
                for (from, to, k) in [("$13", "$14", 0), ("$15", "$16", 2)] {
                    let piece = ROLLUP_HOURS
                        .replace("{from}", from)
                        .replace("{to}", to)
                        .replace("{sealed_hours}", &figures(k));
                    sql = sql.replace(&format!("{{hours:{from}:{to}}}"), &piece);
                }
                for column in ["r.day", "r.hour", "u.hour", "e.hour"] {
                    sql = sql.replace(&format!("{{bound:{column}}}"), &bound(column));
                }
                sql.replace("{held}", &held)
                    .replace("{limit}", &Self::piece_rows_sql(width))
                    .replace("{span_days}", &SPAN_DAYS.to_string())
                    .replace("{width}", &interval)
            }
        };
        // The sealed samples' arrays follow the statement's own parameters; each page reads
        // them a series (raw) or a series and source at a time.
        // The stretch each reads its rows in, as its statement says it further down.
        let window = "ts >= $4 and ts < $5";
        let samples = match self {
            Reading::Raw => blocks::pair_samples_sql(13, "types.id", None, window),
            Reading::SubHour { .. } => {
                blocks::pair_samples_sql(13, "types.id", Some("ranked.id"), window)
            }
            Reading::Rollups { .. } => blocks::pair_samples_sql(
                sealed_param(3),
                "types.id",
                Some("ranked.id"),
                "((ts >= $4 and ts < $13) or (ts >= $16 and ts < $5))",
            ),
        };
        sql.replace("{series}", &SERIES.replace("{span_days}", &SPAN_DAYS.to_string()))
            .replace("{cmp}", cmp)
            .replace("{dir}", dir)
            .replace("{samples}", &samples)
    }

    /// Rows a piece of a rollups page may give the first (rows + 1) buckets, `$9` rows: one a
    /// day (or hour) of the width, and with days, up to 24 more in each of the window's edge
    /// days.
    fn piece_rows_sql(width: i64) -> String {
        if width >= DAY {
            format!("($9::bigint + 1) * {} + 48", width / DAY)
        } else {
            format!("($9::bigint + 1) * {}", width / HOUR)
        }
    }

    /// [`Self::piece_rows_sql`] for `rows`.
    fn piece_rows(width: i64, rows: i64) -> i64 {
        if width >= DAY { (rows + 1) * (width / DAY) + 48 } else { (rows + 1) * (width / HOUR) }
    }

    /// The sealed samples the statement reads for a window `[start, end)`: the whole stretch
    /// for raw and sub-hour pages (a `page`'s worth of each series and source, given one), the
    /// partial hours at its edges for rollup pages.
    async fn sealed(
        self,
        client: &impl GenericClient,
        user_id: UserId,
        types: &[SeriesId],
        (start, end): (DateTime<Utc>, DateTime<Utc>),
        cuts: Option<&[DateTime<Utc>; 4]>,
        page: Option<PageLimit>,
    ) -> Result<SealedRows> {
        let scope = |from, to| Scope { user_id, series: Some(types), sources: None, from, to };
        match cuts {
            None => {
                let mut rows = blocks::fetch(client, scope(start, end)).await?;
                if let Some(page) = page {
                    rows.keep_page(page);
                }
                Ok(rows)
            }
            Some(cuts) => {
                let mut rows = blocks::fetch(client, scope(start, cuts[0])).await?;
                rows.extend(blocks::fetch(client, scope(cuts[3], end)).await?);
                Ok(rows)
            }
        }
    }
}

/// The sealed samples a page's statement takes: a sub-hour page's as buckets where they can be
/// aggregated before it (`blocks::buckets`), as samples otherwise.
struct Sealed {
    rows: SealedRows,
    /// Sub-hour pages only.
    buckets: Option<SealedBuckets>,
}

impl Sealed {
    fn of(reading: Reading, rows: SealedRows) -> Sealed {
        match reading {
            Reading::SubHour { width } => {
                match SealedBuckets::of(&rows, width, series_aggregation) {
                    Some(b) => Sealed { rows: SealedRows::default(), buckets: Some(b) },
                    None => Sealed { rows, buckets: Some(SealedBuckets::default()) },
                }
            }
            Reading::Raw | Reading::Rollups { .. } => Sealed { rows, buckets: None },
        }
    }

    /// The statement's parameters that follow its own.
    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        let mut out = self.rows.params().to_vec();
        if let Some(b) = &self.buckets {
            out.extend(b.params());
        }
        out
    }
}

/// The sources ranked better than the lateral join's `ranked` one.
const BETTER: &str = "select better.id from ranked better where better.rank < ranked.rank";

/// `hours_held.sql` for a series, an hour span and a subquery of sources.
fn hours_held(series: &str, from: &str, to: &str, sources: &str) -> String {
    let body: String =
        HOURS_HELD.lines().filter(|l| !l.starts_with("--")).collect::<Vec<_>>().join("\n");
    body.replace("{series}", series)
        .replace("{span_days}", &SPAN_DAYS.to_string())
        .replace("{from}", from)
        .replace("{to}", to)
        .replace("{sources}", sources)
}

fn aggregation(id: SeriesId) -> &'static str {
    series_aggregation(id).as_str()
}

/// How a series is downsampled (levels, for an id the catalogue does not know).
fn series_aggregation(id: SeriesId) -> Aggregation {
    series_types::by_id(id).map_or(Aggregation::Avg, |t| t.aggregation)
}

/// Where the rollups' pieces of a window `[start, end)` begin and end: the whole hours
/// `[c0, c3)`, and inside them, for buckets of a day or more, the whole UTC days `[c1, c2)`
/// (empty, at `c3`, otherwise); the raw samples fill the edges. Never decreasing.
fn cuts(start: DateTime<Utc>, end: DateTime<Utc>, width: i64) -> [DateTime<Utc>; 4] {
    let first_hour = ceil_to(start, HOUR).min(end).max(start);
    let last_hour = hour_of(end).max(first_hour);
    if width < DAY {
        return [first_hour, last_hour, last_hour, last_hour];
    }
    let first_day = ceil_to(first_hour, DAY).min(last_hour);
    let last_day = floor_to(last_hour, DAY).max(first_day);
    [first_hour, first_day, last_day, last_hour]
}

/// The first bucket boundary of `width` seconds at or after `ts`.
fn ceil_to(ts: DateTime<Utc>, width: i64) -> DateTime<Utc> {
    let floor = floor_to(ts, width);
    if floor == ts { ts } else { floor + Duration::seconds(width) }
}

/// One page of samples (see `SeriesQuery`).
pub async fn page(db: &Db, q: &SeriesQuery) -> Result<Vec<SeriesPoint>> {
    let mut client = db.client().await?;
    let tx = blocks::snapshot(&mut client).await?;
    // A page's statements are planned anew on every call under PostgreSQL's default (their
    // custom plans look cheaper than the generic one): 0.4-3.7 ms of planning to 0.1-1 ms of
    // execution, which saturated two cores at 300-370 pages/s. Their generic plans, made once per
    // connection, execute as fast (benches/README "Pages planned once"); all but a raw page's
    // own statement, which a generic plan makes read every chunk of the hypertable (`read`).
    // The setting goes out in the same round trip as the page's first statement, ahead of it
    // (were it behind, that statement would only be planned once more).
    let plans = tx.batch_execute("set local plan_cache_mode = force_generic_plan");
    let ((), page) = futures::future::try_join(async { Ok(plans.await?) }, read(&tx, q)).await?;
    blocks::end_snapshot(tx);
    Ok(page)
}

pub async fn read(client: &impl GenericClient, q: &SeriesQuery) -> Result<Vec<SeriesPoint>> {
    let types: Vec<SeriesId> = if q.types.is_empty() {
        series_types::SERIES_TYPES.iter().map(|t| t.id).collect()
    } else {
        q.types.clone()
    };
    let aggs: Vec<&str> = types.iter().map(|id| aggregation(*id)).collect();
    // Without a cursor, the window's edge stands for one: before (or after) every row in it.
    // A bucket is named by its start, which may lie before the window's (its samples do not).
    let first = match q.bucket_seconds {
        Some(width) => floor_to(q.start, width),
        None => q.start,
    };
    let (c_ts, c_series, c_source) = match q.after {
        Some(p) => (p.ts, p.series_type_id, p.data_source_id),
        None if q.backward => (q.end, SeriesId(i16::MAX), Uuid::max()),
        None => (first, SeriesId(i16::MIN), Uuid::nil()),
    };
    let (ids, ranks) = &q.sources;
    let reading = Reading::of(q.bucket_seconds);
    let (start, end) = match reading {
        Reading::Raw => days_stretch(client, q, &types, ids).await?,
        Reading::SubHour { .. } => hours_stretch(client, q, &types, ids).await?,
        Reading::Rollups { .. } => (q.start, q.end),
    };
    let cuts = match reading {
        Reading::Rollups { width } => Some(cuts(start, end, width)),
        Reading::Raw | Reading::SubHour { .. } => None,
    };
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![
        &q.user_id, &types, &aggs, &start, &end, &c_ts, &c_series, &c_source, &q.fetch, &q.resolve,
        ids, ranks,
    ];
    if let Some(cuts) = &cuts {
        params.extend(cuts.iter().map(|c| c as &(dyn ToSql + Sync)));
    }
    let hours = match (reading, &cuts) {
        (Reading::Rollups { width }, Some(cuts)) => {
            sealed_hours(client, q, (&types, ids), c_ts, width, cuts).await?
        }
        _ => Default::default(),
    };
    if let Reading::Rollups { .. } = reading {
        params.extend(hours.iter().flat_map(SealedHours::params));
    }
    // Raw and sub-hour pages take a page's worth of each series and source's sealed samples.
    let page = match (reading, q.resolve) {
        (Reading::Raw | Reading::SubHour { .. }, false) => Some(PageLimit {
            cursor: (c_ts, c_series, c_source),
            backward: q.backward,
            rows: usize::try_from(q.fetch).unwrap_or(usize::MAX),
            width: q.bucket_seconds,
        }),
        _ => None,
    };
    // Samples before the cursor (after it, backward) are never read: their blocks are not
    // decoded, however deep into the window the walk is.
    let past_cursor = |(from, to): (DateTime<Utc>, DateTime<Utc>)| match reading {
        Reading::Rollups { .. } => (from, to),
        Reading::Raw | Reading::SubHour { .. } if q.backward => {
            let reach = Duration::seconds(q.bucket_seconds.unwrap_or(0));
            (from, to.min(c_ts + reach.max(Duration::microseconds(1))))
        }
        Reading::Raw | Reading::SubHour { .. } => (from.max(c_ts), to),
    };
    let sealed = reading
        .sealed(client, q.user_id, &types, past_cursor((start, end)), cuts.as_ref(), page)
        .await?;
    let sealed = Sealed::of(reading, sealed);
    let statement = client.prepare_cached(&reading.statement(q.backward)).await?;
    let args = [&params[..], &sealed.params()[..]].concat();
    let rows = client.query(&statement, &args);
    let rows = match reading {
        // Planned on each call with the page's values, so that only the chunks of its stretch
        // are planned, locked and read (`blocks::pair_samples_sql`). The setting goes ahead of
        // the page (polled first), in its round trip.
        Reading::Raw => {
            let custom = client.batch_execute("set local plan_cache_mode = force_custom_plan");
            futures::future::try_join(custom, rows).await?.1
        }
        Reading::SubHour { .. } | Reading::Rollups { .. } => rows.await?,
    };
    // A stretch is counted to hold the page, but with duplicates resolved some of its samples
    // drop out: a page that comes back short reads the whole window instead.
    let rows = if (start, end) != (q.start, q.end) && (rows.len() as i64) < q.fetch {
        let whole = past_cursor((q.start, q.end));
        let sealed = reading.sealed(client, q.user_id, &types, whole, cuts.as_ref(), page).await?;
        let sealed = Sealed::of(reading, sealed);
        params[3] = &q.start;
        params[4] = &q.end;
        client.query(&statement, &[&params[..], &sealed.params()[..]].concat()).await?
    } else {
        rows
    };
    rows.iter()
        .map(|r| {
            Ok(SeriesPoint {
                ts: r.try_get("ts")?,
                series_type_id: r.try_get("series_type_id")?,
                data_source_id: r.try_get("data_source_id")?,
                value: r.try_get("value")?,
                zone_offset: r.try_get("zone_offset")?,
                is_daily_total: r.try_get("is_daily_total")?,
            })
        })
        .collect()
}

/// The first parameter of a rollups page's sealed figures of piece `k` in [`sealed_hours`]
/// order, after the window's cuts ($13 to $16); `k = 3` is past them, the sealed samples.
fn sealed_param(k: usize) -> usize {
    17 + k * SealedHours::PARAMS
}

/// The sealed blocks' rollups a rollups page reads, piece by piece: the hours of its pieces of
/// whole hours, `[c0, c1)` and `[c2, c3)`, and the UTC days of its piece of whole days,
/// `[c1, c2)`, as many as the statement reads of each. Each piece's statement takes its own (it
/// slices its series and source out of them, and an empty piece then reads nothing).
async fn sealed_hours(
    client: &impl GenericClient,
    q: &SeriesQuery,
    (series, sources): (&[SeriesId], &[Uuid]),
    cursor: DateTime<Utc>,
    width: i64,
    cuts: &[DateTime<Utc>; 4],
) -> Result<[SealedHours; 3]> {
    let piece = async |from, to, figures| {
        let scope = HourScope {
            user_id: q.user_id,
            series,
            sources,
            from,
            to,
            cursor,
            width,
            backward: q.backward,
            rows: Reading::piece_rows(width, q.fetch),
        };
        let mut out = blocks::fetch_figures(client, scope, figures).await?;
        out.index();
        Ok::<_, crate::Error>(out)
    };
    // The days piece `[c1, c2)` (empty under a day's width) reads days, the others hours.
    // The three are independent: their round trips share the connection's pipeline.
    let (a, b, c) = futures::future::try_join3(
        piece(cuts[0], cuts[1], Figures::Hours),
        piece(cuts[1], cuts[2], Figures::Days),
        piece(cuts[2], cuts[3], Figures::Hours),
    )
    .await?;
    Ok([a, b, c])
}

/// The stretch of the window a sub-hour page reads: up to (or, backward, from) the hour by
/// which every series and source that has `fetch` hours with samples past the cursor has shown
/// them (`timeseries_bound.sql`); the whole window when none has.
async fn hours_stretch(
    client: &impl GenericClient,
    q: &SeriesQuery,
    types: &[SeriesId],
    sources: &[Uuid],
) -> Result<(DateTime<Utc>, DateTime<Utc>)> {
    let hour = Duration::seconds(HOUR);
    // Only hours wholly past the cursor and inside the window are counted.
    let (from, to) = if q.backward {
        let to = q.after.map_or(q.end, |p| p.ts.min(q.end));
        (ceil_to(q.start, HOUR), hour_of(to))
    } else {
        let from = q.after.map_or(q.start, |p| p.ts.max(q.start));
        (hour_of(from) + hour, hour_of(q.end))
    };
    if from >= to {
        return Ok((q.start, q.end));
    }
    let bound = BOUND.replace("{span_days}", &SPAN_DAYS.to_string());
    let sql = if q.backward {
        bound.replace("{agg}", "max").replace("{next}", "").replace("{dir}", "desc")
    } else {
        bound
            .replace("{agg}", "min")
            .replace("{next}", "+ interval '1 hour'")
            .replace("{dir}", "asc")
    };
    let statement = client.prepare_cached(&sql).await?;
    let row =
        client.query_one(&statement, &[&q.user_id, &types, &sources, &from, &to, &q.fetch]).await?;
    let bound: Option<DateTime<Utc>> = row.try_get(0)?;
    Ok(clip(q, bound))
}

/// The stretch of the window a raw page reads: up to (or, backward, from) the local day by
/// which every series and source that has `fetch` samples past the cursor has shown them,
/// widened by a day each way for zone offsets (`timeseries_bound_days.sql`); the whole window
/// when none has. The daily rollups are read, not the hourly ones: for a sparse series an hour
/// holds one sample, so its hourly rows are as many as its samples.
async fn days_stretch(
    client: &impl GenericClient,
    q: &SeriesQuery,
    types: &[SeriesId],
    sources: &[Uuid],
) -> Result<(DateTime<Utc>, DateTime<Utc>)> {
    let day = Duration::days(1);
    // A local day's samples lie within [its UTC midnight - 1 day, + 2 days): only days wholly
    // past the cursor and inside the window are counted.
    let (from, to) = if q.backward {
        let to = q.after.map_or(q.end, |p| p.ts.min(q.end));
        (ceil_to(q.start + day, DAY).date_naive(), (to - day * 2).date_naive())
    } else {
        let from = q.after.map_or(q.start, |p| p.ts.max(q.start));
        (ceil_to(from + day, DAY).date_naive(), (q.end - day * 2).date_naive())
    };
    if from > to {
        return Ok((q.start, q.end));
    }
    let (agg, dir, held) =
        if q.backward { ("max", "desc", "1") } else { ("min", "asc", "b.span - 2") };
    let sql = BOUND_DAYS
        .replace("{agg}", agg)
        .replace("{dir}", dir)
        .replace("{held}", held)
        .replace("{span_days}", &SPAN_DAYS.to_string());
    let statement = client.prepare_cached(&sql).await?;
    let row =
        client.query_one(&statement, &[&q.user_id, &types, &sources, &from, &to, &q.fetch]).await?;
    let bound: Option<NaiveDate> = row.try_get(0)?;
    let bound = bound.map(|d| {
        let midnight = d.and_time(NaiveTime::MIN).and_utc();
        if q.backward { midnight - day } else { midnight + day * 2 }
    });
    Ok(clip(q, bound))
}

/// A page's stretch from its bound, inside the window.
fn clip(q: &SeriesQuery, bound: Option<DateTime<Utc>>) -> (DateTime<Utc>, DateTime<Utc>) {
    match bound {
        Some(b) if q.backward => (b.max(q.start), q.end),
        Some(b) => (q.start, b.min(q.end)),
        None => (q.start, q.end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).expect("time")
    }

    #[test]
    fn cuts_tile_a_window_with_the_coarsest_whole_pieces() {
        let (start, end) = (t("2026-03-09T10:17:30Z"), t("2026-03-11T15:42:10Z"));
        let day = ["2026-03-09T11:00:00Z", "2026-03-10T00:00:00Z", "2026-03-11T00:00:00Z"];
        let hours = [day[0], day[1], day[2], "2026-03-11T15:00:00Z"].map(t);
        assert_eq!(cuts(start, end, DAY), hours);
        let last = t("2026-03-11T15:00:00Z");
        assert_eq!(cuts(start, end, HOUR), [t(day[0]), last, last, last]);
        // Inside one day: no whole day; inside one hour: no whole hour.
        let (a, b) = (t("2026-03-09T10:17:30Z"), t("2026-03-09T13:05:00Z"));
        let (h0, h1) = (t("2026-03-09T11:00:00Z"), t("2026-03-09T13:00:00Z"));
        assert_eq!(cuts(a, b, DAY), [h0, h1, h1, h1]);
        let b = t("2026-03-09T10:50:00Z");
        assert_eq!(cuts(a, b, DAY), [b; 4]);
        // Aligned: days only.
        let (a, b) = (t("2026-01-01T00:00:00Z"), t("2026-12-31T00:00:00Z"));
        assert_eq!(cuts(a, b, DAY), [a, a, b, b]);
    }
}
