//! Writes a normalised batch inside the caller's transaction: data sources, samples (COPY,
//! dedup, rollups, events), workouts and sleep sessions (merged with the stored sessions of the
//! same night), with one outbox event per new session.

use deadpool_postgres::Transaction;
use schema::catalogue::event_types::SessionEvent;
use schema::ids::UserId;
use schema::samples::{SampleRow, Stored};
use schema::sleep_sessions::{self, SleepRow};
use schema::sync_runs::RunCounts;
use schema::workouts;
use uuid::Uuid;

use crate::batch::{Normalised, SleepSession};
use crate::event_data;
use crate::report::Report;
use crate::sleep::{self, GAP, Interval};

/// What writing a batch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    pub samples: Stored,
    pub workouts_saved: u64,
    pub workouts_duplicate: u64,
    /// Workouts sent again with other figures, brought up to date.
    pub workouts_updated: u64,
    pub sleep_saved: u64,
    pub sleep_unchanged: u64,
}

/// A run's counts: what it received and dropped, and what writing stored. SDK batches, pulls
/// and imports report these alike (imports add their own).
pub(crate) fn run_counts(report: &Report, w: &Written) -> RunCounts {
    RunCounts {
        received: report.received.clone(),
        dropped: report.dropped_count(),
        samples_inserted: w.samples.inserted,
        samples_updated: w.samples.updated,
        samples_unchanged: w.samples.unchanged,
        workouts_saved: w.workouts_saved,
        workouts_duplicate: w.workouts_duplicate,
        workouts_updated: w.workouts_updated,
        sleep_sessions_saved: w.sleep_saved,
        sleep_sessions_unchanged: w.sleep_unchanged,
        import: None,
    }
}

/// Where and how to write.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    pub user_id: UserId,
    pub batch_id: Uuid,
    /// The zone offset for samples that arrive without one (see `Normalised::latest_offset`).
    pub default_offset: Option<i16>,
    /// Whether to write outbox events.
    pub outbox: bool,
    /// What writing does to the provider's connection.
    pub link: schema::data_sources::Link,
}

/// The batch's data sources (and the provider's connection), created or brought up to date;
/// their ids in the order of `n.sources`.
pub(crate) async fn sources(
    client: &impl deadpool_postgres::GenericClient,
    t: Target,
    n: &Normalised,
) -> Result<Vec<Uuid>, schema::Error> {
    schema::data_sources::upsert_pushed(client, t.user_id, n.provider, t.link, &n.sources.list)
        .await
}

fn source_id(ids: &[Uuid], i: usize) -> Result<Uuid, schema::Error> {
    ids.get(i)
        .copied()
        .ok_or(schema::Error::Inconsistent("a source index past the batch's sources"))
}

/// The batch's samples as rows, each with its source's id and a zone offset.
fn sample_rows(t: Target, n: &Normalised, ids: &[Uuid]) -> Result<Vec<SampleRow>, schema::Error> {
    n.samples
        .iter()
        .map(|s| {
            Ok(SampleRow {
                series_type_id: s.series_type_id,
                data_source_id: source_id(ids, s.source)?,
                ts: s.ts,
                value: s.value,
                zone_offset: s.zone_offset.or(t.default_offset),
                is_daily_total: s.is_daily_total,
            })
        })
        .collect()
}

/// Writes a batch of samples only (no workouts, no sleep) whose keys are all new, beside other
/// writers of the same user (see `schema::samples::store_new`); `None` when one was stored
/// already, and the caller writes the batch with [`write`] under the user's exclusive lock.
pub(crate) async fn write_new_samples(
    tx: &Transaction<'_>,
    t: Target,
    n: &Normalised,
    ids: &[Uuid],
) -> Result<Option<Written>, schema::Error> {
    if !n.only_samples() {
        return Ok(None);
    }
    let rows = sample_rows(t, n, ids)?;
    let stored =
        schema::samples::store_new(tx, t.user_id, t.batch_id, n.provider, &rows, t.outbox).await?;
    Ok(stored.map(|samples| Written { samples, ..Default::default() }))
}

pub(crate) async fn write(
    tx: &Transaction<'_>,
    t: Target,
    n: &Normalised,
) -> Result<Written, schema::Error> {
    let source_ids = sources(tx, t, n).await?;
    let sid = |i: usize| source_id(&source_ids, i);
    let rows = sample_rows(t, n, &source_ids)?;
    let mut written = Written {
        samples: schema::samples::store(tx, t.user_id, t.batch_id, n.provider, &rows, t.outbox)
            .await?,
        ..Default::default()
    };

    unseal_sessions(tx, t, n, &source_ids).await?;
    for w in &n.workouts {
        let mut row = w.row.clone();
        row.data_source_id = sid(w.source)?;
        // A workout sent again with other figures (a vendor scored or corrected it) is
        // brought up to date; it is no new workout and emits no event.
        if workouts::update_known(tx, t.batch_id, &row).await? {
            written.workouts_updated += 1;
            continue;
        }
        match workouts::insert_new(tx, t.user_id, t.batch_id, &row).await? {
            Some(id) => {
                written.workouts_saved += 1;
                if t.outbox {
                    let source = n.sources.get(w.source)?;
                    let data = event_data::workout_created(id, t.user_id, &row, source);
                    schema::outbox::insert_session(
                        tx,
                        SessionEvent::WorkoutCreated,
                        t.user_id,
                        data,
                    )
                    .await?;
                }
            }
            None => written.workouts_duplicate += 1,
        }
    }

    for s in &n.sleep {
        if save_sleep(tx, t, n, s, sid(s.source)?).await? {
            written.sleep_saved += 1;
        } else {
            written.sleep_unchanged += 1;
        }
    }
    Ok(written)
}

/// Moves the sealed months the batch's sessions may touch back into rows first (a session is a
/// row or in its month's block, never both): then the lookups below (by client id, by source
/// and time, the upserts' keys) find every stored session among the rows.
async fn unseal_sessions(
    tx: &Transaction<'_>,
    t: Target,
    n: &Normalised,
    source_ids: &[Uuid],
) -> Result<(), schema::Error> {
    use schema::session_blocks::{LONGEST, Sessions, Touch, unseal};
    if n.workouts.is_empty() && n.sleep.is_empty() {
        return Ok(());
    }
    let mut touches = Vec::with_capacity(n.workouts.len());
    for w in &n.workouts {
        // Its twins share its source and start (or its client id).
        let start = w.row.figures.start_time;
        touches.push(Touch {
            data_source_id: source_id(source_ids, w.source)?,
            from: start,
            to: start + chrono::Duration::seconds(1),
            external_id: w.row.external_id.clone(),
        });
    }
    unseal(tx, t.user_id, Sessions::Workouts, &touches).await?;
    let mut touches = Vec::with_capacity(n.sleep.len());
    for s in &n.sleep {
        // What it may merge with or replace: the stored sessions overlapping it, or within the
        // gap of it, which started at most LONGEST before.
        let starts = s.intervals.iter().map(|i| i.start).chain(s.vendor.iter().map(|v| v.start));
        let ends = s.intervals.iter().map(|i| i.end).chain(s.vendor.iter().map(|v| v.end));
        let (Some(first), Some(last)) = (starts.min(), ends.max()) else { continue };
        touches.push(Touch {
            data_source_id: source_id(source_ids, s.source)?,
            from: first - GAP - LONGEST,
            to: last + GAP,
            external_id: s.external_id.clone(),
        });
    }
    unseal(tx, t.user_id, Sessions::Sleep, &touches).await?;
    Ok(())
}

/// Saves one sleep session. A client's stages merge with the stored sessions of the same
/// source within the gap of them; a vendor's night is stored as it comes, replacing the stored
/// one of its id. Returns false when the stored session already held exactly this.
async fn save_sleep(
    tx: &Transaction<'_>,
    t: Target,
    n: &Normalised,
    s: &SleepSession,
    source_id: Uuid,
) -> Result<bool, schema::Error> {
    let plan = match &s.vendor {
        Some(night) => vendor_night(tx, t, s, night, source_id).await?,
        None => client_stages(tx, t, s, source_id).await?,
    };
    let Some(Plan { raw, raw_stages, external_id, zone_offset, replaced }) = plan else {
        return Ok(false);
    };
    let Some(sum) = sleep::summarize(&raw, zone_offset, s.vendor.as_ref()) else {
        return Ok(false);
    };
    let clamp = |v: i64| i32::try_from(v).unwrap_or(i32::MAX);
    let row = SleepRow {
        data_source_id: source_id,
        external_id,
        start_time: sum.start,
        end_time: sum.end,
        zone_offset,
        duration_seconds: clamp((sum.end - sum.start).num_seconds()),
        sleep_seconds: clamp(sum.sleep_seconds),
        in_bed_seconds: clamp(sum.in_bed_seconds),
        deep_minutes: sum.deep_minutes,
        rem_minutes: sum.rem_minutes,
        light_minutes: sum.light_minutes,
        awake_minutes: sum.awake_minutes,
        efficiency_percent: sum.efficiency_percent,
        is_nap: sum.is_nap,
        stages: sleep::to_json(&sum.cleaned),
        raw_stages,
    };
    let replace = replaced.first().copied();
    sleep_sessions::delete(tx, replaced.get(1..).unwrap_or_default()).await?;
    let id = sleep_sessions::save(tx, t.user_id, t.batch_id, replace, &row).await?;
    if t.outbox {
        let data = event_data::sleep_created(id, t.user_id, &row, n.sources.get(s.source)?);
        schema::outbox::insert_session(tx, SessionEvent::SleepCreated, t.user_id, data).await?;
    }
    Ok(true)
}

/// How a session is stored: the intervals it is made of and what is kept of it as received,
/// the id and offset it goes by, and the stored sessions it replaces (the first is updated).
struct Plan {
    raw: Vec<Interval>,
    raw_stages: serde_json::Value,
    external_id: Option<String>,
    zone_offset: Option<i16>,
    replaced: Vec<Uuid>,
}

/// A vendor's night: replaces the stored one of its id and its id-less copies. `None` when the
/// stored night is exactly this.
async fn vendor_night(
    tx: &Transaction<'_>,
    t: Target,
    s: &SleepSession,
    night: &sleep::VendorNight,
    source_id: Uuid,
) -> Result<Option<Plan>, schema::Error> {
    let stored = match &s.external_id {
        Some(ext) => sleep_sessions::by_external_id(tx, t.user_id, source_id, ext).await?,
        None => None,
    };
    let mut intervals = s.intervals.clone();
    if night.partial_timeline
        && let Some((_, kept)) = &stored
    {
        intervals.extend(sleep::from_json(kept));
        intervals.sort();
        intervals.dedup();
    }
    let raw_stages = sleep::night_json(&intervals, night);
    if stored.as_ref().is_some_and(|(_, kept)| *kept == raw_stages) {
        return Ok(None);
    }
    let mut replaced: Vec<Uuid> = stored.map(|(id, _)| id).into_iter().collect();
    let overlapping =
        sleep_sessions::near(tx, t.user_id, source_id, night.start, night.end).await?;
    if s.external_id.is_none() {
        // No id to know it by: the stored nights of its source it overlaps are its earlier
        // copies.
        if let [only] = overlapping.as_slice()
            && only.raw_stages == raw_stages
        {
            return Ok(None);
        }
        replaced.extend(overlapping.iter().map(|n| n.id));
    } else {
        // Its source's sessions it overlaps that have no id are earlier copies of it (stored
        // before the vendor's nights had ids, or its stages before it came).
        let copies = overlapping.iter().filter(|n| n.external_id.is_none());
        replaced
            .extend(copies.map(|n| n.id).filter(|id| !replaced.contains(id)).collect::<Vec<_>>());
    }
    Ok(Some(Plan {
        raw: intervals,
        raw_stages,
        external_id: s.external_id.clone(),
        zone_offset: s.zone_offset.or(t.default_offset),
        replaced,
    }))
}

/// A client's stages, merged with the stored sessions of the same source within the gap of
/// them (a vendor's night aside). `None` when there are none, or the one stored session
/// already held exactly these.
async fn client_stages(
    tx: &Transaction<'_>,
    t: Target,
    s: &SleepSession,
    source_id: Uuid,
) -> Result<Option<Plan>, schema::Error> {
    let (Some(first), Some(last)) =
        (s.intervals.iter().map(|i| i.start).min(), s.intervals.iter().map(|i| i.end).max())
    else {
        return Ok(None);
    };
    let mut near = sleep_sessions::near(tx, t.user_id, source_id, first - GAP, last + GAP).await?;
    // A vendor's night is its own record: stages never merge into it.
    near.retain(|n| n.raw_stages.get("vendor").is_none());
    let mut raw: Vec<Interval> = s.intervals.clone();
    for stored in &near {
        raw.extend(sleep::from_json(&stored.raw_stages));
    }
    raw.sort();
    raw.dedup();
    if let [only] = near.as_slice() {
        let mut stored = sleep::from_json(&only.raw_stages);
        stored.sort();
        stored.dedup();
        if stored == raw {
            return Ok(None);
        }
    }
    let zone_offset =
        s.zone_offset.or_else(|| near.iter().find_map(|n| n.zone_offset)).or(t.default_offset);
    // The client's id names one session: a stored session with it that is not near (an edited
    // or moved night) is replaced, not merged.
    let external_id =
        near.iter().find_map(|n| n.external_id.clone()).or_else(|| s.external_id.clone());
    let mut replaced: Vec<Uuid> = near.iter().map(|n| n.id).collect();
    if let Some(ext) = &external_id
        && let Some((id, _)) = sleep_sessions::by_external_id(tx, t.user_id, source_id, ext).await?
        && !replaced.contains(&id)
    {
        replaced.push(id);
    }
    Ok(Some(Plan { raw_stages: sleep::to_json(&raw), raw, external_id, zone_offset, replaced }))
}
