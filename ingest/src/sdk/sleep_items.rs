//! `data.sleep` stage items → per-source sleep sessions (see `crate::sleep`).

use std::collections::BTreeMap;

use super::fields;
use super::sources;
use super::wire::{Obj, SleepIn};
use crate::batch::{Normalised, SleepSession};
use crate::sleep::{self, Interval, Stage};

/// One accepted stage item, kept until the batch's items are grouped into sessions.
pub struct StageItem {
    pub source: usize,
    pub interval: Interval,
    pub zone_offset: Option<i16>,
    pub id: Option<String>,
    pub parent_id: Option<String>,
}

pub fn item(v: &Obj<SleepIn<'_>>, out: &mut Normalised, items: &mut Vec<StageItem>) {
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

/// Groups the batch's stage items by source and splits each source's items into sessions.
pub fn sessions(items: Vec<StageItem>, out: &mut Normalised) {
    let mut by_source: BTreeMap<usize, Vec<StageItem>> = BTreeMap::new();
    for it in items {
        by_source.entry(it.source).or_default().push(it);
    }
    for (source, items) in by_source {
        let intervals: Vec<Interval> = items.iter().map(|i| i.interval).collect();
        for session in sleep::split(intervals) {
            let members: Vec<&StageItem> =
                items.iter().filter(|i| session.contains(&i.interval)).collect();
            let zone_offset = members.iter().find_map(|i| i.zone_offset);
            // The client's session id (Health Connect and Samsung send stages under a parent),
            // else the first stage's id.
            let external_id = members
                .iter()
                .find_map(|i| i.parent_id.clone())
                .or_else(|| members.iter().find_map(|i| i.id.clone()));
            out.sleep.push(SleepSession { source, intervals: session, zone_offset, external_id });
        }
    }
}
