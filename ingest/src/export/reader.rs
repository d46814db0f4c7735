//! Streaming the export with quick-xml: the elements we use are cut out as raw tag bytes into
//! chunks of bounded size, so that normalising can run in parallel and memory stays flat.

use std::io::BufRead;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use quick_xml::errors::SyntaxError;
use quick_xml::events::Event;

use super::bounds::{EventBounded, Limit, MAX_OPEN_BYTES};

/// Records per chunk: enough to amortise a transaction, small enough to keep memory flat.
pub(super) const CHUNK_RECORDS: usize = 32_768;
/// A chunk also closes at this many bytes of raw tags.
const CHUNK_BYTES: usize = 24 << 20;

/// The records a chunk closes at: [`CHUNK_RECORDS`], or fewer while the import yields to the
/// API (`pace`: shorter chunks are shorter bursts of work). Shared between the reader and
/// whoever decides; a change applies from the next chunk on. Where a chunk is cut changes
/// nothing stored: chunks are cut by size anyway, and each is merged with what is stored.
#[derive(Debug, Clone)]
pub struct ChunkRecords(Arc<AtomicUsize>);

impl ChunkRecords {
    /// The most: [`CHUNK_RECORDS`].
    pub const MAX: usize = CHUNK_RECORDS;

    pub fn new() -> ChunkRecords {
        ChunkRecords(Arc::new(AtomicUsize::new(CHUNK_RECORDS)))
    }

    /// At most [`CHUNK_RECORDS`], at least one.
    pub fn set(&self, records: usize) {
        self.0.store(records.clamp(1, CHUNK_RECORDS), Ordering::Relaxed);
    }

    pub fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

impl Default for ChunkRecords {
    fn default() -> Self {
        ChunkRecords::new()
    }
}

/// Flag of a record whose metadata marks the first day of a menstrual cycle.
pub(super) const CYCLE_START: u8 = 1;

#[derive(Debug, Clone, Default)]
pub struct RawWorkout {
    pub tag: Vec<u8>,
    pub statistics: Vec<Vec<u8>>,
    pub metadata: Vec<Vec<u8>>,
    pub events: Vec<Vec<u8>>,
    pub route_files: Vec<String>,
}

/// A run of the export's elements, as raw tag content (name and attributes).
#[derive(Debug, Default)]
pub struct RawChunk {
    pub arena: Vec<u8>,
    /// `(start, len, flags)` of each `Record` in `arena`.
    pub records: Vec<(u32, u32, u8)>,
    pub workouts: Vec<RawWorkout>,
    pub summaries: Vec<Vec<u8>>,
    /// Bytes held in workouts and summaries (the arena counts itself).
    held: usize,
    /// Bytes of the export read when the chunk closed.
    pub position: u64,
}

impl RawChunk {
    pub fn record(&self, i: usize) -> (&[u8], u8) {
        let (start, len, flags) = self.records[i];
        (&self.arena[start as usize..(start + len) as usize], flags)
    }

    /// Bytes of raw tags the chunk holds.
    fn bytes(&self) -> usize {
        self.arena.len() + self.held
    }

    fn is_full(&self, records: usize) -> bool {
        self.records.len() >= records || self.bytes() >= CHUNK_BYTES
    }

    fn is_empty(&self) -> bool {
        self.records.is_empty() && self.workouts.is_empty() && self.summaries.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    #[error("malformed XML at byte {offset}: {reason}")]
    Xml { offset: u64, reason: String },
    #[error("the file ends at byte {offset} before </HealthData>: it is truncated")]
    Truncated { offset: u64 },
    /// A zip that stops before its end (inside an entry, or before its central directory).
    #[error("the zip ends at byte {at} before its end: it is truncated")]
    ArchiveTruncated { at: u64 },
    #[error("not an Apple Health export: no <HealthData> element")]
    NotAnExport,
    #[error("not an Apple Health export: the file is neither a zip archive nor XML")]
    NeitherZipNorXml,
    /// A bound of `export::bounds`: the file is hostile or damaged.
    #[error("refused at byte {offset}: {limit}")]
    Refused { offset: u64, limit: Limit },
    #[error("not a readable zip: {0}")]
    Zip(String),
    #[error("the zip holds no export.xml")]
    NoExportInZip,
    /// The input failed (a storage stream dropped): not the file's fault.
    #[error("reading the file: {0}")]
    Io(String),
}

pub struct ExportReader<R: BufRead> {
    xml: quick_xml::Reader<EventBounded<R>>,
    buf: Vec<u8>,
    opened_root: bool,
    closed_root: bool,
    finished: bool,
    open_record: Option<usize>,
    open_workout: Option<RawWorkout>,
    in_route: bool,
    chunk: RawChunk,
    chunk_records: ChunkRecords,
    /// What an open element may gather: [`MAX_OPEN_BYTES`] (smaller in tests).
    open_max: usize,
}

impl<R: BufRead> ExportReader<R> {
    pub fn new(input: R) -> ExportReader<R> {
        ExportReader::sized(input, ChunkRecords::new())
    }

    /// A reader whose chunks close at `chunk_records`, as it is when each closes.
    pub fn sized(input: R, chunk_records: ChunkRecords) -> ExportReader<R> {
        let mut xml = quick_xml::Reader::from_reader(EventBounded::new(input));
        xml.config_mut().trim_text(false);
        ExportReader {
            xml,
            buf: Vec::with_capacity(4096),
            opened_root: false,
            closed_root: false,
            finished: false,
            open_record: None,
            open_workout: None,
            in_route: false,
            chunk: RawChunk::default(),
            chunk_records,
            open_max: MAX_OPEN_BYTES,
        }
    }

    #[cfg(test)]
    pub(super) fn with_open_max(input: R, open_max: usize) -> ExportReader<R> {
        ExportReader { open_max, ..ExportReader::new(input) }
    }

    /// Bytes consumed so far.
    pub(crate) fn bytes_read(&self) -> u64 {
        self.xml.buffer_position()
    }

    fn take_chunk(&mut self) -> RawChunk {
        let mut chunk = std::mem::take(&mut self.chunk);
        chunk.position = self.bytes_read();
        chunk
    }

    /// Reads until a chunk is full or the export ends.
    fn fill(&mut self) -> Result<Option<RawChunk>, ExportError> {
        loop {
            self.buf.clear();
            self.xml.get_mut().start_event();
            let event = self.xml.read_event_into(&mut self.buf).map_err(|e| match e {
                quick_xml::Error::Io(io) => match Limit::of_io(&io) {
                    Some(limit) => {
                        ExportError::Refused { offset: self.xml.buffer_position(), limit }
                    }
                    // An inflater whose compressed stream stops: the file is cut short.
                    None if io.kind() == std::io::ErrorKind::UnexpectedEof => {
                        ExportError::Truncated { offset: self.xml.buffer_position() }
                    }
                    None => ExportError::Io(io.to_string()),
                },
                // A markup left open at the end of the input: the file stops mid-way.
                quick_xml::Error::Syntax(
                    SyntaxError::UnclosedTag
                    | SyntaxError::UnclosedComment
                    | SyntaxError::UnclosedCData
                    | SyntaxError::UnclosedDoctype
                    | SyntaxError::UnclosedPIOrXmlDecl,
                ) => ExportError::Truncated { offset: self.xml.buffer_position() },
                e => ExportError::Xml { offset: self.xml.error_position(), reason: e.to_string() },
            })?;
            let (tag, empty) = match &event {
                Event::Start(e) => (Some(e), false),
                Event::Empty(e) => (Some(e), true),
                _ => (None, false),
            };
            if let Some(e) = tag {
                let content: &[u8] = e;
                match e.name().as_ref() {
                    b"HealthData" => self.opened_root = true,
                    b"Record" => {
                        let start = self.chunk.arena.len() as u32;
                        self.chunk.arena.extend_from_slice(content);
                        self.chunk.records.push((start, content.len() as u32, 0));
                        if !empty {
                            self.open_record = Some(self.chunk.records.len() - 1);
                        }
                    }
                    b"MetadataEntry" => {
                        if let Some(i) = self.open_record {
                            if is_cycle_start(content) {
                                self.chunk.records[i].2 |= CYCLE_START;
                            }
                        } else if let Some(w) = self.open_workout.as_mut()
                            && !self.in_route
                        {
                            w.metadata.push(content.to_vec());
                            self.chunk.held += content.len();
                        }
                    }
                    b"Workout" => {
                        let w = RawWorkout { tag: content.to_vec(), ..Default::default() };
                        self.chunk.held += content.len();
                        if empty {
                            self.chunk.workouts.push(w);
                        } else {
                            self.open_workout = Some(w);
                        }
                    }
                    b"WorkoutStatistics" => {
                        if let Some(w) = self.open_workout.as_mut() {
                            w.statistics.push(content.to_vec());
                            self.chunk.held += content.len();
                        }
                    }
                    b"WorkoutEvent" => {
                        if let Some(w) = self.open_workout.as_mut() {
                            w.events.push(content.to_vec());
                            self.chunk.held += content.len();
                        }
                    }
                    b"WorkoutRoute" => self.in_route = !empty,
                    b"FileReference" => {
                        if let Some(w) = self.open_workout.as_mut()
                            && let Some((_, path)) =
                                super::attrs::Attrs::of_tag(content).find(|(k, _)| *k == b"path")
                            && let Some(path) = super::attrs::text(path)
                        {
                            self.chunk.held += path.len();
                            w.route_files.push(path.into_owned());
                        }
                    }
                    b"ActivitySummary" => {
                        self.chunk.summaries.push(content.to_vec());
                        self.chunk.held += content.len();
                    }
                    _ => {}
                }
            }
            match event {
                Event::End(e) => match e.name().as_ref() {
                    b"Record" => self.open_record = None,
                    b"WorkoutRoute" => self.in_route = false,
                    b"Workout" => {
                        if let Some(w) = self.open_workout.take() {
                            self.chunk.workouts.push(w);
                        }
                    }
                    b"HealthData" => self.closed_root = true,
                    _ => {}
                },
                Event::Eof => {
                    self.finished = true;
                    if !self.opened_root {
                        return Err(ExportError::NotAnExport);
                    }
                    if !self.closed_root {
                        return Err(ExportError::Truncated { offset: self.bytes_read() });
                    }
                    return Ok((!self.chunk.is_empty()).then(|| self.take_chunk()));
                }
                _ => {}
            }
            // Never cut a record from its metadata or a workout from its statistics; but an
            // element that does not close within a bound is refused.
            if self.open_record.is_none() && self.open_workout.is_none() {
                if self.chunk.is_full(self.chunk_records.get()) {
                    return Ok(Some(self.take_chunk()));
                }
            } else if self.chunk.bytes() > self.open_max {
                let limit = Limit::Open { max: self.open_max };
                return Err(ExportError::Refused { offset: self.bytes_read(), limit });
            }
        }
    }
}

fn is_cycle_start(metadata: &[u8]) -> bool {
    let mut key = false;
    let mut yes = false;
    for (k, v) in super::attrs::Attrs::of_tag(metadata) {
        match k {
            b"key" => key = v == b"HKMenstrualCycleStart",
            b"value" => yes = v == b"1",
            _ => {}
        }
    }
    key && yes
}

impl<R: BufRead> Iterator for ExportReader<R> {
    type Item = Result<RawChunk, ExportError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        match self.fill() {
            Ok(Some(chunk)) => Some(Ok(chunk)),
            Ok(None) => None,
            Err(e) => {
                self.finished = true;
                Some(Err(e))
            }
        }
    }
}
