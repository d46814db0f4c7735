//! Sealed sample blocks (issue 31): once a (user, series, source, UTC day) is complete, its
//! samples move out of the row-wise `samples` hypertable into one row whose columns are encoded
//! ([`codec`]): times and values by `pco`, zone offsets, daily-total flags and batch lineage as
//! runs. Fresh data stays row-wise. This module holds the encoding; sealing, reads and the
//! lifecycle build on it.

pub mod codec;

pub use codec::{BlockSample, CodecError, decode, encode};
