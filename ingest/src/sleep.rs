//! Sleep stage intervals → sleep sessions (reference §3.4), for every source that sends stages
//! rather than sessions (the mobile SDKs, Apple Health exports).
//!
//! - Intervals of one source, sorted by start, form one session until a gap of more than
//!   `GAP` separates them. A session starts only with a sleep or in-bed stage.
//! - Precedence: where detailed stages (light, deep, REM) exist they win and generic
//!   `sleeping` / `in_bed` intervals are dropped; else `sleeping` (plus `awake`); else `in_bed`
//!   counts as sleep. Overlaps are clipped, the earlier interval winning.
//! - Time in bed is the union of the in-bed intervals, else the sum of the kept stages, and at
//!   least sleep + awake; efficiency is sleep / time in bed.
//! - A short daytime session is a nap.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Timelike, Utc};
use serde_json::{Value, json};

/// Sessions further apart than this are separate.
pub(crate) const GAP: Duration = Duration::minutes(120);
/// A session with less sleep than this that starts in the local daytime is a nap.
const NAP_MAX: Duration = Duration::hours(3);
const DAY_STARTS: u32 = 9;
const DAY_ENDS: u32 = 21;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    InBed,
    Sleeping,
    Awake,
    Light,
    Deep,
    Rem,
    Unknown,
}

impl Stage {
    /// The stage names clients send. HealthKit's "core" is light sleep.
    pub fn parse(s: &str) -> Option<Stage> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "in_bed" | "inbed" | "in bed" => Stage::InBed,
            "sleeping" | "asleep" | "asleep_unspecified" => Stage::Sleeping,
            "awake" => Stage::Awake,
            "light" | "core" | "asleep_core" => Stage::Light,
            "deep" | "asleep_deep" => Stage::Deep,
            "rem" | "asleep_rem" => Stage::Rem,
            "unknown" => Stage::Unknown,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::InBed => "in_bed",
            Stage::Sleeping => "sleeping",
            Stage::Awake => "awake",
            Stage::Light => "light",
            Stage::Deep => "deep",
            Stage::Rem => "rem",
            Stage::Unknown => "unknown",
        }
    }

    fn starts_session(self) -> bool {
        !matches!(self, Stage::Awake | Stage::Unknown)
    }

    fn is_detailed(self) -> bool {
        matches!(self, Stage::Light | Stage::Deep | Stage::Rem)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Interval {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub stage: Stage,
}

/// A session's totals, computed from its raw intervals.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Summary {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub sleep_seconds: i64,
    pub in_bed_seconds: i64,
    pub awake_seconds: i64,
    pub light_minutes: i32,
    pub deep_minutes: i32,
    pub rem_minutes: i32,
    pub awake_minutes: i32,
    pub efficiency_percent: Option<f64>,
    pub is_nap: bool,
    /// The intervals after precedence and clipping.
    pub cleaned: Vec<Interval>,
}

/// Splits one source's intervals into sessions by the gap rule. Intervals are deduplicated and
/// sorted; awake or unknown intervals before any sleep are dropped.
pub(crate) fn split(mut intervals: Vec<Interval>) -> Vec<Vec<Interval>> {
    intervals.sort();
    intervals.dedup();
    let mut sessions: Vec<Vec<Interval>> = Vec::new();
    let mut window: Option<(DateTime<Utc>, DateTime<Utc>)> = None;
    for iv in intervals {
        match window {
            Some((start, end)) if iv.start <= end + GAP && iv.end >= start - GAP => {
                window = Some((start.min(iv.start), end.max(iv.end)));
                if let Some(last) = sessions.last_mut() {
                    last.push(iv);
                }
            }
            _ if iv.stage.starts_session() => {
                window = Some((iv.start, iv.end));
                sessions.push(vec![iv]);
            }
            _ => {}
        }
    }
    sessions
}

fn seconds(d: Duration) -> i64 {
    d.num_seconds().max(0)
}

/// The union length of possibly overlapping intervals.
fn union_seconds(mut spans: Vec<(DateTime<Utc>, DateTime<Utc>)>) -> i64 {
    spans.sort();
    let mut total = 0;
    let mut current: Option<(DateTime<Utc>, DateTime<Utc>)> = None;
    for (s, e) in spans {
        match current {
            Some((cs, ce)) if s <= ce => current = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += seconds(ce - cs);
                current = Some((s, e));
            }
            None => current = Some((s, e)),
        }
    }
    if let Some((cs, ce)) = current {
        total += seconds(ce - cs);
    }
    total
}

/// Applies precedence and clipping to one session's intervals and totals it.
/// `zone_offset` (minutes) decides whether the session starts in the local daytime.
pub(crate) fn summarize(intervals: &[Interval], zone_offset: Option<i16>) -> Option<Summary> {
    let detailed = intervals.iter().any(|i| i.stage.is_detailed());
    let generic = intervals.iter().any(|i| i.stage == Stage::Sleeping);
    let mut kept: Vec<Interval> = intervals
        .iter()
        .filter(|i| i.end > i.start)
        .filter_map(|i| match i.stage {
            Stage::Light | Stage::Deep | Stage::Rem | Stage::Awake if detailed => Some(*i),
            Stage::Sleeping | Stage::Awake if !detailed && generic => Some(*i),
            Stage::Awake if !detailed => Some(*i),
            Stage::InBed if !detailed && !generic => {
                Some(Interval { stage: Stage::Sleeping, ..*i })
            }
            _ => None,
        })
        .collect();
    kept.sort();
    let mut cleaned: Vec<Interval> = Vec::with_capacity(kept.len());
    for mut iv in kept {
        if let Some(prev) = cleaned.last()
            && iv.start < prev.end
        {
            iv.start = prev.end;
        }
        if iv.end > iv.start {
            cleaned.push(iv);
        }
    }
    let start = cleaned.first()?.start;
    let end = cleaned.iter().map(|i| i.end).max()?;
    let total = |stage: Stage| -> i64 {
        cleaned.iter().filter(|i| i.stage == stage).map(|i| seconds(i.end - i.start)).sum()
    };
    let (light, deep, rem, sleeping, awake) = (
        total(Stage::Light),
        total(Stage::Deep),
        total(Stage::Rem),
        total(Stage::Sleeping),
        total(Stage::Awake),
    );
    let sleep = light + deep + rem + sleeping;
    let in_bed_spans: Vec<_> = intervals
        .iter()
        .filter(|i| i.stage == Stage::InBed && i.end > i.start)
        .map(|i| (i.start, i.end))
        .collect();
    let in_bed_union = if in_bed_spans.is_empty() {
        cleaned.iter().map(|i| seconds(i.end - i.start)).sum()
    } else {
        union_seconds(in_bed_spans)
    };
    let in_bed = in_bed_union.max(sleep + awake);
    let efficiency =
        (in_bed > 0).then(|| (sleep as f64 / in_bed as f64 * 100.0 * 100.0).round() / 100.0);
    let local_hour = (start + Duration::minutes(i64::from(zone_offset.unwrap_or(0)))).hour();
    let is_nap = Duration::seconds(sleep) < NAP_MAX && (DAY_STARTS..DAY_ENDS).contains(&local_hour);
    let minutes = |s: i64| i32::try_from(s / 60).unwrap_or(i32::MAX);
    Some(Summary {
        start,
        end,
        sleep_seconds: sleep,
        in_bed_seconds: in_bed,
        awake_seconds: awake,
        light_minutes: minutes(light),
        deep_minutes: minutes(deep),
        rem_minutes: minutes(rem),
        awake_minutes: minutes(awake),
        efficiency_percent: efficiency,
        is_nap,
        cleaned,
    })
}

/// `[{stage, start_time, end_time}]`.
pub(crate) fn to_json(intervals: &[Interval]) -> Value {
    Value::Array(
        intervals
            .iter()
            .map(|i| json!({"stage": i.stage.as_str(), "start_time": i.start, "end_time": i.end}))
            .collect(),
    )
}

/// Reads what `to_json` wrote; entries it cannot read are skipped.
pub(crate) fn from_json(v: &Value) -> Vec<Interval> {
    let Some(items) = v.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|i| {
            let stage = Stage::parse(i.get("stage")?.as_str()?)?;
            let start = i.get("start_time")?.as_str()?.parse().ok()?;
            let end = i.get("end_time")?.as_str()?.parse().ok()?;
            Some(Interval { start, end, stage })
        })
        .collect()
}

/// The stage intervals of one sleep session of one source, as split by the gap rule.
#[derive(Debug, Clone, PartialEq)]
pub struct SleepSession {
    /// The batch's index of the session's data source.
    pub source: usize,
    pub intervals: Vec<Interval>,
    pub zone_offset: Option<i16>,
    pub external_id: Option<String>,
}

/// One accepted stage item, kept until the batch's items are grouped into sessions.
pub(crate) struct StageItem {
    pub source: usize,
    pub interval: Interval,
    pub zone_offset: Option<i16>,
    pub id: Option<String>,
    pub parent_id: Option<String>,
}

/// Groups the batch's stage items by source and splits each source's items into sessions.
pub(crate) fn sessions(items: Vec<StageItem>) -> Vec<SleepSession> {
    let mut out = Vec::new();
    let mut by_source: BTreeMap<usize, Vec<StageItem>> = BTreeMap::new();
    for it in items {
        by_source.entry(it.source).or_default().push(it);
    }
    for (source, items) in by_source {
        let intervals: Vec<Interval> = items.iter().map(|i| i.interval).collect();
        for session in split(intervals) {
            let members: Vec<&StageItem> =
                items.iter().filter(|i| session.contains(&i.interval)).collect();
            let zone_offset = members.iter().find_map(|i| i.zone_offset);
            // The client's session id (Health Connect and Samsung send stages under a parent),
            // else the first stage's id.
            let external_id = members
                .iter()
                .find_map(|i| i.parent_id.clone())
                .or_else(|| members.iter().find_map(|i| i.id.clone()));
            out.push(SleepSession { source, intervals: session, zone_offset, external_id });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(h: i64, m: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_767_225_600 + h * 3600 + m * 60, 0).unwrap_or_default() // 2026-01-01
    }

    fn iv(stage: Stage, from: (i64, i64), to: (i64, i64)) -> Interval {
        Interval { start: t(from.0, from.1), end: t(to.0, to.1), stage }
    }

    #[test]
    fn old_watch_sleeping_and_in_bed() {
        // In bed 22:30–07:00, asleep 23:00–03:00 and 03:20–06:40, awake 03:00–03:20.
        let raw = vec![
            iv(Stage::InBed, (22, 30), (31, 0)),
            iv(Stage::Sleeping, (23, 0), (27, 0)),
            iv(Stage::Awake, (27, 0), (27, 20)),
            iv(Stage::Sleeping, (27, 20), (30, 40)),
        ];
        let sessions = split(raw);
        assert_eq!(sessions.len(), 1);
        let s = summarize(&sessions[0], Some(60)).unwrap_or_else(|| panic!("a session"));
        assert_eq!(s.sleep_seconds, (4 * 60 + 3 * 60 + 20) * 60);
        assert_eq!(s.in_bed_seconds, (8 * 60 + 30) * 60);
        assert_eq!(s.awake_minutes, 20);
        assert_eq!((s.start, s.end), (t(23, 0), t(30, 40)));
        assert_eq!(s.efficiency_percent, Some(86.27));
        assert!(!s.is_nap);
    }

    #[test]
    fn detailed_stages_win_over_generic_ones() {
        let raw = vec![
            iv(Stage::InBed, (22, 0), (30, 0)),
            iv(Stage::Sleeping, (22, 10), (29, 50)),
            iv(Stage::Light, (22, 15), (24, 0)),
            iv(Stage::Deep, (24, 0), (25, 0)),
            iv(Stage::Rem, (24, 50), (26, 0)), // overlaps deep: clipped to 25:00
            iv(Stage::Awake, (26, 0), (26, 10)),
            iv(Stage::Light, (26, 10), (29, 0)),
        ];
        let s = summarize(&split(raw)[0], None).unwrap_or_else(|| panic!("a session"));
        assert_eq!(s.deep_minutes, 60);
        assert_eq!(s.rem_minutes, 60);
        assert_eq!(s.light_minutes, 105 + 170);
        assert_eq!(s.awake_minutes, 10);
        assert_eq!(s.sleep_seconds, (60 + 60 + 105 + 170) * 60);
        assert_eq!(s.in_bed_seconds, 8 * 3600);
        assert!(s.cleaned.iter().all(|i| i.stage != Stage::Sleeping && i.stage != Stage::InBed));
        assert_eq!((s.start, s.end), (t(22, 15), t(29, 0)));
    }

    #[test]
    fn gaps_split_and_naps_are_marked() {
        let raw = vec![
            iv(Stage::Awake, (20, 0), (20, 30)), // awake before any sleep: ignored
            iv(Stage::Light, (23, 0), (30, 0)),
            iv(Stage::Light, (37, 0), (37, 40)), // 13:00–13:40 next day: a nap
        ];
        let sessions = split(raw);
        assert_eq!(sessions.len(), 2);
        let night = summarize(&sessions[0], Some(0)).unwrap_or_else(|| panic!("night"));
        let nap = summarize(&sessions[1], Some(0)).unwrap_or_else(|| panic!("nap"));
        assert!(!night.is_nap);
        assert!(nap.is_nap);
        // A gap of exactly two hours keeps one session.
        assert_eq!(
            split(vec![iv(Stage::Deep, (1, 0), (2, 0)), iv(Stage::Deep, (4, 0), (5, 0))]).len(),
            1
        );
    }

    #[test]
    fn only_in_bed_counts_as_sleep() {
        let s = summarize(&[iv(Stage::InBed, (23, 0), (31, 0))], None)
            .unwrap_or_else(|| panic!("a session"));
        assert_eq!(s.sleep_seconds, 8 * 3600);
        assert_eq!(s.efficiency_percent, Some(100.0));
    }

    #[test]
    fn stage_names_and_json_round_trip() {
        assert_eq!(Stage::parse("core"), Some(Stage::Light));
        assert_eq!(Stage::parse("inBed"), Some(Stage::InBed));
        assert_eq!(Stage::parse("REM"), Some(Stage::Rem));
        assert_eq!(Stage::parse("napping"), None);
        let ivs = vec![iv(Stage::Deep, (1, 0), (2, 0)), iv(Stage::Awake, (2, 0), (2, 5))];
        assert_eq!(from_json(&to_json(&ivs)), ivs);
    }
}
