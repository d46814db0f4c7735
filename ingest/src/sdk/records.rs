//! `data.records` items → samples.

use schema::catalogue::identifiers;
use schema::catalogue::units::{self, Origin, UnitError};
use simd_json::BorrowedValue;
use simd_json::prelude::*;

use super::fields::{self, Field};
use super::sources;
use crate::batch::{Normalised, Sample};

pub fn record(item: &BorrowedValue<'_>, origin: Origin, out: &mut Normalised) {
    if !item.is_object() {
        return out.report.drop("record.not_an_object", fields::example(Some(item)));
    }
    let Some(kind) = fields::str_field(item, "type") else {
        return out.report.drop("record.missing_type", None);
    };
    let Some(series) = identifiers::series_for(kind) else {
        return out.report.drop("record.unknown_type", Some(kind.to_string()));
    };
    // A sample is stamped with its start; end dates add nothing for point and interval series.
    let ts = match fields::timestamp(item, "startDate") {
        Field::Ok(t) => t,
        Field::Missing => {
            return out.report.drop("record.missing_start_date", Some(kind.to_string()));
        }
        Field::Invalid => {
            return out.report.drop("record.invalid_date", fields::example(item.get("startDate")));
        }
    };
    let Some(raw) = item.get("value").filter(|v| !v.is_null()) else {
        return out.report.drop("record.missing_value", Some(kind.to_string()));
    };
    let Some(value) = fields::number(raw) else {
        return out.report.drop("record.invalid_value", fields::example(Some(raw)));
    };
    let unit = item.get("unit").and_then(|u| u.as_str());
    let value = match units::to_canonical(series, unit, value, origin) {
        Ok(v) => v,
        Err(UnitError::Missing { .. }) => {
            return out.report.drop("record.missing_unit", Some(kind.to_string()));
        }
        Err(UnitError::Unknown { unit, .. }) => {
            return out.report.drop("record.unknown_unit", Some(format!("{kind} in '{unit}'")));
        }
    };
    let zone_offset = match fields::zone_offset(item) {
        Ok(z) => z,
        Err(_) => {
            out.report.warn("record.invalid_zone_offset", fields::example(item.get("zoneOffset")));
            None
        }
    };
    let source = sources::intern(&mut out.sources, out.provider, item.get("source"));
    out.note_offset(ts, zone_offset);
    out.samples.push(Sample {
        source,
        series_type_id: series.id,
        ts,
        value,
        zone_offset,
        is_daily_total: series.is_additive().then_some(false),
    });
}
