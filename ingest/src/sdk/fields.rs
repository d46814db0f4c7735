//! Reading typed values out of lenient wire fields.

use chrono::{DateTime, Utc};

use super::wire::Scalar;
use crate::time;

pub enum Field<T> {
    Missing,
    Invalid,
    Ok(T),
}

/// A timestamp field.
pub fn timestamp(v: &Scalar<'_>) -> Field<DateTime<Utc>> {
    if v.is_null() {
        return Field::Missing;
    }
    match v.str().and_then(time::parse_timestamp) {
        Some(t) => Field::Ok(t),
        None => Field::Invalid,
    }
}

/// A zone offset field: `Ok(None)` when absent or null, `Err` when unreadable.
pub fn zone_offset(v: &Scalar<'_>) -> Result<Option<i16>, time::InvalidOffset> {
    if v.is_null() {
        return Ok(None);
    }
    v.str().ok_or(time::InvalidOffset).and_then(time::parse_offset).map(Some)
}
