//! Sealed sample blocks (issue 31): once a (user, series, source, UTC day) is past and quiet,
//! its samples move out of the row-wise `samples` hypertable into one row whose columns are
//! encoded ([`codec`]): times and values by `pco`, zone offsets, daily-total flags and batch
//! lineage as runs. Fresh data stays row-wise. A day lives in rows or in its block, never both
//! ([`store`]); reads decode the blocks their window touches beside the rows ([`read`]). A block
//! carries its days' rollups too: per UTC hour ([`hours`]), per UTC day ([`days`]) and per
//! local day ([`local_days`]).

mod buckets;
mod codec;
pub mod compact;
mod days;
mod hours;
pub(crate) mod local_days;
pub(crate) mod read;
pub mod store;

pub(crate) use buckets::{SealedBuckets, buckets_sql};
pub(crate) use codec::CodecError;
pub use codec::{decode, encode};
pub use read::{Figures, Scope, fetch, snapshot};
pub(crate) use read::{
    HourScope, PageLimit, SealedHours, SealedRows, end_snapshot, fetch_figures, hours_sql,
    pair_samples_sql, samples_sql,
};
pub use store::{DayKey, Sealing, Share, due, seal, unseal, unseal_user};
