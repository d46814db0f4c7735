//! The archive's entries, written in order: each read in large pages straight from the store,
//! turned into the API's own shapes by the functions the routes answer with, and written as
//! JSON lines in chunks. FHIR resources are spooled to a temporary file as their records pass
//! (the samples are walked once) and become `fhir.ndjson` at the end, after the `Patient`.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufWriter, Read, Seek, Write};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use ingest::object_store::Storage;
use rules::{Ranking, Sources};
use schema::Db;
use schema::exports::{Export, ExportCounts};
use schema::ids::UserId;
use schema::sessions::{Cycle, Event, EventQuery, Sleep, Workout};
use schema::timeseries::{Position, SeriesPoint, SeriesQuery};
use serde::Serialize;
use serde_json::json;
use uuid::Uuid;

use super::ExportError;
use super::archive::Archive;
use super::fhir;
use crate::routes::{connections, data_sources, events, timeseries, users};

/// Bytes of JSON lines compressed at a time.
const CHUNK: usize = 1 << 20;
/// Samples read a page.
const SAMPLE_PAGE: i64 = 10_000;
/// Sessions read a page.
const SESSION_PAGE: i64 = 1_000;

/// JSON lines waiting to be written.
#[derive(Default)]
struct Lines(Vec<u8>);

impl Lines {
    fn push(&mut self, value: &impl Serialize) -> Result<(), ExportError> {
        serde_json::to_writer(&mut self.0, value)
            .map_err(|e| ExportError::Archive(e.to_string()))?;
        self.0.push(b'\n');
        Ok(())
    }

    /// Writes the lines to the archive once a chunk is full (`all`: whatever there is).
    async fn flush(&mut self, archive: &mut Archive, all: bool) -> Result<(), ExportError> {
        if self.0.len() >= CHUNK || (all && !self.0.is_empty()) {
            archive.write(std::mem::take(&mut self.0)).await?;
        }
        Ok(())
    }
}

/// FHIR resources, one a line, in a temporary file until `fhir.ndjson` is written.
struct Spool {
    file: BufWriter<std::fs::File>,
    count: i64,
}

impl Spool {
    fn new() -> Result<Spool, ExportError> {
        let file =
            tempfile::tempfile().map_err(|e| ExportError::Archive(format!("a spool: {e}")))?;
        Ok(Spool { file: BufWriter::with_capacity(CHUNK, file), count: 0 })
    }

    fn push(&mut self, resource: &serde_json::Value) -> Result<(), ExportError> {
        let io = |e: std::io::Error| ExportError::Archive(format!("the spool: {e}"));
        serde_json::to_writer(&mut self.file, resource)
            .map_err(|e| ExportError::Archive(e.to_string()))?;
        self.file.write_all(b"\n").map_err(io)?;
        self.count += 1;
        Ok(())
    }

    /// Copies what was spooled into the current entry of the archive.
    async fn copy_into(self, archive: &mut Archive) -> Result<(), ExportError> {
        let io = |e: std::io::Error| ExportError::Archive(format!("the spool: {e}"));
        let mut file = self.file.into_inner().map_err(|e| io(e.into_error()))?;
        file.rewind().map_err(io)?;
        loop {
            let mut chunk = vec![0; CHUNK];
            let n = file.read(&mut chunk).map_err(io)?;
            if n == 0 {
                return Ok(());
            }
            chunk.truncate(n);
            archive.write(chunk).await?;
        }
    }
}

/// Everything an export reads with: the user's sources, named as the API names them.
struct Reader<'a> {
    db: &'a Db,
    user_id: UserId,
    ranking: Ranking,
    sources: Sources,
    /// A source's place among the user's, for FHIR ids.
    places: HashMap<Uuid, usize>,
    counts: &'a Mutex<ExportCounts>,
}

impl Reader<'_> {
    fn count(&self, f: impl FnOnce(&mut ExportCounts)) {
        if let Ok(mut c) = self.counts.lock() {
            f(&mut c);
        }
    }

    fn snapshot(&self) -> ExportCounts {
        self.counts.lock().map(|c| *c).unwrap_or_default()
    }
}

/// Writes the whole archive of `export` at `key`: its size and what it holds.
pub(super) async fn write(
    db: &Db,
    storage: &Storage,
    export: &Export,
    key: &str,
    counts: &Arc<Mutex<ExportCounts>>,
) -> Result<(u64, ExportCounts), ExportError> {
    let user = schema::users::get(db, export.user_id).await?.ok_or(ExportError::UserGone)?;
    let ranking = Ranking::new(schema::priority::ranked_sources(db, user.id).await?);
    let sources = Sources::new(&ranking.sources);
    let places = ranking.sources.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    let r = Reader { db, user_id: user.id, ranking, sources, places, counts };
    let mut archive = Archive::create(storage, key).await?;
    match entries(&r, &user, &mut archive).await {
        Ok(()) => {
            let bytes = archive.finish().await?;
            Ok((bytes, r.snapshot()))
        }
        Err(e) => {
            archive.abort().await;
            Err(e)
        }
    }
}

async fn entries(
    r: &Reader<'_>,
    user: &schema::users::User,
    archive: &mut Archive,
) -> Result<(), ExportError> {
    let mut spool = Spool::new()?;
    let whole = |name: &'static str, value: serde_json::Value| (name, value);
    let user_out: users::UserOut = user.clone().into();
    // As `GET …/data-sources` lists them.
    let listed = schema::data_sources::list_for_user(r.db, r.user_id).await?;
    let data_sources: Vec<data_sources::DataSourceOut> =
        listed.into_iter().map(Into::into).collect();
    for (name, value) in [
        whole("user.json", json!(user_out)),
        whole("connections.json", json!(connections::connections_of(r.db, r.user_id).await?)),
        whole("sources.json", json!({"items": data_sources, "total": data_sources.len()})),
    ] {
        archive.start_file(name).await?;
        let mut lines = Lines::default();
        lines.push(&value)?;
        lines.flush(archive, true).await?;
    }

    archive.start_file("samples.jsonl").await?;
    samples(r, archive, &mut spool).await?;
    archive.start_file("workouts.jsonl").await?;
    let with_routes = sessions::<Workout>(
        r,
        archive,
        |w, r, lines, spool| {
            let has_route = w.has_route.then_some(w.id);
            let out = events::workout(w, &r.sources);
            lines.push(&out)?;
            spool.push(&fhir::workout(&out, r.user_id))?;
            r.count(|c| c.workouts += 1);
            Ok(has_route)
        },
        &mut spool,
    )
    .await?;
    archive.start_file("routes.jsonl").await?;
    let client = r.db.client().await?;
    let mut lines = Lines::default();
    for id in with_routes {
        let points = schema::workouts::route_of(&client, r.user_id, id).await?.unwrap_or_default();
        lines.push(&events::route(id, points))?;
        lines.flush(archive, false).await?;
    }
    lines.flush(archive, true).await?;
    drop(client);
    archive.start_file("sleep.jsonl").await?;
    sessions::<Sleep>(
        r,
        archive,
        |s, r, lines, spool| {
            let out = events::sleep(s, &r.sources);
            lines.push(&out)?;
            spool.push(&fhir::sleep(&out, r.user_id))?;
            r.count(|c| c.sleep_sessions += 1);
            Ok(None)
        },
        &mut spool,
    )
    .await?;
    archive.start_file("cycles.jsonl").await?;
    sessions::<Cycle>(
        r,
        archive,
        |c, r, lines, _| {
            lines.push(&events::cycle(c, &r.sources))?;
            r.count(|c| c.menstrual_cycles += 1);
            Ok(None)
        },
        &mut spool,
    )
    .await?;

    archive.start_file("fhir.ndjson").await?;
    let mut lines = Lines::default();
    lines.push(&fhir::patient(user))?;
    lines.flush(archive, true).await?;
    let resources = spool.count + 1;
    spool.copy_into(archive).await?;
    r.count(|c| c.fhir_resources = resources);

    archive.start_file("manifest.json").await?;
    let c = r.snapshot();
    let manifest = json!({
        "format": "wearhouse-export",
        "version": 1,
        "user_id": r.user_id,
        "created_at": Utc::now(),
        "fhir_version": "4.0.1",
        "files": {
            "user.json": "the user (GET /users/{user_id})",
            "connections.json": "their connections (GET /users/{user_id}/connections)",
            "sources.json": "their data sources (GET /users/{user_id}/data-sources)",
            "samples.jsonl": "every sample of every source, as raw timeseries pages give them",
            "workouts.jsonl": "every workout, as events/workouts gives them (filter_by_priority=false)",
            "routes.jsonl": "the routes of the workouts that have one",
            "sleep.jsonl": "every sleep session (filter_by_priority=false)",
            "cycles.jsonl": "every menstrual cycle",
            "fhir.ndjson": "FHIR R4: a Patient, then Observations",
        },
        "counts": c,
    });
    let mut lines = Lines::default();
    lines.push(&manifest)?;
    lines.flush(archive, true).await
}

/// Blood pressure readings of one instant, per source: systolic and diastolic come as two
/// samples and become one panel.
#[derive(Default)]
struct Pressures {
    at: Option<(DateTime<Utc>, String)>,
    by_source: BTreeMap<usize, (Option<f64>, Option<f64>)>,
}

impl Pressures {
    fn add(
        &mut self,
        p: &SeriesPoint,
        local: &str,
        source: usize,
        spool: &mut Spool,
        user: UserId,
    ) -> Result<(), ExportError> {
        if self.at.as_ref().is_some_and(|(at, _)| *at != p.ts) {
            self.flush(spool, user)?;
        }
        self.at.get_or_insert_with(|| (p.ts, local.to_owned()));
        let reading = self.by_source.entry(source).or_default();
        if p.series_type_id == fhir::SYSTOLIC {
            reading.0 = Some(p.value);
        } else {
            reading.1 = Some(p.value);
        }
        Ok(())
    }

    fn flush(&mut self, spool: &mut Spool, user: UserId) -> Result<(), ExportError> {
        if let Some((at, local)) = self.at.take() {
            for (source, (sys, dia)) in std::mem::take(&mut self.by_source) {
                let millis = at.timestamp_millis();
                if let Some(o) = fhir::blood_pressure(user, millis, &local, source, sys, dia) {
                    spool.push(&o)?;
                }
            }
        }
        Ok(())
    }
}

/// Every sample, in the order raw timeseries pages give them (time, series, source).
async fn samples(
    r: &Reader<'_>,
    archive: &mut Archive,
    spool: &mut Spool,
) -> Result<(), ExportError> {
    let (start, end) = crate::dates::range();
    let mut after: Option<Position> = None;
    let mut lines = Lines::default();
    let mut pressures = Pressures::default();
    loop {
        let query = SeriesQuery {
            user_id: r.user_id,
            types: Vec::new(),
            start,
            end,
            after,
            backward: false,
            fetch: SAMPLE_PAGE,
            bucket_seconds: None,
            sources: r.ranking.arrays(),
            resolve: false,
        };
        let page = schema::timeseries::page(r.db, &query).await?;
        for p in &page {
            let out = timeseries::sample(p, &r.sources);
            lines.push(&out)?;
            let place = r.places.get(&p.data_source_id).copied().unwrap_or(usize::MAX);
            if p.series_type_id == fhir::SYSTOLIC || p.series_type_id == fhir::DIASTOLIC {
                pressures.add(p, &out.timestamp, place, spool, r.user_id)?;
            } else if let Some(o) = fhir::sample(p, r.user_id, &out.timestamp, place) {
                spool.push(&o)?;
            }
        }
        r.count(|c| c.samples += page.len() as i64);
        lines.flush(archive, false).await?;
        match page.last() {
            Some(last) if page.len() as i64 == SAMPLE_PAGE => {
                after = Some(Position {
                    ts: last.ts,
                    series_type_id: last.series_type_id,
                    data_source_id: last.data_source_id,
                });
            }
            _ => break,
        }
    }
    pressures.flush(spool, r.user_id)?;
    lines.flush(archive, true).await
}

/// Every session of a kind, newest first as the event lists give them, each handed to `each`
/// (which may name a workout whose route to add); what `each` named.
async fn sessions<E: Event>(
    r: &Reader<'_>,
    archive: &mut Archive,
    each: impl Fn(E, &Reader<'_>, &mut Lines, &mut Spool) -> Result<Option<Uuid>, ExportError>,
    spool: &mut Spool,
) -> Result<Vec<Uuid>, ExportError> {
    let (start, end) = crate::dates::range();
    let mut after = None;
    let mut lines = Lines::default();
    let mut named = Vec::new();
    loop {
        let query = EventQuery {
            user_id: r.user_id,
            start,
            end,
            after,
            backward: false,
            fetch: SESSION_PAGE,
            resolve: false,
            sources: r.ranking.arrays(),
        };
        let page = schema::sessions::page::<E>(r.db, &query).await?;
        let full = page.len() as i64 == SESSION_PAGE;
        after = page.last().map(Event::position);
        for e in page {
            named.extend(each(e, r, &mut lines, spool)?);
        }
        lines.flush(archive, false).await?;
        if !full {
            break;
        }
    }
    lines.flush(archive, true).await?;
    Ok(named)
}
