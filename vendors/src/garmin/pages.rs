//! Garmin's summaries as typed rows, read as leniently as `.get` read them: every field
//! optional, a field of another type `None` (see `crate::normal::record`). One struct holds
//! the fields of every summary type, as each type's mapping reads some of them; fields no
//! mapping reads are ignored.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::normal::{Keyed, lenient, lenient_id, lenient_keyed, lenient_number, lenient_records};

/// A summary of any type (epoch seconds, offsets in seconds, metres, kcal, bpm, grams).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Summary {
    #[serde(deserialize_with = "lenient_id")]
    pub(super) summary_id: Option<String>,
    #[serde(deserialize_with = "lenient_id")]
    pub(super) activity_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) calendar_date: Option<String>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) start_time_in_seconds: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) start_time_offset_in_seconds: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) duration_in_seconds: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) measurement_time_in_seconds: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) measurement_time_offset_in_seconds: Option<f64>,

    // Dailies.
    #[serde(deserialize_with = "lenient_number")]
    pub(super) steps: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) distance_in_meters: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) active_kilocalories: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) bmr_kilocalories: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) floors_climbed: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) resting_heart_rate_in_beats_per_minute: Option<f64>,
    #[serde(deserialize_with = "lenient_keyed")]
    pub(super) time_offset_heart_rate_samples: Option<Keyed>,

    // Sleeps.
    #[serde(deserialize_with = "lenient")]
    pub(super) sleep_levels_map: Option<BTreeMap<String, Levels>>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) light_sleep_duration_in_seconds: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) deep_sleep_duration_in_seconds: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) rem_sleep_in_seconds: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) awake_duration_in_seconds: Option<f64>,
    #[serde(deserialize_with = "lenient_records")]
    pub(super) naps: Option<Vec<Nap>>,
    #[serde(deserialize_with = "lenient_keyed")]
    pub(super) time_offset_sleep_spo2: Option<Keyed>,
    #[serde(deserialize_with = "lenient_keyed")]
    pub(super) time_offset_sleep_respiration: Option<Keyed>,

    // Activities.
    #[serde(deserialize_with = "lenient")]
    pub(super) activity_type: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) activity_name: Option<String>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) average_heart_rate_in_beats_per_minute: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) max_heart_rate_in_beats_per_minute: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) average_speed_in_meters_per_second: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) max_speed_in_meters_per_second: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) elevation_gain_in_meters: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) average_run_cadence_in_steps_per_minute: Option<f64>,
    /// Kept in the statistics as sent.
    pub(super) device_name: Option<Value>,
    pub(super) manual: Option<Value>,

    // Pulse ox, respiration, stress and Body Battery, HRV.
    #[serde(deserialize_with = "lenient_keyed")]
    pub(super) time_offset_spo2_values: Option<Keyed>,
    #[serde(deserialize_with = "lenient_keyed")]
    pub(super) time_offset_epoch_to_breaths: Option<Keyed>,
    #[serde(deserialize_with = "lenient_keyed")]
    pub(super) time_offset_stress_level_values: Option<Keyed>,
    #[serde(deserialize_with = "lenient_keyed")]
    pub(super) time_offset_body_battery_values: Option<Keyed>,
    #[serde(deserialize_with = "lenient_keyed")]
    pub(super) hrv_values: Option<Keyed>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) last_night_avg: Option<f64>,

    // Body composition, user metrics, skin temperature, blood pressure.
    #[serde(deserialize_with = "lenient_number")]
    pub(super) weight_in_grams: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) muscle_mass_in_grams: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) body_fat_in_percent: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) body_mass_index: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) vo2_max: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) fitness_age: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) avg_deviation_celsius: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) systolic: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) diastolic: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) pulse: Option<f64>,
}

/// The spans of one sleep level (`sleepLevelsMap.<level>`): none when it is not an array.
#[derive(Deserialize, Default)]
#[serde(transparent)]
pub(super) struct Levels(
    #[serde(deserialize_with = "lenient_records")] pub(super) Option<Vec<Span>>,
);

/// A span of a sleep level, in epoch seconds.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Span {
    #[serde(deserialize_with = "lenient_number")]
    pub(super) start_time_in_seconds: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) end_time_in_seconds: Option<f64>,
}

/// A nap of a night's summary.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Nap {
    #[serde(deserialize_with = "lenient_number")]
    pub(super) nap_start_time_in_seconds: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) nap_duration_in_seconds: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) nap_offset_in_seconds: Option<f64>,
}
