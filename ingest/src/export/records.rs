//! Export `Record` elements → samples, sleep stage items and menstrual items.

use std::collections::HashMap;

use crate::units::{self, Origin};
use chrono::{DateTime, Utc};
use schema::catalogue::identifiers;
use schema::data_sources::NewDataSource;

use super::attrs::{self, Attrs};
use super::device;
use crate::batch::{Normalised, Sample};
use crate::sleep::{Interval, Stage, StageItem};
use crate::time::parse_export_timestamp;

const SLEEP: &str = "HKCategoryTypeIdentifierSleepAnalysis";
const MENSTRUAL_FLOW: &str = "HKCategoryTypeIdentifierMenstrualFlow";
const INTERMENSTRUAL: &str = "HKCategoryTypeIdentifierIntermenstrualBleeding";

/// One day's menstrual record, kept until the whole export is read (they are few) and then
/// turned into cycles.
#[derive(Debug, Clone, PartialEq)]
pub struct MenstrualItem {
    pub source: NewDataSource,
    pub ts: DateTime<Utc>,
    pub zone_offset: Option<i16>,
    /// `none`, `unspecified`, `light`, `medium`, `heavy`; `None` for intermenstrual bleeding.
    pub flow: Option<String>,
    pub cycle_start: bool,
}

/// What one worker makes of a slice of records.
pub(super) struct Partial {
    pub n: Normalised,
    pub stages: Vec<StageItem>,
    pub menstrual: Vec<MenstrualItem>,
    /// `sourceName` + `device` bytes as written → source index: device strings repeat on every
    /// record of a device, and parsing one is far costlier than a lookup.
    cache: HashMap<Box<[u8]>, usize>,
    key: Vec<u8>,
}

impl Partial {
    pub(super) fn new() -> Partial {
        Partial {
            n: Normalised { provider: "phonehealth", ..Default::default() },
            stages: Vec::new(),
            menstrual: Vec::new(),
            cache: HashMap::new(),
            key: Vec::new(),
        }
    }

    pub(super) fn source(
        &mut self,
        source_name: Option<&[u8]>,
        device_raw: Option<&[u8]>,
    ) -> usize {
        self.key.clear();
        self.key.extend_from_slice(source_name.unwrap_or_default());
        self.key.push(0);
        self.key.extend_from_slice(device_raw.unwrap_or_default());
        if let Some(&i) = self.cache.get(self.key.as_slice()) {
            return i;
        }
        let name = source_name.and_then(attrs::text);
        let dev = device_raw.and_then(attrs::text).map(|d| device::parse(&d));
        let s = device::source(name.as_deref(), dev.as_ref());
        let (model, src) = (s.device_model.clone(), s.source.clone());
        let i = self.n.sources.intern(model.as_deref(), src.as_deref(), || s);
        self.cache.insert(self.key.clone().into_boxed_slice(), i);
        i
    }
}

impl Default for Partial {
    fn default() -> Self {
        Partial::new()
    }
}

fn stage(value: &[u8]) -> Option<Stage> {
    let v = std::str::from_utf8(value).ok()?;
    Some(match v.strip_prefix("HKCategoryValueSleepAnalysis")? {
        "InBed" => Stage::InBed,
        "Asleep" | "AsleepUnspecified" => Stage::Sleeping,
        "Awake" => Stage::Awake,
        "AsleepCore" => Stage::Light,
        "AsleepDeep" => Stage::Deep,
        "AsleepREM" => Stage::Rem,
        _ => return None,
    })
}

fn flow(value: &[u8]) -> String {
    let v = std::str::from_utf8(value).unwrap_or_default();
    let level = v
        .strip_prefix("HKCategoryValueMenstrualFlow")
        .or_else(|| v.strip_prefix("HKCategoryValueVaginalBleeding"))
        .unwrap_or("Unspecified");
    level.to_ascii_lowercase()
}

pub(super) fn record(tag: &[u8], flags: u8, p: &mut Partial) {
    let (mut kind, mut name, mut dev, mut unit, mut value, mut start, mut end) =
        (None, None, None, None, None, None, None);
    for (k, v) in Attrs::of_tag(tag) {
        match k {
            b"type" => kind = Some(v),
            b"sourceName" => name = Some(v),
            b"device" => dev = Some(v),
            b"unit" => unit = Some(v),
            b"value" => value = Some(v),
            b"startDate" => start = Some(v),
            b"endDate" => end = Some(v),
            _ => {}
        }
    }
    let Some(kind) = kind.and_then(|k| std::str::from_utf8(k).ok()) else {
        return p.n.report.drop("record.missing_type", None);
    };
    let Some((ts, offset)) = start.and_then(parse_export_timestamp) else {
        let reason =
            if start.is_none() { "record.missing_start_date" } else { "record.invalid_date" };
        return p.n.report.drop(reason, start.and_then(attrs::text).map(|t| t.into_owned()));
    };
    match kind {
        SLEEP => {
            let Some(stage) = value.and_then(stage) else {
                return p.n.report.drop(
                    "sleep.invalid_stage",
                    value.and_then(attrs::text).map(|t| t.into_owned()),
                );
            };
            let Some((end, _)) = end.and_then(parse_export_timestamp).filter(|(e, _)| *e >= ts)
            else {
                return p
                    .n
                    .report
                    .drop("sleep.invalid_date", end.and_then(attrs::text).map(|t| t.into_owned()));
            };
            let source = p.source(name, dev);
            p.n.note_offset(end, offset);
            p.stages.push(StageItem {
                source,
                interval: Interval { start: ts, end, stage },
                zone_offset: offset,
                id: None,
                parent_id: None,
            });
        }
        MENSTRUAL_FLOW | INTERMENSTRUAL => {
            let source = p.source(name, dev);
            let src = p.n.sources.list[source].clone();
            p.menstrual.push(MenstrualItem {
                source: src,
                ts,
                zone_offset: offset,
                flow: (kind == MENSTRUAL_FLOW)
                    .then(|| value.map(flow).unwrap_or_else(|| "unspecified".into())),
                cycle_start: flags & super::reader::CYCLE_START != 0,
            });
        }
        _ => {
            let Some(series) = identifiers::series_for(kind) else {
                return p.n.report.drop("record.unknown_type", Some(kind.to_string()));
            };
            let Some(v) = value.and_then(attrs::number) else {
                return p.n.report.drop(
                    "record.invalid_value",
                    value.and_then(attrs::text).map(|t| t.into_owned()),
                );
            };
            let unit = unit.and_then(|u| std::str::from_utf8(u).ok());
            let v = match units::to_canonical(series, unit, v, Origin::AppleExport) {
                Ok(v) => v,
                Err(e) => {
                    let (reason, example) = e.dropped(kind);
                    return p.n.report.drop(reason, Some(example));
                }
            };
            let source = p.source(name, dev);
            p.n.note_offset(ts, offset);
            p.n.samples.push(Sample::new(source, series, ts, v, offset));
        }
    }
}
