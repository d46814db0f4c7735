//! The rules of reading a user's data, in one place: which source wins when several report the
//! same thing (`ranking`), which sessions make a night and what it adds up to (`sleep`), and
//! the day summaries and scores built on them (`activity`, `body`, `recovery`, `scores`).
//!
//! Pure functions over the typed rows `schema` reads; the API's handlers load the rows, call
//! these and serialise what they return. Nothing here writes SQL or serves HTTP; the shapes
//! returned derive serde's `Serialize` and utoipa's `ToSchema`, so the OpenAPI document
//! describes them as the API sends them.

pub mod activity;
pub mod body;
pub mod ranking;
pub mod recovery;
pub mod scores;
pub mod series;
pub mod sleep;
mod source;

pub use ranking::Ranking;
pub use source::{SourceOut, Sources};

/// The start of a day, in UTC.
pub fn midnight(d: chrono::NaiveDate) -> chrono::DateTime<chrono::Utc> {
    d.and_hms_opt(0, 0, 0).map(|t| t.and_utc()).unwrap_or_default()
}

/// One decimal, as every summary figure is given.
pub(crate) fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}
