//! Static catalogues: series types, wire identifiers and units, workout types, providers,
//! webhook event types.

pub mod event_types;
pub mod hkunit;
pub mod identifiers;
pub mod providers;
pub mod series_types;
pub mod units;
pub mod workout_types;

#[cfg(test)]
mod healthkit_units_tests;
