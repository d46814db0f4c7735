//! Activity per local day, from the rollups.
//!
//! Per day and metric, the best-ranked source that reported the metric that day is used, whole:
//! its daily total where it sent one, else the sum of its intraday samples. Sources are never
//! added together (a phone and a watch count the same steps) and never silently dropped: a metric
//! only one source has is taken from it, and `metric_sources` says where each came from.

use std::collections::{BTreeMap, HashMap};

use chrono::NaiveDate;
use schema::summaries::DayRollup;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::series::SeriesId;
use crate::{Ranking, SourceOut, Sources, round1, series};

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HeartRateDay {
    pub avg_bpm: Option<i64>,
    pub max_bpm: Option<i64>,
    pub min_bpm: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ActivityDay {
    /// The user's local date.
    pub date: NaiveDate,
    /// The source of the day's steps (or, without steps, of its first metric).
    pub source: Option<SourceOut>,
    pub steps: Option<i64>,
    pub distance_meters: Option<f64>,
    pub floors_climbed: Option<i64>,
    pub active_calories_kcal: Option<f64>,
    pub basal_calories_kcal: Option<f64>,
    /// Active plus basal energy, or the source's own total; null when basal energy is unknown
    /// (active energy alone is not a total).
    pub total_calories_kcal: Option<f64>,
    /// Active time as the source measures it (exercise minutes, active minutes).
    pub active_minutes: Option<i64>,
    pub stand_minutes: Option<i64>,
    pub heart_rate: Option<HeartRateDay>,
    /// Where each metric came from, by field name.
    #[schema(value_type = Object)]
    pub metric_sources: BTreeMap<&'static str, SourceOut>,
}

/// Additive metrics: field name and series, preferred first.
const TOTALS: &[(&str, &[SeriesId])] = &[
    ("steps", &[series::STEPS]),
    ("distance_meters", &[series::DISTANCE]),
    ("floors_climbed", &[series::FLIGHTS_CLIMBED]),
    ("active_calories_kcal", &[series::ENERGY]),
    ("basal_calories_kcal", &[series::BASAL_ENERGY]),
    ("total_energy", &[series::TOTAL_ENERGY]),
    ("active_minutes", &[series::EXERCISE_TIME, series::ACTIVE_TIME, series::MOVE_TIME]),
    ("stand_minutes", &[series::STAND_TIME]),
];

/// The series an activity summary reads.
pub fn series_read() -> Vec<SeriesId> {
    let mut ids: Vec<SeriesId> = TOTALS.iter().flat_map(|(_, s)| s.iter().copied()).collect();
    ids.push(series::HEART_RATE);
    ids
}

/// One day from its rollups (by series).
pub fn day(
    date: NaiveDate,
    rows: &HashMap<SeriesId, Vec<DayRollup>>,
    ranking: &Ranking,
    sources: &Sources,
) -> ActivityDay {
    let mut values: HashMap<&str, f64> = HashMap::new();
    let mut from: BTreeMap<&'static str, Uuid> = BTreeMap::new();
    for (field, ids) in TOTALS {
        let best = ids.iter().find_map(|s| ranking.best(rows.get(s).into_iter().flatten()));
        if let Some(r) = best {
            values.insert(field, r.figures.total());
            from.insert(field, r.data_source_id);
        }
    }
    let hr = ranking.best(rows.get(&series::HEART_RATE).into_iter().flatten()).and_then(|r| {
        let avg = r.figures.mean()?;
        from.insert("heart_rate", r.data_source_id);
        Some(HeartRateDay {
            avg_bpm: Some(avg.round() as i64),
            max_bpm: r.figures.value_max.map(|v| v.round() as i64),
            min_bpm: r.figures.value_min.map(|v| v.round() as i64),
        })
    });
    let active = values.get("active_calories_kcal").copied();
    let basal = values.get("basal_calories_kcal").copied();
    let total = match (active, basal, values.get("total_energy")) {
        (Some(a), Some(b), _) => Some(a + b),
        (_, _, Some(t)) => Some(*t),
        _ => None,
    };
    if total.is_some()
        && basal.is_none()
        && let Some(source) = from.get("total_energy").copied()
    {
        from.insert("total_calories_kcal", source);
    }
    from.remove("total_energy");
    let lead = from.get("steps").or_else(|| from.values().next()).copied();
    ActivityDay {
        date,
        source: lead.map(|id| sources.get(id)),
        steps: values.get("steps").map(|v| v.round() as i64),
        distance_meters: values.get("distance_meters").map(|v| round1(*v)),
        floors_climbed: values.get("floors_climbed").map(|v| v.round() as i64),
        active_calories_kcal: active.map(round1),
        basal_calories_kcal: basal.map(round1),
        total_calories_kcal: total.map(round1),
        active_minutes: values.get("active_minutes").map(|v| v.round() as i64),
        stand_minutes: values.get("stand_minutes").map(|v| v.round() as i64),
        heart_rate: hr,
        metric_sources: from.into_iter().map(|(k, id)| (k, sources.get(id))).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranking::by_day;
    use crate::ranking::tests::{rollup, source};

    #[test]
    fn each_metric_from_its_best_source_never_added_up() {
        let ranking = Ranking::new(vec![(source(1, "apple"), 1), (source(2, "google"), 2)]);
        let sources = Sources::new(&ranking.sources);
        let day0 = NaiveDate::default();
        let mut watch_steps = rollup(1, series::STEPS, day0, 8000.0, 100);
        // A daily total beats the intraday sum of the same source.
        watch_steps.figures.total_count = 1;
        watch_steps.figures.total_sum = 8123.0;
        let rows = vec![
            watch_steps,
            rollup(2, series::STEPS, day0, 7000.0, 50),
            // Only the phone measured distance: taken from it.
            rollup(2, series::DISTANCE, day0, 5432.16, 50),
            rollup(1, series::ENERGY, day0, 400.0, 10),
            // Move time stands in for exercise time.
            rollup(1, series::MOVE_TIME, day0, 31.6, 5),
            rollup(1, series::HEART_RATE, day0, 7200.0, 100),
        ];
        let by = by_day(rows);
        let day = day(day0, &by[&day0], &ranking, &sources);
        assert_eq!(day.steps, Some(8123));
        assert_eq!(day.distance_meters, Some(5432.2));
        assert_eq!(day.metric_sources["distance_meters"].provider, "google");
        assert_eq!(day.metric_sources["steps"].provider, "apple");
        assert_eq!(day.source.map(|s| s.provider), Some("apple".into()));
        assert_eq!(day.active_calories_kcal, Some(400.0));
        // Active energy alone is not a total.
        assert_eq!(day.total_calories_kcal, None);
        assert_eq!(day.active_minutes, Some(32));
        assert_eq!(day.heart_rate.and_then(|h| h.avg_bpm), Some(72));
    }

    #[test]
    fn a_total_is_active_plus_basal_else_the_sources_own() {
        let ranking = Ranking::new(vec![(source(1, "apple"), 1)]);
        let sources = Sources::new(&ranking.sources);
        let d = NaiveDate::default();
        let both = by_day(vec![
            rollup(1, series::ENERGY, d, 400.0, 1),
            rollup(1, series::BASAL_ENERGY, d, 1600.0, 1),
        ]);
        assert_eq!(day(d, &both[&d], &ranking, &sources).total_calories_kcal, Some(2000.0));
        let own = by_day(vec![rollup(1, series::TOTAL_ENERGY, d, 2100.0, 1)]);
        let own = day(d, &own[&d], &ranking, &sources);
        assert_eq!(own.total_calories_kcal, Some(2100.0));
        assert!(own.metric_sources.contains_key("total_calories_kcal"));
        assert!(!own.metric_sources.contains_key("total_energy"));
    }
}
