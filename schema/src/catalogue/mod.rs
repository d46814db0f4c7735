//! Static catalogues: series types, wire identifiers, workout types, providers, webhook event
//! types. (The unit grammar is ingest's: `ingest::units`.)

pub mod event_types;
pub mod identifiers;
pub mod providers;
pub mod series_types;
pub mod workout_types;
