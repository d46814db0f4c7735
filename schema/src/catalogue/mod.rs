//! Static catalogues: series types, providers, webhook event types.

pub mod event_types;
pub mod providers;
pub mod series_types;
