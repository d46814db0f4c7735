//! The ingest pipeline: parse (SDK JSON, XML exports), normalise, write (binary COPY into the
//! hypertable, dedup, rollups), jobs (Redis stream consumer groups) and events (the outbox).
//!
//! Today it holds the worker process shell that `wearhouse worker` and `wearhouse all` run; the
//! SDK sync pipeline lands here next.

pub mod worker;
