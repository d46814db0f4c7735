//! Nights: which sessions count, which day they belong to, and what a day's sleep adds up to.
//!
//! - A session belongs to the local day it ends on (the day one wakes up).
//! - A night recorded by two sources counts once: of two sessions from different sources
//!   overlapping by at least half of the shorter one, the better-ranked source's is kept. The
//!   rule is the sessions' one, applied when they are read (`schema::summaries::sleep_ending`,
//!   `schema/queries/events_dedup.sql`), so the summaries and the event lists agree. A night
//!   from one source and a nap from another both count.
//! - The longest night session stands for the night: its source, offset and id.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use schema::sessions::Sleep;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::series;
use crate::series::SeriesId;
use crate::{SourceOut, Sources, midnight, round1};

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct StageMinutes {
    pub awake: i64,
    pub light: i64,
    pub deep: i64,
    pub rem: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SessionBrief {
    pub id: Uuid,
    pub start_time: String,
    pub end_time: String,
    pub zone_offset: Option<String>,
    pub duration_minutes: i64,
    pub is_nap: bool,
    pub source: SourceOut,
}

/// One local day's sleep, as `summaries/sleep` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SleepDay {
    /// The local date of waking up.
    pub date: NaiveDate,
    /// The source of the longest night session.
    pub source: Option<SourceOut>,
    /// First fall asleep and last wake-up of the night (naps aside).
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub zone_offset: Option<String>,
    /// Time asleep at night, naps aside.
    pub duration_minutes: i64,
    /// Time asleep, naps included.
    pub total_duration_minutes: i64,
    pub time_in_bed_minutes: Option<i64>,
    pub efficiency_percent: Option<f64>,
    pub stages: Option<StageMinutes>,
    /// Awake intervals within the night.
    pub interruptions_count: Option<i64>,
    pub nap_count: i64,
    pub nap_duration_minutes: i64,
    pub sessions: Vec<SessionBrief>,
    /// Means of the night's samples, any source.
    pub avg_heart_rate_bpm: Option<f64>,
    pub avg_hrv_sdnn_ms: Option<f64>,
    pub avg_hrv_rmssd_ms: Option<f64>,
    pub avg_respiratory_rate: Option<f64>,
    pub avg_spo2_percent: Option<f64>,
}

/// Seconds asleep: the session's own figure, else its length.
fn asleep(s: &Sleep) -> i64 {
    i64::from(s.sleep_seconds.unwrap_or(s.duration_seconds))
}

/// The window of session ends to read for the wake-up days `[first, last]`: local days lie
/// within 14 hours of UTC days.
pub fn read_window(first: NaiveDate, last: NaiveDate) -> (DateTime<Utc>, DateTime<Utc>) {
    (midnight(first) - Duration::hours(15), midnight(last) + Duration::hours(39))
}

/// The sessions (duplicates already resolved) of each wake-up day, within `[first, last]` when
/// given. The wake-up day comes with each session from the database (`local_day`, migration
/// V10): the same rule that puts samples on their local day.
pub fn nights(
    sessions: Vec<(NaiveDate, Sleep)>,
    days: Option<(NaiveDate, NaiveDate)>,
) -> BTreeMap<NaiveDate, Vec<Sleep>> {
    let mut out: BTreeMap<NaiveDate, Vec<Sleep>> = BTreeMap::new();
    for (d, s) in sessions {
        if days.is_none_or(|(first, last)| d >= first && d <= last) {
            out.entry(d).or_default().push(s);
        }
    }
    out
}

/// The longest night (non-nap) session of a day, the one that stands for the night.
pub(crate) fn longest_night(sessions: &[Sleep]) -> Option<&Sleep> {
    sessions.iter().filter(|s| !s.is_nap).max_by_key(|s| (asleep(s), s.end_time))
}

/// An interval `[start, end)`.
pub type Span = (DateTime<Utc>, DateTime<Utc>);

/// The night's span of a day: first start to last end of its non-nap sessions.
pub fn night_span(sessions: &[Sleep]) -> Option<Span> {
    let nights = sessions.iter().filter(|s| !s.is_nap);
    let start = nights.clone().map(|s| s.start_time).min()?;
    let end = nights.map(|s| s.end_time).max()?;
    Some((start, end))
}

/// The night's and naps' figures of one day (physiology: see [`add_physiology`]).
pub fn day(date: NaiveDate, sessions: &[Sleep], sources: &Sources) -> SleepDay {
    let nights: Vec<&Sleep> = sessions.iter().filter(|s| !s.is_nap).collect();
    let naps: Vec<&Sleep> = sessions.iter().filter(|s| s.is_nap).collect();
    let longest = longest_night(sessions);
    let night_sleep: i64 = nights.iter().map(|s| asleep(s)).sum();
    let nap_sleep: i64 = naps.iter().map(|s| asleep(s)).sum();
    let in_bed: Option<i64> = nights.iter().map(|s| s.in_bed_seconds.map(i64::from)).sum();
    let minutes = |f: fn(&Sleep) -> Option<i32>| -> i64 {
        nights.iter().filter_map(|s| f(s)).map(i64::from).sum()
    };
    let has_stages = nights.iter().any(|s| s.deep_minutes.is_some() || s.light_minutes.is_some());
    let interruptions = nights
        .iter()
        .map(|s| {
            // A night given as totals alone has no timeline: how often one woke is unknown.
            s.stages
                .as_array()
                .filter(|a| !a.is_empty())
                .map(|a| a.iter().filter(|i| i["stage"] == "awake").count() as i64)
        })
        .sum::<Option<i64>>();
    let span = night_span(sessions);
    let offset = longest.and_then(|s| s.zone_offset);
    SleepDay {
        date,
        source: longest.map(|s| sources.get(s.data_source_id)),
        start_time: span.map(|(t, _)| schema::zone::local_time(t, offset)),
        end_time: span.map(|(_, t)| schema::zone::local_time(t, offset)),
        zone_offset: offset.map(schema::zone::format),
        duration_minutes: night_sleep / 60,
        total_duration_minutes: (night_sleep + nap_sleep) / 60,
        time_in_bed_minutes: in_bed.filter(|_| !nights.is_empty()).map(|s| s / 60),
        efficiency_percent: in_bed
            .filter(|b| *b > 0)
            .map(|b| round1(night_sleep as f64 * 100.0 / b as f64)),
        stages: has_stages.then(|| StageMinutes {
            awake: minutes(|s| s.awake_minutes),
            light: minutes(|s| s.light_minutes),
            deep: minutes(|s| s.deep_minutes),
            rem: minutes(|s| s.rem_minutes),
        }),
        interruptions_count: interruptions.filter(|_| !nights.is_empty()),
        nap_count: naps.len() as i64,
        nap_duration_minutes: nap_sleep / 60,
        sessions: sessions
            .iter()
            .map(|s| SessionBrief {
                id: s.id,
                start_time: schema::zone::local_time(s.start_time, s.zone_offset),
                end_time: schema::zone::local_time(s.end_time, s.zone_offset),
                zone_offset: s.zone_offset.map(schema::zone::format),
                duration_minutes: asleep(s) / 60,
                is_nap: s.is_nap,
                source: sources.get(s.data_source_id),
            })
            .collect(),
        avg_heart_rate_bpm: None,
        avg_hrv_sdnn_ms: None,
        avg_hrv_rmssd_ms: None,
        avg_respiratory_rate: None,
        avg_spo2_percent: None,
    }
}

/// The series whose means over the night a sleep day reports.
pub const PHYSIOLOGY: [SeriesId; 5] = [
    series::HEART_RATE,
    series::HRV_SDNN,
    series::HRV_RMSSD,
    series::RESPIRATORY_RATE,
    series::OXYGEN_SATURATION,
];

/// Records a series' mean over the night (one of [`PHYSIOLOGY`]; others are ignored).
pub fn add_physiology(day: &mut SleepDay, series_id: SeriesId, mean: f64) {
    let v = Some(round1(mean));
    match series_id {
        series::HEART_RATE => day.avg_heart_rate_bpm = v,
        series::HRV_SDNN => day.avg_hrv_sdnn_ms = v,
        series::HRV_RMSSD => day.avg_hrv_rmssd_ms = v,
        series::RESPIRATORY_RATE => day.avg_respiratory_rate = v,
        series::OXYGEN_SATURATION => day.avg_spo2_percent = v,
        _ => {}
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::json;

    use super::*;
    use crate::ranking::tests::source;

    pub(crate) fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|d| d.with_timezone(&Utc)).unwrap_or_default()
    }

    /// A session of `source` from `start` to `end` (UTC), asleep for all of it but `awake_min`.
    pub(crate) fn session(id: u128, source: u128, start: &str, end: &str, awake_min: i32) -> Sleep {
        let (start_time, end_time) = (at(start), at(end));
        let length = (end_time - start_time).num_seconds() as i32;
        Sleep {
            id: Uuid::from_u128(id),
            data_source_id: Uuid::from_u128(source),
            start_time,
            end_time,
            zone_offset: Some(-480),
            duration_seconds: length,
            sleep_seconds: Some(length - awake_min * 60),
            in_bed_seconds: Some(length),
            deep_minutes: Some(60),
            rem_minutes: Some(90),
            light_minutes: Some(200),
            awake_minutes: Some(awake_min),
            efficiency_percent: None,
            is_nap: false,
            stages: json!([{"stage": "awake"}, {"stage": "deep"}, {"stage": "awake"}]),
        }
    }

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap_or_default()
    }

    fn ranking() -> crate::Ranking {
        crate::Ranking::new(vec![(source(1, "apple"), 1), (source(2, "oura"), 2)])
    }

    #[test]
    fn a_day_adds_up_its_night_and_naps() {
        let sources = Sources::new(&ranking().sources);
        let night = session(1, 1, "2026-03-11T07:00:00Z", "2026-03-11T15:00:00Z", 30);
        let nap = Sleep {
            is_nap: true,
            ..session(2, 2, "2026-03-11T22:00:00Z", "2026-03-11T22:40:00Z", 0)
        };
        let day = day(d("2026-03-11"), &[night, nap], &sources);
        assert_eq!(day.duration_minutes, 450, "8 h in bed, 30 min awake");
        assert_eq!(day.total_duration_minutes, 490);
        assert_eq!(day.time_in_bed_minutes, Some(480));
        assert_eq!(day.efficiency_percent, Some(93.8));
        assert_eq!(day.stages, Some(StageMinutes { awake: 30, light: 200, deep: 60, rem: 90 }));
        assert_eq!(day.interruptions_count, Some(2));
        assert_eq!((day.nap_count, day.nap_duration_minutes), (1, 40));
        assert_eq!(day.start_time.as_deref(), Some("2026-03-10T23:00:00-08:00"));
        assert_eq!(day.end_time.as_deref(), Some("2026-03-11T07:00:00-08:00"));
        assert_eq!(day.source.map(|s| s.provider), Some("apple".into()));
        assert_eq!(day.sessions.len(), 2);
    }

    #[test]
    fn nights_group_by_wake_day_within_the_window() {
        let sessions = vec![
            (d("2026-03-10"), session(1, 1, "2026-03-10T07:00:00Z", "2026-03-10T15:00:00Z", 0)),
            (d("2026-03-11"), session(2, 1, "2026-03-11T07:00:00Z", "2026-03-11T15:00:00Z", 0)),
            (d("2026-03-12"), session(3, 1, "2026-03-12T07:00:00Z", "2026-03-12T15:00:00Z", 0)),
        ];
        let n = nights(sessions, Some((d("2026-03-11"), d("2026-03-12"))));
        assert_eq!(n.keys().copied().collect::<Vec<_>>(), [d("2026-03-11"), d("2026-03-12")]);
        let (from, to) = read_window(d("2026-03-11"), d("2026-03-12"));
        assert_eq!((from, to), (at("2026-03-10T09:00:00Z"), at("2026-03-13T15:00:00Z")));
    }

    #[test]
    fn the_longest_session_stands_for_the_night() {
        let short = session(1, 1, "2026-03-11T03:00:00Z", "2026-03-11T05:00:00Z", 0);
        let long = session(2, 2, "2026-03-11T07:00:00Z", "2026-03-11T15:00:00Z", 0);
        let nap = Sleep {
            is_nap: true,
            ..session(3, 1, "2026-03-10T07:00:00Z", "2026-03-11T16:00:00Z", 0)
        };
        let all = [short, long, nap];
        assert_eq!(longest_night(&all).map(|s| s.id), Some(Uuid::from_u128(2)));
        assert_eq!(
            night_span(&all),
            Some((at("2026-03-11T03:00:00Z"), at("2026-03-11T15:00:00Z")))
        );
        let mut day = day(d("2026-03-11"), &all, &Sources::default());
        add_physiology(&mut day, series::HEART_RATE, 55.55);
        add_physiology(&mut day, series::STEPS, 1.0);
        assert_eq!(day.avg_heart_rate_bpm, Some(55.6));
    }
}
