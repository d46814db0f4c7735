//! The ingest pipeline: parse (SDK JSON with simd-json, Apple Health XML exports with
//! quick-xml), normalise (identifiers, units, sleep stages into sessions, workouts), write
//! (binary COPY into the hypertable, dedup, rollups, outbox events), and the jobs that drive it
//! (three lanes on the one queue over durable rows in PostgreSQL: SDK batches, imports and
//! exports, vendor pulls; pulls and exports are run by handlers from the crates above,
//! `worker::PullHandler` and `worker::ExportHandler`), and the sealer and lifecycle tasks the
//! worker runs beside them.
//!
//! Other crates use the jobs and the worker, the SDK envelope, imports, uploads and object
//! storage, and the normalised batch (`Normalised` and its items), which the cloud vendors'
//! mappings build; the unit grammar (`units`) is the parsers'; the other stages (`store`,
//! `event_data`, `time`) are private.

mod batch;
mod event_data;
pub mod export;
#[cfg(test)]
mod fuzz;
pub mod import;
pub mod import_job;
pub mod jobs;
pub mod lifecycle;
pub mod object_store;
mod pace;
/// Test and benchmark payload generators: not part of the service.
#[cfg(any(test, feature = "testsuite"))]
pub mod payloads;
pub mod process;
mod report;
pub mod reprocess;
pub mod sdk;
pub mod sealer;
mod sleep;
mod store;
mod time;
mod units;
pub mod uploads;
pub mod worker;

pub use batch::{LatestOffset, Normalised, Sample, Sources, Workout};
pub use sleep::{Interval, SleepSession, Stage, StageTotals, VendorNight};
pub use store::Written;
