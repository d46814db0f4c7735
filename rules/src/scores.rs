//! Health scores: vendor scores stored as samples (`recovery_score`, Garmin's body battery and
//! stress level), and a sleep score computed for every night of every user from the sleep
//! sessions (provider `internal`), so it exists whatever device a user wears. Nights recorded by
//! two sources count once, by the rule of [`crate::sleep`].
//!
//! The sleep score (0–100) weighs, over the night's sessions (naps aside):
//! - duration (0.50): time asleep against 8 hours, capped at 100;
//! - efficiency (0.25): time asleep over time in bed, 60 % scoring 0 and 95 % and above 100;
//! - restoration (0.25): deep + REM sleep over time asleep, 40 % and above scoring 100.
//!
//! Components without data are left out and the others' weights rescaled.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schema::ids::UserId;
use schema::sessions::Sleep;
use schema::summaries::Reading;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::series::SeriesId;
use crate::sleep::{SleepDay, day, longest_night, night_span};
use crate::{Ranking, Sources, round1, series};

/// The categories a score is listed under.
pub const CATEGORIES: &[&str] = &[
    "sleep",
    "recovery",
    "readiness",
    "activity",
    "stress",
    "resilience",
    "body_battery",
    "strain",
];

/// Vendor score series and the category each is listed under.
pub const VENDOR_SERIES: &[(SeriesId, &str)] = &[
    (series::RECOVERY_SCORE, "recovery"),
    (series::BODY_BATTERY, "body_battery"),
    (series::STRESS_LEVEL, "stress"),
];

/// The provider of the scores wearhouse computes.
pub const INTERNAL: &str = "internal";

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Component {
    pub value: f64,
    pub qualifier: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HealthScore {
    /// Stable: derived from what the score is of, so the same score keeps its id.
    pub id: Uuid,
    pub category: &'static str,
    pub value: Option<f64>,
    pub qualifier: Option<&'static str>,
    /// Local time with the zone offset.
    pub recorded_at: String,
    pub zone_offset: Option<String>,
    pub components: Option<BTreeMap<&'static str, Component>>,
    pub data_source_id: Uuid,
    pub provider: String,
    /// When the score was recorded (the list's order).
    #[serde(skip)]
    pub at: DateTime<Utc>,
}

/// Words for a 0–100 score.
pub fn qualifier(score: f64) -> &'static str {
    match score {
        s if s >= 85.0 => "excellent",
        s if s >= 70.0 => "good",
        s if s >= 50.0 => "fair",
        _ => "poor",
    }
}

/// The sleep score of one wake-up day and its components; `None` without night sleep.
pub fn sleep_score(night: &SleepDay) -> Option<(f64, Vec<(&'static str, f64)>)> {
    if night.duration_minutes <= 0 {
        return None;
    }
    let clamp = |v: f64| v.clamp(0.0, 100.0);
    let asleep = night.duration_minutes as f64;
    let mut parts = vec![("duration", clamp(asleep / 480.0 * 100.0), 0.50)];
    if let Some(e) = night.efficiency_percent {
        parts.push(("efficiency", clamp((e - 60.0) / 35.0 * 100.0), 0.25));
    }
    if let Some(s) = &night.stages {
        let restorative = (s.deep + s.rem) as f64 / asleep;
        parts.push(("restoration", clamp(restorative / 0.40 * 100.0), 0.25));
    }
    let weight: f64 = parts.iter().map(|(_, _, w)| w).sum();
    let score = parts.iter().map(|(_, v, w)| v * w).sum::<f64>() / weight;
    Some((score.round(), parts.into_iter().map(|(n, v, _)| (n, round1(v))).collect()))
}

/// The sleep scores of resolved nights (by wake-up day).
pub fn sleep_scores(
    nights: &BTreeMap<chrono::NaiveDate, Vec<Sleep>>,
    sources: &Sources,
) -> Vec<HealthScore> {
    let mut out = Vec::new();
    for (date, sessions) in nights {
        let night = day(*date, sessions, sources);
        let Some((score, components)) = sleep_score(&night) else { continue };
        // The night's longest session stands for it: its id, source and offset; the score is
        // recorded at the night's last wake-up.
        let (Some(main), Some((_, end))) = (longest_night(sessions), night_span(sessions)) else {
            continue;
        };
        let components = components
            .into_iter()
            .map(|(n, v)| (n, Component { value: v, qualifier: qualifier(v) }))
            .collect();
        out.push(HealthScore {
            id: Uuid::new_v5(&main.id, b"sleep-score"),
            category: "sleep",
            value: Some(score),
            qualifier: Some(qualifier(score)),
            recorded_at: schema::zone::local_time(end, main.zone_offset),
            zone_offset: main.zone_offset.map(schema::zone::format),
            components: Some(components),
            data_source_id: main.data_source_id,
            provider: INTERNAL.into(),
            at: end,
        });
    }
    out
}

/// A vendor's score reading as a health score; `None` for a series that is not a score.
pub fn vendor_score(
    user_id: UserId,
    series_id: SeriesId,
    r: &Reading,
    ranking: &Ranking,
) -> Option<HealthScore> {
    let category = VENDOR_SERIES.iter().find(|(s, _)| *s == series_id).map(|(_, c)| *c)?;
    let key = format!("{series_id}|{}|{}", r.data_source_id, r.ts.timestamp_micros());
    Some(HealthScore {
        id: Uuid::new_v5(&user_id.0, key.as_bytes()),
        category,
        value: Some(r.value),
        qualifier: None,
        recorded_at: schema::zone::local_time(r.ts, r.zone_offset),
        zone_offset: r.zone_offset.map(schema::zone::format),
        components: None,
        data_source_id: r.data_source_id,
        provider: ranking.provider_of(r.data_source_id).unwrap_or_default().to_string(),
        at: r.ts,
    })
}

/// Newest first; ties by id, so pages are stable.
pub fn newest_first(scores: &mut [HealthScore]) {
    scores.sort_by(|a, b| b.at.cmp(&a.at).then(a.id.cmp(&b.id)));
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::*;
    use crate::ranking::tests::source;
    use crate::sleep::StageMinutes;
    use crate::sleep::tests::{at, session};

    fn night(minutes: i64, efficiency: Option<f64>, stages: Option<(i64, i64)>) -> SleepDay {
        SleepDay {
            date: NaiveDate::default(),
            source: None,
            start_time: None,
            end_time: None,
            zone_offset: None,
            duration_minutes: minutes,
            total_duration_minutes: minutes,
            time_in_bed_minutes: None,
            efficiency_percent: efficiency,
            stages: stages.map(|(deep, rem)| StageMinutes { awake: 0, light: 0, deep, rem }),
            interruptions_count: None,
            nap_count: 0,
            nap_duration_minutes: 0,
            sessions: Vec::new(),
            avg_heart_rate_bpm: None,
            avg_hrv_sdnn_ms: None,
            avg_hrv_rmssd_ms: None,
            avg_respiratory_rate: None,
            avg_spo2_percent: None,
        }
    }

    #[test]
    fn sleep_score_weighs_its_parts() {
        // 6 h asleep: duration 75; efficiency 88 %: 80; deep+rem 144 of 360 min = 40 %: 100.
        let (score, parts) =
            sleep_score(&night(360, Some(88.0), Some((72, 72)))).unwrap_or_default();
        assert_eq!(score, (0.5f64 * 75.0 + 0.25 * 80.0 + 0.25 * 100.0).round());
        assert_eq!(parts, vec![("duration", 75.0), ("efficiency", 80.0), ("restoration", 100.0)]);
        // Duration alone: its weight is rescaled to all.
        assert_eq!(sleep_score(&night(600, None, None)).map(|s| s.0), Some(100.0));
        assert_eq!(sleep_score(&night(0, Some(90.0), None)), None);
    }

    #[test]
    fn qualifiers() {
        assert_eq!([90.0, 75.0, 55.0, 10.0].map(qualifier), ["excellent", "good", "fair", "poor"]);
    }

    #[test]
    fn every_night_gets_a_stable_scored_id_and_vendor_scores_keep_their_source() {
        let ranking = Ranking::new(vec![(source(1, "apple"), 1), (source(2, "garmin"), 2)]);
        let sources = Sources::new(&ranking.sources);
        let s = session(7, 1, "2026-03-11T07:00:00Z", "2026-03-11T15:00:00Z", 30);
        let nights = BTreeMap::from([(NaiveDate::default(), vec![s.clone()])]);
        let scores = sleep_scores(&nights, &sources);
        assert_eq!(scores.len(), 1);
        assert_eq!(scores[0].id, Uuid::new_v5(&s.id, b"sleep-score"));
        assert_eq!(scores[0].recorded_at, "2026-03-11T07:00:00-08:00");
        assert_eq!(scores[0].provider, INTERNAL);
        let parts = scores[0].components.as_ref().map(|c| c.keys().copied().collect::<Vec<_>>());
        assert_eq!(parts, Some(vec!["duration", "efficiency", "restoration"]));

        let reading = Reading {
            ts: at("2026-03-12T08:00:00Z"),
            value: 64.0,
            zone_offset: Some(60),
            data_source_id: Uuid::from_u128(2),
        };
        let user = UserId(Uuid::from_u128(99));
        let vendor = vendor_score(user, series::BODY_BATTERY, &reading, &ranking);
        assert_eq!(
            vendor.as_ref().map(|v| (v.category, v.provider.as_str())),
            Some(("body_battery", "garmin"))
        );
        assert_eq!(vendor_score(user, series::STEPS, &reading, &ranking), None);
        let mut all = scores;
        all.extend(vendor);
        newest_first(&mut all);
        assert_eq!(all[0].category, "body_battery");
    }
}
