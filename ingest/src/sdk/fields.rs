//! Reading item fields leniently: numbers may come as strings, strings may be blank.

use chrono::{DateTime, Utc};
use simd_json::BorrowedValue;
use simd_json::prelude::*;

use crate::time;

/// A non-blank string field.
pub fn str_field<'v>(item: &'v BorrowedValue<'_>, key: &str) -> Option<&'v str> {
    item.get(key).and_then(|v| v.as_str()).map(str::trim).filter(|s| !s.is_empty())
}

/// A finite number, or a string holding one.
pub fn number(v: &BorrowedValue<'_>) -> Option<f64> {
    let n = match v.as_str() {
        Some(s) => s.trim().parse::<f64>().ok()?,
        None => v.cast_f64()?,
    };
    n.is_finite().then_some(n)
}

pub enum Field<T> {
    Missing,
    Invalid,
    Ok(T),
}

/// A timestamp field.
pub fn timestamp(item: &BorrowedValue<'_>, key: &str) -> Field<DateTime<Utc>> {
    match item.get(key) {
        None => Field::Missing,
        Some(v) if v.is_null() => Field::Missing,
        Some(v) => match v.as_str().and_then(time::parse_timestamp) {
            Some(t) => Field::Ok(t),
            None => Field::Invalid,
        },
    }
}

/// A `zoneOffset` field: `Ok(None)` when absent or null, `Err` when unreadable.
pub fn zone_offset(item: &BorrowedValue<'_>) -> Result<Option<i16>, time::InvalidOffset> {
    match item.get("zoneOffset").or_else(|| item.get("zone_offset")) {
        None => Ok(None),
        Some(v) if v.is_null() => Ok(None),
        Some(v) => v.as_str().ok_or(time::InvalidOffset).and_then(time::parse_offset).map(Some),
    }
}

/// A short, bounded rendering of a value for reports.
pub fn example(v: Option<&BorrowedValue<'_>>) -> Option<String> {
    let v = v?;
    let s = match v.as_str() {
        Some(s) => s.to_string(),
        None => simd_json::to_string(v).ok()?,
    };
    Some(s.chars().take(80).collect())
}
