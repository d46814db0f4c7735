//! Apple Health exports (`export.xml`, or `export.zip` holding it): streamed with quick-xml,
//! cut into chunks of raw tags, normalised in parallel, written chunk by chunk through the same
//! storage path as the SDK (dedup, rollups, sessions, events).
//!
//! Unlike the reference system, values are converted by their `unit` attribute, zone offsets
//! are kept from the timestamps, workouts keep their statistics, metadata and route references,
//! `ActivitySummary` days become daily totals, and menstrual flow records become cycles.

mod archive;
mod attrs;
mod bounds;
mod device;
/// A generator of exports for tests and benchmarks: not part of the service.
#[cfg(any(test, feature = "testsuite"))]
pub mod generate;
mod gpx;
mod menstrual;
mod normalise;
mod reader;
mod records;
mod route_spool;
mod workouts;
mod zip_entries;

pub use archive::{Entry, Visit, walk};
pub use bounds::Limit;
pub use menstrual::{Cycle, cycles};
pub use normalise::{ExportBatch, normalise};
pub use reader::{ChunkRecords, ExportError, ExportReader, RawChunk};
pub use records::MenstrualItem;
pub use route_spool::RouteSpool;

#[cfg(test)]
mod tests;
