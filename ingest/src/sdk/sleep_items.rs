//! `data.sleep` stage items → per-source sleep sessions (see `crate::sleep`).

use super::fields;
use super::sources;
use super::wire::{Obj, SleepIn};
use crate::batch::Normalised;
use crate::sleep::{Interval, Stage, StageItem};

pub(super) fn item(v: &Obj<SleepIn<'_>>, out: &mut Normalised, items: &mut Vec<StageItem>) {
    let Some(s) = fields::object(v, &fields::SLEEP, &mut out.report) else { return };
    let Some(stage_raw) = s.stage.str() else {
        return out.report.drop("sleep.missing_stage", None);
    };
    let Some(stage) = Stage::parse(stage_raw) else {
        return out.report.drop("sleep.invalid_stage", Some(stage_raw.to_string()));
    };
    let Some((start, end)) =
        fields::span(&s.start_date, &s.end_date, &fields::SLEEP, &mut out.report)
    else {
        return;
    };
    let zone_offset = fields::offset(&s.zone_offset, &fields::SLEEP, &mut out.report);
    out.note_offset(end, zone_offset);
    let source = sources::intern(&mut out.sources, out.provider, &s.source);
    items.push(StageItem {
        source,
        interval: Interval { start, end, stage },
        zone_offset,
        id: s.id.str().map(str::to_string),
        parent_id: s.parent_id.str().map(str::to_string),
    });
}
