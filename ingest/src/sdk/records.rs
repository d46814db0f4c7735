//! `data.records` items → samples.

use crate::units::{self, Origin};
use schema::catalogue::identifiers;

use super::fields::{self, Field};
use super::sources;
use super::wire::{Obj, RecordIn};
use crate::batch::{Normalised, Sample};

pub(super) fn record(item: &Obj<RecordIn<'_>>, origin: Origin, out: &mut Normalised) {
    let Some(r) = fields::object(item, &fields::RECORD, &mut out.report) else { return };
    let Some(kind) = r.kind.str() else {
        return out.report.drop("record.missing_type", None);
    };
    let Some(series) = identifiers::series_for(kind) else {
        return out.report.drop("record.unknown_type", Some(kind.to_string()));
    };
    // A sample is stamped with its start; end dates add nothing for point and interval series.
    let ts = match fields::timestamp(&r.start_date) {
        Field::Ok(t) => t,
        Field::Missing => {
            return out.report.drop("record.missing_start_date", Some(kind.to_string()));
        }
        Field::Invalid => {
            return out.report.drop(fields::RECORD.invalid_date, r.start_date.example());
        }
    };
    if r.value.is_null() {
        return out.report.drop("record.missing_value", Some(kind.to_string()));
    }
    let Some(value) = r.value.number() else {
        return out.report.drop("record.invalid_value", r.value.example());
    };
    let value = match units::to_canonical(series, r.unit.str(), value, origin) {
        Ok(v) => v,
        Err(e) => {
            let (reason, example) = e.dropped(kind);
            return out.report.drop(reason, Some(example));
        }
    };
    let zone_offset = fields::offset(&r.zone_offset, &fields::RECORD, &mut out.report);
    let source = sources::intern(&mut out.sources, out.provider, &r.source);
    out.note_offset(ts, zone_offset);
    out.samples.push(Sample::new(source, series, ts, value, zone_offset));
}
