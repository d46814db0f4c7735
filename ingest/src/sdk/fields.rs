//! Reading typed values out of lenient wire fields.

use chrono::{DateTime, Utc};

use super::wire::{Obj, Scalar};
use crate::report::Report;
use crate::time;

pub(super) enum Field<T> {
    Missing,
    Invalid,
    Ok(T),
}

/// A timestamp field.
pub(super) fn timestamp(v: &Scalar<'_>) -> Field<DateTime<Utc>> {
    if v.is_null() {
        return Field::Missing;
    }
    match v.str().and_then(time::parse_timestamp) {
        Some(t) => Field::Ok(t),
        None => Field::Invalid,
    }
}

/// A zone offset field: `Ok(None)` when absent or null, `Err` when unreadable.
pub(super) fn zone_offset(v: &Scalar<'_>) -> Result<Option<i16>, time::InvalidOffset> {
    if v.is_null() {
        return Ok(None);
    }
    v.str().ok_or(time::InvalidOffset).and_then(time::parse_offset).map(Some)
}

/// The report reasons of one kind of item.
pub(super) struct Kind {
    pub not_an_object: &'static str,
    pub missing_date: &'static str,
    pub invalid_date: &'static str,
    pub end_before_start: &'static str,
    pub invalid_zone_offset: &'static str,
}

pub(super) const RECORD: Kind = Kind {
    not_an_object: "record.not_an_object",
    missing_date: "record.missing_start_date",
    invalid_date: "record.invalid_date",
    end_before_start: "record.end_before_start",
    invalid_zone_offset: "record.invalid_zone_offset",
};

pub(super) const SLEEP: Kind = Kind {
    not_an_object: "sleep.not_an_object",
    missing_date: "sleep.missing_date",
    invalid_date: "sleep.invalid_date",
    end_before_start: "sleep.end_before_start",
    invalid_zone_offset: "sleep.invalid_zone_offset",
};

pub(super) const WORKOUT: Kind = Kind {
    not_an_object: "workout.not_an_object",
    missing_date: "workout.missing_date",
    invalid_date: "workout.invalid_date",
    end_before_start: "workout.end_before_start",
    invalid_zone_offset: "workout.invalid_zone_offset",
};

/// The item as an object, or `None` with the item reported as dropped.
pub(super) fn object<'i, T>(item: &'i Obj<T>, kind: &Kind, report: &mut Report) -> Option<&'i T> {
    match item {
        Obj::Value(v) => Some(v),
        Obj::Null => {
            report.drop(kind.not_an_object, Some("null".into()));
            None
        }
        Obj::Other(what) => {
            report.drop(kind.not_an_object, Some(what.clone()));
            None
        }
    }
}

/// A start and an end in order, or `None` with the item reported as dropped.
pub(super) fn span(
    start: &Scalar<'_>,
    end: &Scalar<'_>,
    kind: &Kind,
    report: &mut Report,
) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    match (timestamp(start), timestamp(end)) {
        (Field::Ok(s), Field::Ok(e)) if e >= s => Some((s, e)),
        (Field::Ok(_), Field::Ok(_)) => {
            report.drop(kind.end_before_start, start.example());
            None
        }
        (Field::Missing, _) | (_, Field::Missing) => {
            report.drop(kind.missing_date, None);
            None
        }
        _ => {
            report.drop(kind.invalid_date, start.example());
            None
        }
    }
}

/// The item's zone offset; an unreadable one is dropped with a warning (the item is kept).
pub(super) fn offset(v: &Scalar<'_>, kind: &Kind, report: &mut Report) -> Option<i16> {
    zone_offset(v).unwrap_or_else(|_| {
        report.warn(kind.invalid_zone_offset, v.example());
        None
    })
}
