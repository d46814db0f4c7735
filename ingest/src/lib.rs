//! The ingest pipeline: parse (SDK JSON with simd-json; XML exports next), normalise
//! (identifiers, units, sleep stages into sessions, workouts), write (binary COPY into the
//! hypertable, dedup, rollups, outbox events), and the jobs that drive it (Redis stream consumer
//! groups over durable batches in PostgreSQL).

pub mod batch;
pub mod events;
pub mod export;
pub mod import;
pub mod import_job;
pub mod jobs;
/// Test and benchmark payload generators: not part of the service.
#[cfg(any(test, feature = "testsuite"))]
pub mod payloads;
pub mod process;
pub mod report;
pub mod reprocess;
pub mod sdk;
pub mod sleep;
pub mod storage;
pub mod store;
pub mod time;
pub mod worker;
