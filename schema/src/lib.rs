//! The wearhouse data model: embedded SQL migrations, the static catalogues (series types,
//! providers, webhook event types), typed rows, and the queries that read and write them.
//!
//! Nothing here knows HTTP or payload parsing. Every query that touches one user's data takes
//! that user's id, so callers cannot forget the scope.
//!
//! Each table's module is public and is this crate's API: callers name what they call by its
//! table (`schema::workouts::list`), which leads a reader to the SQL. Within them, only what
//! another crate uses is `pub` (`scripts/review/unnamed_pub.py` lists the rest, which a public
//! signature returns). Shared internals (`sample_row`, `smallint_enum`, `error`, `blocks`'
//! codec and readers) are private, and no module reaches back into one that reaches it
//! (`scripts/review/cycles.py`).

pub mod activity;
pub mod api_keys;
pub mod audit;
pub mod blocks;
pub mod catalogue;
pub mod connect_links;
pub mod connections;
pub mod coverage;
pub mod data_sources;
pub mod db;
pub mod developers;
pub mod endpoint_messages;
mod error;
pub mod exports;
pub mod ids;
pub mod imports;
pub mod invitation_codes;
pub mod lifecycle;
pub mod menstrual_cycles;
pub mod object_deletions;
pub mod outbox;
pub mod overview;
pub mod priority;
pub mod provider_settings;
pub mod refresh_tokens;
pub mod replay;
pub mod replicas;
pub mod reseal;
pub mod retention;
pub mod rollups;
pub mod sample_chunks;
mod sample_row;
pub mod samples;
pub mod sdk_batches;
pub mod sealed;
pub mod session_blocks;
pub mod sessions;
pub mod settings;
pub mod sleep_sessions;
mod smallint_enum;
pub mod storage;
pub mod summaries;
pub mod sync_runs;
pub mod team_invitations;
pub mod timeseries;
pub mod uploads;
pub mod users;
pub mod vendor_pulls;
pub mod webhook_deliveries;
pub mod webhook_endpoints;
pub mod webhook_messages;
pub mod workouts;
pub mod zone;

pub use db::{Db, Edition, Role};
pub use error::{Conflict, Error, Result};
pub use replicas::Reads;

use sha2::{Digest, Sha256};

/// SHA-256 of a high-entropy secret (API key, refresh token). Such secrets need no slow hash:
/// they cannot be guessed, and a fast hash lets us look them up by value.
pub(crate) fn secret_hash(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

/// A lifetime as `make_interval(secs => $n)` takes it (double precision seconds).
pub(crate) fn interval_secs(d: chrono::Duration) -> f64 {
    d.num_seconds() as f64
}
