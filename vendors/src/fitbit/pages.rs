//! Fitbit's records as typed rows, read as leniently as `.get` read them: every field optional,
//! a field of another type `None` (see `crate::normal::record`). Where the mapping read a field
//! as a JSON number only (the activity list's figures), it still does (`lenient`, not
//! `lenient_number`).

use serde::Deserialize;
use serde_json::Value;

use crate::normal::{lenient, lenient_id, lenient_number, lenient_record};

/// The profile page: the user's offset and zone.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Profile {
    #[serde(deserialize_with = "lenient_record")]
    pub(super) user: Option<User>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct User {
    #[serde(rename = "offsetFromUTCMillis", deserialize_with = "lenient")]
    pub(super) offset_millis: Option<i64>,
    #[serde(deserialize_with = "lenient")]
    pub(super) timezone: Option<String>,
}

/// A sleep log (local times without an offset; minutes).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct SleepLog {
    #[serde(deserialize_with = "lenient_id")]
    pub(super) log_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) start_time: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) end_time: Option<String>,
    #[serde(deserialize_with = "lenient_record")]
    pub(super) levels: Option<SleepLevels>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) minutes_asleep: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) time_in_bed: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub(super) is_main_sleep: Option<bool>,
}

/// A log's levels: its timeline, its short wake periods, and its totals.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct SleepLevels {
    /// A list that reads whole or not at all (a level that does not read costs the list).
    #[serde(deserialize_with = "lenient")]
    pub(super) data: Option<Vec<Level>>,
    #[serde(deserialize_with = "lenient")]
    pub(super) short_data: Option<Vec<Level>>,
    #[serde(deserialize_with = "lenient_record")]
    pub(super) summary: Option<LevelsSummary>,
}

/// One level of the timeline, from a local time.
#[derive(Deserialize)]
pub(super) struct Level {
    #[serde(rename = "dateTime")]
    pub(super) date_time: String,
    pub(super) level: String,
    pub(super) seconds: i64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct LevelsSummary {
    #[serde(deserialize_with = "lenient_record")]
    pub(super) light: Option<Minutes>,
    #[serde(deserialize_with = "lenient_record")]
    pub(super) deep: Option<Minutes>,
    #[serde(deserialize_with = "lenient_record")]
    pub(super) rem: Option<Minutes>,
    #[serde(deserialize_with = "lenient_record")]
    pub(super) wake: Option<Minutes>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Minutes {
    #[serde(deserialize_with = "lenient_number")]
    pub(super) minutes: Option<f64>,
}

/// An activity of the list: its figures JSON numbers (a numeric string is none).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Activity {
    #[serde(deserialize_with = "lenient")]
    pub(super) start_time: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) duration: Option<i64>,
    #[serde(deserialize_with = "lenient_id")]
    pub(super) log_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) activity_name: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) calories: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub(super) distance: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub(super) distance_unit: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) steps: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub(super) average_heart_rate: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub(super) elevation_gain: Option<f64>,
    /// Kept in the statistics as sent.
    pub(super) log_type: Option<Value>,
    pub(super) active_duration: Option<Value>,
}

/// A `{dateTime, value}` day of a daily series (steps, calories, distance).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct DayTotal {
    #[serde(deserialize_with = "lenient")]
    pub(super) date_time: Option<String>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) value: Option<f64>,
}

/// A `{dateTime, value: {…}}` day of a level (resting heart rate, HRV, SpO2, skin temperature).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct DayLevel {
    #[serde(deserialize_with = "lenient")]
    pub(super) date_time: Option<String>,
    #[serde(deserialize_with = "lenient_record")]
    pub(super) value: Option<DayFigures>,
}

/// A day's figures: each series has one of them.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct DayFigures {
    #[serde(deserialize_with = "lenient_number")]
    pub(super) resting_heart_rate: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) daily_rmssd: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) avg: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) nightly_relative: Option<f64>,
}

/// A weight log, at its local date and time (kg, BMI, %).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct WeightLog {
    #[serde(deserialize_with = "lenient")]
    pub(super) date: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) time: Option<String>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) weight: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) bmi: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) fat: Option<f64>,
}
