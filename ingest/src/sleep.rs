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
//! - Stage minutes are known only where stages are: a session with no stage (generic sleep or
//!   time in bed alone) has none, not zeros.
//!
//! A cloud vendor's night is a record of its own ([`VendorNight`]): its documented start and end
//! bound the session, its stage totals are kept whether or not a timeline comes with them (no
//! order is invented for totals alone), and its own nap flag decides.

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

/// A night's stage totals as a vendor documents them, in seconds (`None`: not given).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StageTotals {
    pub light: Option<i64>,
    pub deep: Option<i64>,
    pub rem: Option<i64>,
    pub awake: Option<i64>,
    /// Time asleep where the vendor gives it whole (else light + deep + REM).
    pub asleep: Option<i64>,
}

impl StageTotals {
    /// Time asleep: as given, else the sum of the sleep stages given.
    fn asleep(&self) -> Option<i64> {
        let stages = [self.light, self.deep, self.rem];
        self.asleep
            .or_else(|| stages.iter().any(Option::is_some).then(|| stages.iter().flatten().sum()))
    }

    fn any_stage(&self) -> bool {
        [self.light, self.deep, self.rem, self.awake].iter().any(Option::is_some)
    }
}

/// What a cloud vendor documents of one night (or nap) besides any stage timeline: the
/// session's bounds, its stage totals, its time in bed and whether it is a nap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VendorNight {
    /// The record's own start and end (a vendor's `start`/`end`, `bedtime_start`/`bedtime_end`).
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    #[serde(default)]
    pub totals: StageTotals,
    /// Time in bed in seconds, where given apart from the bounds.
    #[serde(default)]
    pub in_bed: Option<i64>,
    /// The vendor's own word on whether it is a nap.
    #[serde(default)]
    pub is_nap: Option<bool>,
    /// Its timeline comes in parts (Withings' segments, read a day a call, a pull's window
    /// apart from the night's): the intervals stored for it are kept beside those that come.
    #[serde(default)]
    pub partial_timeline: bool,
}

impl VendorNight {
    /// A night between `start` and `end`, nothing else said yet.
    pub fn new(start: DateTime<Utc>, end: DateTime<Utc>) -> VendorNight {
        VendorNight {
            start,
            end,
            totals: StageTotals::default(),
            in_bed: None,
            is_nap: None,
            partial_timeline: false,
        }
    }
}

/// A session's totals, computed from its raw intervals (and what its vendor says of it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Summary {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub sleep_seconds: i64,
    pub in_bed_seconds: i64,
    pub awake_seconds: i64,
    /// `None`: the session has no such stage information.
    pub light_minutes: Option<i32>,
    pub deep_minutes: Option<i32>,
    pub rem_minutes: Option<i32>,
    pub awake_minutes: Option<i32>,
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

/// Applies precedence and clipping to one session's intervals and totals it, with what its
/// vendor documents (`vendor`: its bounds, stage totals, time in bed and nap flag win over what
/// the intervals imply). `zone_offset` (minutes) decides whether the session starts in the
/// local daytime.
pub(crate) fn summarize(
    intervals: &[Interval],
    zone_offset: Option<i16>,
    vendor: Option<&VendorNight>,
) -> Option<Summary> {
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
        // A vendor's bounds hold its stages.
        if let Some(v) = vendor {
            iv.start = iv.start.max(v.start);
            iv.end = iv.end.min(v.end);
        }
        if iv.end > iv.start {
            cleaned.push(iv);
        }
    }
    let (start, end) = match vendor {
        Some(v) if v.end > v.start => (v.start, v.end),
        _ => (cleaned.first()?.start, cleaned.iter().map(|i| i.end).max()?),
    };
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
    let totals = vendor.map(|v| v.totals).unwrap_or_default();
    // What the timeline says of each stage, where it has stages at all.
    let timeline = |secs: i64| detailed.then_some(secs);
    let light = totals.light.or(timeline(light));
    let deep = totals.deep.or(timeline(deep));
    let rem = totals.rem.or(timeline(rem));
    let has_awake = detailed || cleaned.iter().any(|i| i.stage == Stage::Awake);
    let awake = totals.awake.or(has_awake.then_some(awake));
    let from_timeline =
        if detailed { light.unwrap_or(0) + deep.unwrap_or(0) + rem.unwrap_or(0) } else { sleeping };
    // A vendor's totals without a timeline: no interval is made up, the totals stand.
    let without_timeline = cleaned.is_empty() && !totals.any_stage() && totals.asleep.is_none();
    let sleep = match totals.asleep() {
        Some(asleep) => asleep,
        None if without_timeline => seconds(end - start),
        None => from_timeline,
    };
    let in_bed_spans: Vec<_> = intervals
        .iter()
        .filter(|i| i.stage == Stage::InBed && i.end > i.start)
        .map(|i| (i.start, i.end))
        .collect();
    let in_bed_union = match vendor {
        // Its documented time in bed, within its bounds, else its bounds.
        Some(v) => v.in_bed.unwrap_or(seconds(end - start)).min(seconds(end - start)),
        None if in_bed_spans.is_empty() => cleaned.iter().map(|i| seconds(i.end - i.start)).sum(),
        None => union_seconds(in_bed_spans),
    };
    let awake_seconds = awake.unwrap_or(0);
    let in_bed = match vendor {
        // Within its own bounds, whatever its parts add up to.
        Some(_) => in_bed_union.max(sleep.min(seconds(end - start))),
        None => in_bed_union.max(sleep + awake_seconds),
    };
    let efficiency =
        (in_bed > 0).then(|| (sleep as f64 / in_bed as f64 * 100.0 * 100.0).round() / 100.0);
    let local_hour = (start + Duration::minutes(i64::from(zone_offset.unwrap_or(0)))).hour();
    let guessed_nap =
        Duration::seconds(sleep) < NAP_MAX && (DAY_STARTS..DAY_ENDS).contains(&local_hour);
    let is_nap = vendor.and_then(|v| v.is_nap).unwrap_or(guessed_nap);
    let minutes = |s: Option<i64>| s.map(|s| i32::try_from(s.max(0) / 60).unwrap_or(i32::MAX));
    Some(Summary {
        start,
        end,
        sleep_seconds: sleep,
        in_bed_seconds: in_bed,
        awake_seconds,
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

/// A vendor's night as received, kept to tell a repeat from a change (and, for a partial
/// timeline, to join the parts that come later): `{intervals, vendor}`.
pub(crate) fn night_json(intervals: &[Interval], vendor: &VendorNight) -> Value {
    json!({"intervals": to_json(intervals), "vendor": vendor})
}

/// Reads what `to_json` (or `night_json`) wrote; entries it cannot read are skipped.
pub(crate) fn from_json(v: &Value) -> Vec<Interval> {
    let v = v.get("intervals").unwrap_or(v);
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

/// The stage intervals of one sleep session of one source, as split by the gap rule, or as a
/// vendor sends one night.
#[derive(Debug, Clone, PartialEq)]
pub struct SleepSession {
    /// The batch's index of the session's data source.
    pub source: usize,
    pub intervals: Vec<Interval>,
    pub zone_offset: Option<i16>,
    pub external_id: Option<String>,
    /// What a cloud vendor documents of the night. Such a session is stored as it is, replacing
    /// the stored one of its id, never merged with its neighbours.
    pub vendor: Option<VendorNight>,
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
            out.push(SleepSession {
                source,
                intervals: session,
                zone_offset,
                external_id,
                vendor: None,
            });
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
        let s = summarize(&sessions[0], Some(60), None).unwrap_or_else(|| panic!("a session"));
        assert_eq!(s.sleep_seconds, (4 * 60 + 3 * 60 + 20) * 60);
        assert_eq!(s.in_bed_seconds, (8 * 60 + 30) * 60);
        assert_eq!(s.awake_minutes, Some(20));
        assert_eq!(
            (s.light_minutes, s.deep_minutes, s.rem_minutes),
            (None, None, None),
            "no stages"
        );
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
        let s = summarize(&split(raw)[0], None, None).unwrap_or_else(|| panic!("a session"));
        assert_eq!(s.deep_minutes, Some(60));
        assert_eq!(s.rem_minutes, Some(60));
        assert_eq!(s.light_minutes, Some(105 + 170));
        assert_eq!(s.awake_minutes, Some(10));
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
        let night = summarize(&sessions[0], Some(0), None).unwrap_or_else(|| panic!("night"));
        let nap = summarize(&sessions[1], Some(0), None).unwrap_or_else(|| panic!("nap"));
        assert!(!night.is_nap);
        assert!(nap.is_nap);
        // A gap of exactly two hours keeps one session.
        assert_eq!(
            split(vec![iv(Stage::Deep, (1, 0), (2, 0)), iv(Stage::Deep, (4, 0), (5, 0))]).len(),
            1
        );
    }

    /// WHOOP's documented night (`docs/vendors/audit/whoop.md` §4a): its bounds, its stage
    /// totals and no timeline; time in bed within the bounds.
    #[test]
    fn a_vendors_night_is_its_bounds_and_totals() {
        let (start, end) = (t(2, 25), t(10, 25));
        let night = VendorNight {
            totals: StageTotals {
                light: Some(14905),
                deep: Some(6630),
                rem: Some(5879),
                awake: Some(1403),
                asleep: Some(27415),
            },
            in_bed: Some(30272),
            is_nap: Some(false),
            ..VendorNight::new(start, end)
        };
        let s = summarize(&[], Some(-300), Some(&night)).unwrap_or_else(|| panic!("a night"));
        assert_eq!((s.start, s.end), (start, end));
        assert!(s.cleaned.is_empty(), "no timeline made up");
        let minutes = (s.light_minutes, s.deep_minutes, s.rem_minutes, s.awake_minutes);
        assert_eq!(minutes, (Some(248), Some(110), Some(97), Some(23)));
        assert_eq!((s.sleep_seconds, s.in_bed_seconds), (27415, 8 * 3600));
        assert_eq!(s.efficiency_percent, Some(95.19));
        assert!(!s.is_nap);

        // A timeline with its totals: the stages kept in order, the minutes the vendor's.
        let timeline = [iv(Stage::Deep, (2, 30), (4, 0)), iv(Stage::Light, (4, 0), (10, 0))];
        let s = summarize(&timeline, Some(-300), Some(&night)).unwrap_or_else(|| panic!("night"));
        assert_eq!(s.cleaned.len(), 2);
        assert_eq!((s.deep_minutes, s.light_minutes), (Some(110), Some(248)));
        assert_eq!((s.start, s.end), (start, end));

        // Bounds alone (an unscored record): asleep the whole time, no stage known.
        let bare = VendorNight::new(t(13, 0), t(13, 40));
        let s = summarize(&[], Some(0), Some(&bare)).unwrap_or_else(|| panic!("a nap"));
        assert_eq!((s.sleep_seconds, s.deep_minutes, s.awake_minutes), (2400, None, None));
        assert!(s.is_nap, "a short daytime sleep, nothing said: a nap");
        let said = VendorNight { is_nap: Some(false), ..bare };
        let s = summarize(&[], Some(0), Some(&said)).unwrap_or_else(|| panic!("a night"));
        assert!(!s.is_nap, "the vendor's word wins");
    }

    #[test]
    fn only_in_bed_counts_as_sleep() {
        let s = summarize(&[iv(Stage::InBed, (23, 0), (31, 0))], None, None)
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
