//! The series-type catalogue: every kind of time series wearhouse stores, with its canonical
//! unit, how a day of it aggregates, and which webhook group event announces new samples.
//!
//! Ids are stable (they are the `series_type_id` of stored samples) and follow the reference
//! system's numbering so that data migrated from it keeps its meaning. The table is seeded into
//! PostgreSQL (`series_types`) at every migration run, so this file is the only source of truth.
//!
//! Where the reference is plainly wrong we differ, on purpose:
//! - `atrial_fibrillation_burden` is a percentage of time (HealthKit unit `%`): averaged, not
//!   summed as a count;
//! - `blood_alcohol_content` and `peripheral_perfusion_index` are percentages (HealthKit `%`),
//!   not mg/dL and not a score;
//! - `hydration` is water drunk: additive over a day, like energy;
//! - `insulin_delivery` is in international units (IU), `electrodermal_activity` in microsiemens,
//!   `physical_effort` in METs (HealthKit kcal/hr·kg);
//! - rates and totals get series of their own instead of being summed into interval energy:
//!   `basal_metabolic_rate` (Health Connect's kcal/day) and `total_energy` (active + basal);
//!   Apple's move time is `move_time`, not exercise time; cycling FTP is
//!   `functional_threshold_power`, not a power sample;
//! - `recovery_score` exists as a series (the contract's `recovery_score.created` names it), and
//!   series without a group event go to the contract's catch-all `timeseries.created`.

/// How samples of one series combine into a day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregation {
    /// Additive: a day is the sum of its samples (steps, energy, distance).
    Sum,
    /// A level: a day is the mean of its samples (heart rate, weight).
    Avg,
    /// A best effort: a day is its largest sample (six-minute-walk distance).
    Max,
}

impl Aggregation {
    pub fn as_str(self) -> &'static str {
        match self {
            Aggregation::Sum => "sum",
            Aggregation::Avg => "avg",
            Aggregation::Max => "max",
        }
    }
}

/// One row of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesType {
    pub id: SeriesId,
    pub slug: &'static str,
    /// The unit every stored value of this series is in.
    pub unit: &'static str,
    pub category: &'static str,
    pub aggregation: Aggregation,
    /// The timeseries webhook group event that announces new samples of this series.
    pub event: &'static str,
}

impl SeriesType {
    /// Additive series carry `is_daily_total` (false for intraday samples); for levels it is null.
    pub fn is_additive(&self) -> bool {
        self.aggregation == Aggregation::Sum
    }

    /// The fine-grained event for this series alone, listed as a child of its group event.
    pub(crate) fn child_event(&self) -> String {
        format!("series.{}.created", self.slug)
    }
}

use Aggregation::{Avg, Max, Sum};

pub use crate::ids::SeriesId;

const fn st(
    id: i16,
    slug: &'static str,
    unit: &'static str,
    category: &'static str,
    aggregation: Aggregation,
    event: &'static str,
) -> SeriesType {
    SeriesType { id: SeriesId(id), slug, unit, category, aggregation, event }
}

const HR: &str = "heart_rate.created";
const HRV: &str = "heart_rate_variability.created";
const SPO2: &str = "spo2.created";
const GLUCOSE: &str = "blood_glucose.created";
const BP: &str = "blood_pressure.created";
const RESP: &str = "respiratory_rate.created";
const BODY: &str = "body_composition.created";
const TEMP: &str = "body_temperature.created";
const FITNESS: &str = "fitness_metrics.created";
const STEPS: &str = "steps.created";
const CALORIES: &str = "calories.created";
const ACTIVITY: &str = "activity_timeseries.created";
const WORKOUT: &str = "workout_metrics.created";
const ENV: &str = "environmental.created";
const STRESS: &str = "stress.created";
const RECOVERY: &str = "recovery_score.created";
/// The contract's catch-all for series not mapped to a group.
const OTHER: &str = "timeseries.created";

/// Every series type, ordered by id.
#[rustfmt::skip]
pub const SERIES_TYPES: &[SeriesType] = &[
    st(1, "heart_rate", "bpm", "heart", Avg, HR),
    st(2, "resting_heart_rate", "bpm", "heart", Avg, HR),
    st(3, "heart_rate_variability_sdnn", "ms", "heart", Avg, HRV),
    st(4, "heart_rate_recovery_one_minute", "bpm", "heart", Avg, HR),
    st(5, "walking_heart_rate_average", "bpm", "heart", Avg, HR),
    st(7, "heart_rate_variability_rmssd", "ms", "heart", Avg, HRV),
    st(20, "oxygen_saturation", "percent", "blood_respiratory", Avg, SPO2),
    st(21, "blood_glucose", "mg_dl", "blood_respiratory", Avg, GLUCOSE),
    st(22, "blood_pressure_systolic", "mmHg", "blood_respiratory", Avg, BP),
    st(23, "blood_pressure_diastolic", "mmHg", "blood_respiratory", Avg, BP),
    st(24, "respiratory_rate", "brpm", "blood_respiratory", Avg, RESP),
    st(25, "sleeping_breathing_disturbances", "count", "blood_respiratory", Sum, RESP),
    st(26, "blood_alcohol_content", "percent", "blood_respiratory", Avg, GLUCOSE),
    st(27, "peripheral_perfusion_index", "percent", "blood_respiratory", Avg, SPO2),
    st(28, "forced_vital_capacity", "liters", "blood_respiratory", Avg, RESP),
    st(29, "forced_expiratory_volume_1", "liters", "blood_respiratory", Avg, RESP),
    st(30, "peak_expiratory_flow_rate", "L/min", "blood_respiratory", Avg, RESP),
    st(31, "breathing_disturbance_index", "score", "blood_respiratory", Avg, RESP),
    st(40, "height", "cm", "body_composition", Avg, BODY),
    st(41, "weight", "kg", "body_composition", Avg, BODY),
    st(42, "body_fat_percentage", "percent", "body_composition", Avg, BODY),
    st(43, "body_mass_index", "kg_m2", "body_composition", Avg, BODY),
    st(44, "lean_body_mass", "kg", "body_composition", Avg, BODY),
    st(45, "body_temperature", "celsius", "body_composition", Avg, TEMP),
    st(46, "skin_temperature", "celsius", "body_composition", Avg, TEMP),
    st(47, "waist_circumference", "cm", "body_composition", Avg, BODY),
    st(48, "body_fat_mass", "kg", "body_composition", Avg, BODY),
    st(49, "skeletal_muscle_mass", "kg", "body_composition", Avg, BODY),
    st(50, "skin_temperature_deviation", "celsius", "body_composition", Avg, TEMP),
    st(51, "skin_temperature_trend_deviation", "celsius", "body_composition", Avg, TEMP),
    st(60, "vo2_max", "ml_kg_min", "fitness", Avg, FITNESS),
    st(61, "six_minute_walk_test_distance", "meters", "fitness", Max, FITNESS),
    st(62, "cardiovascular_age", "years", "fitness", Avg, FITNESS),
    st(80, "steps", "count", "activity", Sum, STEPS),
    st(81, "energy", "kcal", "activity", Sum, CALORIES),
    st(82, "basal_energy", "kcal", "activity", Sum, CALORIES),
    st(83, "stand_time", "minutes", "activity", Sum, ACTIVITY),
    st(84, "exercise_time", "minutes", "activity", Sum, ACTIVITY),
    st(85, "physical_effort", "met", "activity", Avg, ACTIVITY),
    st(86, "flights_climbed", "count", "activity", Sum, ACTIVITY),
    st(87, "average_met", "met", "activity", Avg, ACTIVITY),
    st(88, "active_time", "minutes", "activity", Sum, ACTIVITY),
    st(89, "basal_metabolic_rate", "kcal/day", "activity", Avg, CALORIES),
    st(90, "move_time", "minutes", "activity", Sum, ACTIVITY),
    st(91, "total_energy", "kcal", "activity", Sum, CALORIES),
    st(100, "distance_walking_running", "meters", "distance", Sum, ACTIVITY),
    st(101, "distance_cycling", "meters", "distance", Sum, ACTIVITY),
    st(102, "distance_swimming", "meters", "distance", Sum, ACTIVITY),
    st(103, "distance_downhill_snow_sports", "meters", "distance", Sum, ACTIVITY),
    st(104, "distance_other", "meters", "distance", Sum, ACTIVITY),
    st(120, "walking_step_length", "cm", "walking", Avg, WORKOUT),
    st(121, "walking_speed", "m_per_s", "walking", Avg, WORKOUT),
    st(122, "walking_double_support_percentage", "percent", "walking", Avg, WORKOUT),
    st(123, "walking_asymmetry_percentage", "percent", "walking", Avg, WORKOUT),
    st(124, "walking_steadiness", "percent", "walking", Avg, WORKOUT),
    st(125, "stair_descent_speed", "m_per_s", "walking", Avg, WORKOUT),
    st(126, "stair_ascent_speed", "m_per_s", "walking", Avg, WORKOUT),
    st(140, "running_power", "watts", "running", Avg, WORKOUT),
    st(141, "running_speed", "m_per_s", "running", Avg, WORKOUT),
    st(142, "running_vertical_oscillation", "cm", "running", Avg, WORKOUT),
    st(143, "running_ground_contact_time", "ms", "running", Avg, WORKOUT),
    st(144, "running_stride_length", "cm", "running", Avg, WORKOUT),
    st(145, "running_vertical_ratio", "percent", "running", Avg, OTHER),
    st(146, "running_stance_time_balance", "percent", "running", Avg, OTHER),
    st(160, "swimming_stroke_count", "count", "swimming", Sum, WORKOUT),
    st(161, "underwater_depth", "meters", "swimming", Avg, WORKOUT),
    st(180, "cadence", "rpm", "generic_activity", Avg, WORKOUT),
    st(181, "power", "watts", "generic_activity", Avg, WORKOUT),
    st(182, "speed", "m_per_s", "generic_activity", Avg, WORKOUT),
    st(183, "workout_effort_score", "score", "generic_activity", Avg, WORKOUT),
    st(184, "estimated_workout_effort_score", "score", "generic_activity", Avg, WORKOUT),
    st(185, "functional_threshold_power", "watts", "fitness", Avg, FITNESS),
    st(200, "environmental_audio_exposure", "dB", "environmental", Avg, ENV),
    st(201, "headphone_audio_exposure", "dB", "environmental", Avg, ENV),
    st(202, "environmental_sound_reduction", "dB", "environmental", Avg, ENV),
    st(203, "time_in_daylight", "minutes", "environmental", Sum, ENV),
    st(204, "water_temperature", "celsius", "environmental", Avg, ENV),
    st(205, "uv_exposure", "count", "environmental", Sum, ENV),
    st(206, "inhaler_usage", "count", "environmental", Sum, ENV),
    st(207, "weather_temperature", "celsius", "environmental", Avg, ENV),
    st(208, "weather_humidity", "percent", "environmental", Avg, ENV),
    st(209, "elevation", "meters", "environmental", Avg, OTHER),
    st(210, "latitude", "degrees", "environmental", Avg, OTHER),
    st(211, "longitude", "degrees", "environmental", Avg, OTHER),
    st(212, "air_temperature", "celsius", "environmental", Avg, OTHER),
    st(220, "garmin_stress_level", "score", "provider_specific", Avg, STRESS),
    st(221, "garmin_skin_temperature", "celsius", "provider_specific", Avg, TEMP),
    st(222, "garmin_fitness_age", "years", "provider_specific", Avg, FITNESS),
    st(223, "garmin_body_battery", "percent", "provider_specific", Avg, RECOVERY),
    st(230, "recovery_score", "score", "recovery", Avg, RECOVERY),
    st(500, "electrodermal_activity", "microsiemens", "other", Avg, STRESS),
    st(501, "push_count", "count", "other", Sum, ACTIVITY),
    st(502, "atrial_fibrillation_burden", "percent", "other", Avg, HR),
    st(503, "insulin_delivery", "IU", "other", Sum, GLUCOSE),
    st(504, "number_of_times_fallen", "count", "other", Sum, ACTIVITY),
    st(505, "number_of_alcoholic_beverages", "count", "other", Sum, ACTIVITY),
    st(506, "nike_fuel", "count", "other", Sum, ACTIVITY),
    st(507, "hydration", "mL", "other", Sum, ACTIVITY),
];

/// The id of the series `slug`, for `const` items: a slug not in the catalogue fails the build
/// (there is no sentinel id to mistake for data).
pub const fn id(slug: &str) -> SeriesId {
    let mut i = 0;
    while i < SERIES_TYPES.len() {
        if const_eq(SERIES_TYPES[i].slug, slug) {
            return SERIES_TYPES[i].id;
        }
        i += 1;
    }
    panic!("no such series slug in the catalogue")
}

const fn const_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Looks a series type up by its slug (`heart_rate`, `steps`, …).
pub fn by_slug(slug: &str) -> Option<&'static SeriesType> {
    SERIES_TYPES.iter().find(|t| t.slug == slug)
}

/// Looks a series type up by its stable id.
pub fn by_id(id: SeriesId) -> Option<&'static SeriesType> {
    SERIES_TYPES.binary_search_by_key(&id, |t| t.id).ok().map(|i| &SERIES_TYPES[i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_sorted_and_unique() {
        for pair in SERIES_TYPES.windows(2) {
            assert!(pair[0].id < pair[1].id, "{} must come before {}", pair[0].slug, pair[1].slug);
        }
    }

    #[test]
    fn slugs_are_unique_snake_case() {
        let mut seen = HashSet::new();
        for t in SERIES_TYPES {
            assert!(seen.insert(t.slug), "duplicate slug {}", t.slug);
            assert!(
                t.slug.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            );
        }
    }

    #[test]
    fn const_ids_agree() {
        const STEPS: SeriesId = id("steps");
        assert_eq!(by_id(STEPS).map(|t| t.slug), Some("steps"));
        for t in SERIES_TYPES {
            assert_eq!(id(t.slug), t.id);
        }
    }

    #[test]
    fn lookups_agree() {
        for t in SERIES_TYPES {
            assert_eq!(by_slug(t.slug), Some(t));
            assert_eq!(by_id(t.id), Some(t));
        }
        assert_eq!(by_slug("HEART_RATE"), None);
        assert_eq!(by_id(SeriesId(6)), None);
    }

    #[test]
    fn additive_series_are_the_summed_ones() {
        let additive: Vec<_> =
            SERIES_TYPES.iter().filter(|t| t.is_additive()).map(|t| t.slug).collect();
        for slug in ["steps", "energy", "basal_energy", "distance_cycling", "flights_climbed"] {
            assert!(additive.contains(&slug), "{slug} must be additive");
        }
        for slug in ["heart_rate", "weight", "oxygen_saturation", "body_temperature"] {
            assert!(!additive.contains(&slug), "{slug} must not be additive");
        }
    }
}
