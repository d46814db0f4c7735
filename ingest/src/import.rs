//! Running an export import: a thread of its own reads the file (unzipping `export.zip` on the
//! fly), cuts it into chunks and normalises each (rayon), at the lowest CPU priority
//! (`pace`); the async side writes each chunk in
//! its own transaction through the SDK pipeline's storage path, then turns the menstrual
//! records into cycles. Memory stays flat: at most a few chunks are alive at once.
//!
//! A failed import keeps the chunks it committed before the failure (its sync run says how
//! many samples that was); importing the same file again completes it, storing nothing twice.

use std::io::{BufRead, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use schema::Db;
use schema::catalogue::event_types::SessionEvent;
use schema::imports::PROVIDER;
use schema::menstrual_cycles::CycleRow;
use schema::sync_runs::{Finish, ImportCounts, RunCounts, RunSource, RunStatus, SyncRun};

use schema::ids::UserId;
use uuid::Uuid;

use crate::batch::{LatestOffset, Normalised};
use crate::export::{
    self, ChunkRecords, Entry, ExportBatch, ExportError, MenstrualItem, RouteSpool,
};
use crate::report::Report;
use crate::store::{self, Target, Written};

const SOURCE: RunSource = RunSource::XmlImport;

/// Whom to import for, and how.
#[derive(Debug, Clone, Copy)]
pub struct ImportTarget {
    pub user_id: UserId,
    /// The task id: names the sync run and tags every stored row.
    pub run_id: Uuid,
    /// Write outbox events.
    pub outbox: bool,
}

/// How far an import has come.
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    /// Bytes of the file read (compressed bytes for a zip).
    pub bytes: u64,
    pub records: u64,
    pub samples: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error(transparent)]
    Db(#[from] schema::Error),
    #[error("a writer stopped: {0}")]
    Join(#[from] tokio::task::JoinError),
    #[error("the reader stopped: {0}")]
    Reader(String),
    #[error("the user was deleted during the import")]
    UserGone,
    #[error("the uploaded object does not exist")]
    ObjectMissing,
    #[error("reading the upload: {0}")]
    Storage(String),
}

impl ImportError {
    /// Whether running the import again later can succeed.
    pub fn is_retriable(&self) -> bool {
        match self {
            ImportError::Db(e) => e.is_retriable(),
            ImportError::Export(ExportError::Io(_))
            | ImportError::Join(_)
            | ImportError::Reader(_)
            | ImportError::Storage(_) => true,
            ImportError::Export(_) | ImportError::UserGone | ImportError::ObjectMissing => false,
        }
    }
}

impl From<deadpool_postgres::tokio_postgres::Error> for ImportError {
    fn from(e: deadpool_postgres::tokio_postgres::Error) -> Self {
        ImportError::Db(e.into())
    }
}

/// What an import did (also when it failed part way).
#[derive(Debug)]
pub struct Imported {
    pub started_at: DateTime<Utc>,
    pub report: Report,
    pub written: Written,
    pub cycles_saved: u64,
    /// Workouts given a route from the archive's `workout-routes/`.
    pub routes_saved: u64,
    pub progress: Progress,
    pub chunks: u64,
    pub error: Option<ImportError>,
    /// The zone offset of the export's latest dated item.
    pub latest_offset: LatestOffset,
}

impl Imported {
    /// An import that stopped before reading anything.
    pub fn stopped(error: ImportError) -> Imported {
        Imported { error: Some(error), ..Imported::new() }
    }

    fn new() -> Imported {
        Imported {
            started_at: Utc::now(),
            report: Report::default(),
            written: Written::default(),
            cycles_saved: 0,
            routes_saved: 0,
            progress: Progress::default(),
            chunks: 0,
            error: None,
            latest_offset: LatestOffset::default(),
        }
    }

    /// The run's final report: `success`, `partial` (items dropped for a fault of theirs) or
    /// `failed`.
    pub(crate) fn run_report(&self) -> Finish {
        let (status, message) = match &self.error {
            Some(_) => (
                RunStatus::Failed,
                format!("Apple Health import failed after {} chunk(s)", self.chunks),
            ),
            None => (
                RunStatus::completed(self.report.problem_count()),
                format!("Apple Health import completed{}", self.report.said()),
            ),
        };
        Finish {
            status,
            message,
            counts: Some(self.counts()),
            dropped: self.report.dropped_json(),
            error: self.error.as_ref().map(ToString::to_string),
            started_at: self.started_at,
        }
    }

    fn counts(&self) -> RunCounts {
        let import = ImportCounts {
            bytes: self.progress.bytes,
            chunks: self.chunks,
            menstrual_cycles_saved: self.cycles_saved,
            workout_routes_saved: self.routes_saved,
        };
        RunCounts { import: Some(import), ..store::run_counts(&self.report, &self.written) }
    }
}

type Sender = tokio::sync::mpsc::Sender<Result<ExportBatch, ExportError>>;

/// What an archive holds beside its export: route files kept for the workouts, and what the
/// run should say of them and of the ECG recordings it walked past.
#[derive(Debug, Default)]
struct Siblings {
    routes: RouteSpool,
    report: Report,
}

/// Reads what the user handed over (`export.xml`, or a zip holding it and its siblings), sends
/// the export's normalised chunks, and keeps the route files.
fn read_export(
    input: Box<dyn Read + Send>,
    count: Arc<AtomicU64>,
    chunk_records: ChunkRecords,
    tx: &Sender,
) -> Siblings {
    let mut siblings = Siblings::default();
    let mut visit = |entry: &Entry, data: &mut dyn BufRead| -> Result<(), ExportError> {
        match entry {
            Entry::Export => feed(data, chunk_records.clone(), tx),
            Entry::Route(path) => siblings.routes.add(path, data, &mut siblings.report),
            Entry::Electrocardiogram => {
                siblings.report.received("electrocardiograms", 1);
                Ok(())
            }
            Entry::Other => Ok(()),
        }
    };
    if let Err(e) = export::walk(input, count, &mut visit) {
        let _ = tx.blocking_send(Err(e));
    }
    siblings
}

fn feed(
    reader: &mut dyn BufRead,
    chunk_records: ChunkRecords,
    tx: &Sender,
) -> Result<(), ExportError> {
    for chunk in export::ExportReader::sized(reader, chunk_records) {
        let chunk = chunk?;
        let batch = crate::pace::in_background(|| export::normalise(&chunk));
        tx.blocking_send(Ok(batch)).map_err(|_| ExportError::Io("the import stopped".into()))?;
    }
    Ok(())
}

/// Imports an export for one user. `on_progress` is called after each chunk. Records the sync
/// run in progress while it runs; its outcome is the caller's to record ([`record_user_sync`],
/// then [`finish_run`] or `schema::imports::settle`), since only the caller knows whether a
/// failure will be retried. It writes to `db` and yields to the API's reads on `api` (the
/// primary and its replicas: `pace`).
pub async fn run_import(
    db: &Db,
    api: &schema::Reads,
    t: ImportTarget,
    input: Box<dyn Read + Send>,
    mut on_progress: impl FnMut(&Progress) + Send,
) -> Imported {
    let mut out = Imported::new();
    let count = Arc::new(AtomicU64::new(0));
    let (tx, mut rx) = tokio::sync::mpsc::channel(2);
    let pace = crate::pace::Pace::start(api.clone()).await;
    // The reader on a thread of its own, at the lowest CPU priority (`pace`).
    let (read_tx, reader) = tokio::sync::oneshot::channel();
    let spawned = {
        let (count, chunk_records) = (count.clone(), pace.chunk_records());
        std::thread::Builder::new().name("import reader".into()).spawn(move || {
            crate::pace::lower_this_thread();
            let _ = read_tx.send(read_export(input, count, chunk_records, &tx));
        })
    };
    if let Err(e) = spawned {
        out.error = Some(ImportError::Reader(e.to_string()));
    }
    let mut menstrual: Vec<MenstrualItem> = Vec::new();
    let mut last_report = Instant::now();
    report_progress(db, t, "Import started", None).await;
    // Two chunks are written at once (one while the API is busy: `pace`): one PostgreSQL
    // backend alone cannot keep up with the reader. Chunks of new samples COPY side by side;
    // the rest take turns (`write_chunk`).
    type Writing = (Result<Written, ImportError>, ExportBatch, Duration);
    let mut writing: tokio::task::JoinSet<Writing> = tokio::task::JoinSet::new();
    let chunks = Arc::new(schema::sample_chunks::Chunks::new());
    let mut reading = out.error.is_none();
    loop {
        if reading && writing.len() < pace.writers() && out.error.is_none() {
            match rx.recv().await {
                Some(Ok(batch)) => {
                    let (db, chunks) = (db.clone(), chunks.clone());
                    writing.spawn(async move {
                        let started = Instant::now();
                        let written = write_chunk(&db, &chunks, t, &batch).await;
                        (written, batch, started.elapsed())
                    });
                    continue;
                }
                Some(Err(e)) => {
                    out.error = Some(e.into());
                    reading = false;
                }
                None => reading = false,
            }
        }
        let Some(done) = writing.join_next().await else { break };
        let (result, batch, took) = match done {
            Ok(d) => d,
            Err(e) => {
                out.error.get_or_insert(e.into());
                continue;
            }
        };
        match result {
            Ok(w) => add(&mut out.written, &w),
            Err(e) => {
                out.error.get_or_insert(e);
                reading = false;
                continue;
            }
        }
        out.chunks += 1;
        pace.after_chunk(took).await;
        out.progress.records +=
            batch.normalised.report.received.get("records").copied().unwrap_or(0);
        menstrual.extend(batch.menstrual);
        out.latest_offset.merge(batch.normalised.latest_offset);
        out.report.merge(batch.normalised.report);
        out.progress.bytes = count.load(Ordering::Relaxed);
        out.progress.samples = (out.written.samples.inserted + out.written.samples.updated) as u64;
        on_progress(&out.progress);
        if last_report.elapsed() > Duration::from_secs(2) {
            last_report = Instant::now();
            let message = format!("Imported {} MB", out.progress.bytes / 1_000_000);
            report_progress(db, t, &message, Some(&out.counts())).await;
        }
    }
    drop(rx);
    let siblings = match reader.await {
        Ok(siblings) => siblings,
        // Never spawned (the error is noted), or it panicked.
        Err(_) => {
            out.error.get_or_insert(ImportError::Reader("it stopped early".into()));
            Siblings::default()
        }
    };
    out.report.merge(siblings.report);
    out.progress.bytes = count.load(Ordering::Relaxed);
    // Routes go to the workouts committed, also those of an import that failed part way.
    if !siblings.routes.is_empty() {
        match give_routes(db, t, siblings.routes).await {
            Ok(n) => out.routes_saved = n,
            Err(e) => {
                out.error.get_or_insert(e);
            }
        }
    }
    if out.error.is_none() {
        match write_cycles(db, t, menstrual).await {
            Ok(n) => out.cycles_saved = n,
            Err(e) => out.error = Some(e),
        }
    }
    if let Err(e) = record_user_sync(db, t, &out).await {
        tracing::warn!(error = %e, "could not record the user's last sync");
    }
    out
}

/// Shows the run in progress (best effort: a lost update is no reason to stop an import).
async fn report_progress(db: &Db, t: ImportTarget, message: &str, counts: Option<&RunCounts>) {
    if let Ok(c) = db.client().await {
        let _ =
            schema::sync_runs::progress(&c, t.run_id, t.user_id, PROVIDER, SOURCE, message, counts)
                .await;
    }
}

fn add(total: &mut Written, w: &Written) {
    total.samples.distinct += w.samples.distinct;
    total.samples.inserted += w.samples.inserted;
    total.samples.updated += w.samples.updated;
    total.samples.unchanged += w.samples.unchanged;
    total.samples.events += w.samples.events;
    total.workouts_saved += w.workouts_saved;
    total.workouts_duplicate += w.workouts_duplicate;
    total.workouts_updated += w.workouts_updated;
    total.sleep_saved += w.sleep_saved;
    total.sleep_unchanged += w.sleep_unchanged;
}

/// Writes one chunk in its own transaction. A chunk of samples only, all new (an export's
/// usual chunk), is written holding the user's row in share mode, so the import's two writers
/// COPY at once; anything else — sleep, workouts, a key already stored, a deadlock between the
/// two — holds it exclusively, like an SDK batch does (`schema::samples::store_new` says why).
async fn write_chunk(
    db: &Db,
    chunks: &schema::sample_chunks::Chunks,
    t: ImportTarget,
    batch: &ExportBatch,
) -> Result<Written, ImportError> {
    let n = &batch.normalised;
    // The chunks its samples need, made first so that the writers do not take turns making them.
    chunks.make(db, t.user_id, n.samples.iter().map(|s| s.ts)).await?;
    if n.only_samples() {
        match write_shared(db, t, n).await {
            Ok(Some(written)) => return Ok(written),
            Ok(None) => {}
            Err(ImportError::Db(e)) if e.is_contention() => {}
            Err(e) => return Err(e),
        }
    }
    write_exclusive(db, t, n).await
}

/// Where a chunk is written; samples without an offset take the chunk's latest, else `last`.
fn chunk_target(t: ImportTarget, n: &Normalised, last: Option<i16>) -> Target {
    Target {
        user_id: t.user_id,
        batch_id: t.run_id,
        default_offset: n.latest_offset.offset().or(last),
        outbox: t.outbox,
        link: schema::data_sources::Link::Push,
    }
}

/// A chunk of new samples beside the import's other writer; `None`: write it exclusively.
async fn write_shared(
    db: &Db,
    t: ImportTarget,
    n: &Normalised,
) -> Result<Option<Written>, ImportError> {
    let mut client = db.client().await?;
    // The sources first, committed on their own: the connection row they touch would otherwise
    // stay locked by this transaction to its end and make the writers take turns again.
    let ids = store::sources(&client, chunk_target(t, n, None), n).await?;
    let tx = client.transaction().await?;
    let lock = schema::users::WriterLock::Shared;
    let Some(last) = schema::users::lock_for_writing(&tx, t.user_id, lock).await? else {
        return Err(ImportError::UserGone);
    };
    match store::write_new_samples(&tx, chunk_target(t, n, last), n, &ids).await? {
        Some(written) => {
            tx.commit().await?;
            Ok(Some(written))
        }
        None => Ok(None),
    }
}

/// A chunk written holding the user's row exclusively.
async fn write_exclusive(db: &Db, t: ImportTarget, n: &Normalised) -> Result<Written, ImportError> {
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let lock = schema::users::WriterLock::Exclusive;
    let Some(last) = schema::users::lock_for_writing(&tx, t.user_id, lock).await? else {
        return Err(ImportError::UserGone);
    };
    let written = store::write(&tx, chunk_target(t, n, last), n).await?;
    tx.commit().await?;
    Ok(written)
}

/// Routes given to the workouts at once (one statement).
const ROUTES_PER_STATEMENT: usize = 64;

/// Gives the archive's routes to the user's workouts that name them and have none yet (a
/// re-import changes nothing; an export imported as bare XML first gets its routes from the
/// zip later); returns how many workouts got one.
async fn give_routes(db: &Db, t: ImportTarget, spool: RouteSpool) -> Result<u64, ImportError> {
    let client = db.client().await?;
    let awaiting = schema::workouts::awaiting_routes(&client, t.user_id).await?;
    let spool = Arc::new(spool);
    let mut saved = 0;
    for batch in awaiting.chunks(ROUTES_PER_STATEMENT) {
        let (spool, batch) = (spool.clone(), batch.to_vec());
        let routes = tokio::task::spawn_blocking(move || {
            let mut routes = Vec::new();
            for (id, files) in batch {
                if let Some(json) = spool.route(&files)? {
                    routes.push((id, json));
                }
            }
            Ok::<_, std::io::Error>(routes)
        })
        .await?
        .map_err(|e| ImportError::Export(ExportError::Io(format!("reading a kept route: {e}"))))?;
        saved += schema::workouts::set_routes(&client, &routes).await?;
    }
    Ok(saved)
}

/// Turns the export's menstrual records into cycles and stores them.
async fn write_cycles(
    db: &Db,
    t: ImportTarget,
    items: Vec<MenstrualItem>,
) -> Result<u64, ImportError> {
    let cycles = export::cycles(items);
    if cycles.is_empty() {
        return Ok(0);
    }
    let mut client = db.client().await?;
    let tx = client.transaction().await?;
    let sources: Vec<_> = cycles.iter().map(|c| c.source.clone()).collect();
    let link = schema::data_sources::Link::Push;
    let ids = schema::data_sources::upsert_pushed(&tx, t.user_id, PROVIDER, link, &sources).await?;
    let mut saved = 0;
    for (c, source_id) in cycles.iter().zip(ids) {
        let row = CycleRow {
            data_source_id: source_id,
            start_time: c.start,
            end_time: c.end,
            zone_offset: c.zone_offset,
            cycle_length: c.cycle_length,
            period_length: Some(c.period_length),
            details: c.details.clone(),
        };
        let (id, new) = schema::menstrual_cycles::upsert(&tx, t.user_id, t.run_id, &row).await?;
        if new {
            saved += 1;
            if t.outbox {
                let data =
                    crate::event_data::menstrual_cycle_created(id, t.user_id, &row, &c.source);
                let event = SessionEvent::MenstrualCycleCreated;
                schema::outbox::insert_session(&tx, event, t.user_id, data).await?;
            }
        }
    }
    tx.commit().await?;
    Ok(saved)
}

/// Notes on the user the last sync and zone offset, when the import committed anything.
async fn record_user_sync(db: &Db, t: ImportTarget, out: &Imported) -> Result<(), schema::Error> {
    if out.chunks == 0 {
        return Ok(());
    }
    let offset = out.latest_offset.offset();
    let client = db.client().await?;
    schema::users::record_sync(&client, t.user_id, PROVIDER, offset).await
}

/// Records the final outcome of an import that is not retried (the CLI's).
pub async fn finish_run(
    db: &Db,
    t: ImportTarget,
    out: &Imported,
) -> Result<SyncRun, schema::Error> {
    let client = db.client().await?;
    schema::sync_runs::finish(&client, t.run_id, t.user_id, PROVIDER, SOURCE, &out.run_report())
        .await
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Write};

    use super::*;
    use crate::export::Limit;

    /// What `read_export` reports on `file`: the chunks it sent, then its error.
    fn read(file: Vec<u8>) -> (usize, Option<ExportError>) {
        let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
        let reader = std::thread::spawn(move || {
            read_export(Box::new(Cursor::new(file)), Arc::default(), ChunkRecords::new(), &tx);
        });
        let mut chunks = 0;
        let mut error = None;
        while let Some(msg) = rx.blocking_recv() {
            match msg {
                Ok(_) => chunks += 1,
                Err(e) => error = Some(e),
            }
        }
        let _ = reader.join();
        (chunks, error)
    }

    #[test]
    fn files_that_are_no_export_say_what_they_are() {
        let pdf = b"%PDF-1.4 a scanned letter".to_vec();
        let noise: Vec<u8> =
            (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 | 0x80).collect();
        for file in [pdf, noise] {
            assert_eq!(read(file).1, Some(ExportError::NeitherZipNorXml));
        }
        // Cut inside a tag: the file is truncated, at the byte where it ends.
        let cut = b"<?xml version=\"1.0\"?>\n<HealthData locale=\"en_US\">\n <Record type=\"HKQuantityTypeIdentifierHeartRate\" value=\"7".to_vec();
        let end = cut.len() as u64;
        assert_eq!(read(cut).1, Some(ExportError::Truncated { offset: end }));
        // A byte-order mark and blank lines before the XML are fine.
        let bom = b"\xEF\xBB\xBF\n<?xml version=\"1.0\"?>\n<HealthData locale=\"en_US\">\n</HealthData>\n".to_vec();
        assert_eq!(read(bom).1, None);
    }

    fn zip(name: &str, parts: &[&[u8]], repeat: usize) -> Vec<u8> {
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(true);
        let mut out = || -> zip::result::ZipResult<Vec<u8>> {
            z.start_file(name, opts)?;
            z.write_all(parts[0])?;
            for _ in 0..repeat {
                z.write_all(parts[1])?;
            }
            z.write_all(parts[2])?;
            Ok(std::mem::replace(&mut z, zip::ZipWriter::new(Cursor::new(Vec::new())))
                .finish()?
                .into_inner())
        };
        out().unwrap_or_default()
    }

    proptest::proptest! {
        /// The zip reader under arbitrary input: no panic (fuzz.rs has the others).
        #[test]
        fn zips_of_random_or_changed_bytes(
            random in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048),
            changes in proptest::collection::vec(
                (0..4096usize, proptest::prelude::any::<u8>()), 0..12),
        ) {
            let mut head = b"PK\x03\x04".to_vec();
            head.extend(random);
            let _ = read(head);
            let mut valid = zip("e/export.xml", &[b"<HealthData>", b"<Record type=\"HKQuantityTypeIdentifierHeartRate\" value=\"60\" unit=\"count/min\" startDate=\"2026-03-14 08:00:00 +0100\" endDate=\"2026-03-14 08:00:00 +0100\"/>", b"</HealthData>"], 3);
            let len = valid.len();
            for (i, byte) in changes {
                valid[i % len] = byte;
            }
            let _ = read(valid);
        }
    }

    #[test]
    fn a_zip_bomb_is_refused_and_a_bad_zip_is_not_retried() {
        // 80 MiB of elements (ignored ones: nothing to store) in a zip of about 100 KB.
        let unit = [b"<Nothing/>".as_slice(); 1024].concat();
        let bomb = zip("export.xml", &[b"<HealthData>", &unit, b"</HealthData>"], 8 * 1024);
        assert!(bomb.len() < 1 << 20, "{}", bomb.len());
        let (_, err) = read(bomb);
        assert!(
            matches!(
                err,
                Some(ExportError::Refused { limit: Limit::Inflation { ratio: 200 }, .. })
            ),
            "{err:?}"
        );

        // The same structure at an honest size imports.
        let honest = zip("a/export.xml", &[b"<HealthData>", &unit, b"</HealthData>"], 4);
        assert_eq!(read(honest).1, None);

        let none = zip("a/export_cda.xml", &[b"<x>", b"", b"</x>"], 0);
        let (_, err) = read(none);
        assert_eq!(err, Some(ExportError::NoExportInZip));
        let err = err.map(|e| ImportError::Export(e).is_retriable());
        assert_eq!(err, Some(false));

        // A zip's signature, then too little for its first header: the zip stops early.
        let head = b"PK\x03\x04 but nothing else that makes a zip".to_vec();
        let at = head.len() as u64;
        let (_, err) = read(head);
        assert_eq!(err, Some(ExportError::ArchiveTruncated { at }));
        assert!(err.is_some_and(|e| !ImportError::Export(e).is_retriable()));
    }
}
