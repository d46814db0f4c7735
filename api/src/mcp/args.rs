//! The tools' arguments. Their doc comments are what an agent reads of each field (the JSON
//! schema's descriptions).

use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct FindUsersArgs {
    /// Part of a user's email, first or last name, external id or id (case-insensitive). All
    /// users, newest first, when absent.
    #[serde(default)]
    pub query: Option<String>,
    /// At most this many users (1–100, default 20).
    #[serde(default)]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct UserArgs {
    /// The user's id (a UUID, from find_users).
    pub user_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SeriesArgs {
    /// The user's id (a UUID, from find_users).
    pub user_id: String,
    /// Series types, 1 to 8: heart_rate, resting_heart_rate, heart_rate_variability_sdnn,
    /// steps, energy (active energy), distance_walking_running, weight, body_fat_percentage,
    /// oxygen_saturation, respiratory_rate, body_temperature, blood_glucose, … (data_coverage
    /// lists the ones a user has).
    pub types: Vec<String>,
    /// Start of the window: a date (YYYY-MM-DD, midnight UTC) or an ISO 8601 time with its
    /// offset (2026-03-14T06:00:00+01:00).
    pub start_time: String,
    /// End of the window, exclusive; a date alone includes that whole day. At most 366 days
    /// after the start.
    pub end_time: String,
    /// auto (default: the finest that fits max_points), raw, 1min, 5min, 15min, 1hour or 1day.
    /// Buckets are UTC; additive series are summed per bucket, levels averaged.
    #[serde(default)]
    pub resolution: Option<String>,
    /// At most this many points in the answer (1–2000, default 500).
    #[serde(default)]
    pub max_points: Option<u32>,
    /// Keep one source per series and bucket where several overlap (default true: a watch and
    /// a phone do not count the same steps twice).
    #[serde(default)]
    pub filter_by_priority: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct DaysArgs {
    /// The user's id (a UUID, from find_users).
    pub user_id: String,
    /// First local day, YYYY-MM-DD.
    pub start_date: String,
    /// Last local day, YYYY-MM-DD, included. At most 92 days in one call.
    pub end_date: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct BodyArgs {
    /// The user's id (a UUID, from find_users).
    pub user_id: String,
    /// Days the resting heart rate and HRV are averaged over, ending today (1–7, default 7).
    #[serde(default)]
    pub average_period: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct WorkoutArgs {
    /// The user's id (a UUID, from find_users).
    pub user_id: String,
    /// Workouts starting on or after this day (YYYY-MM-DD) or time (ISO 8601).
    pub start_date: String,
    /// …and before this one; a date alone includes that day. At most 366 days after the start.
    pub end_date: String,
    /// Only workouts of this type (running, cycling, walking, swimming, strength_training, …).
    #[serde(default)]
    pub workout_type: Option<String>,
    /// Keep one of two overlapping workouts from different sources (default true).
    #[serde(default)]
    pub filter_by_priority: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SleepArgs {
    /// The user's id (a UUID, from find_users).
    pub user_id: String,
    /// Sessions starting on or after this day (YYYY-MM-DD) or time (ISO 8601).
    pub start_date: String,
    /// …and before this one; a date alone includes that day. At most 366 days after the start.
    pub end_date: String,
    /// Keep one of two overlapping sessions from different sources (default true).
    #[serde(default)]
    pub filter_by_priority: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ScoresArgs {
    /// The user's id (a UUID, from find_users).
    pub user_id: String,
    /// First day, YYYY-MM-DD.
    pub start_date: String,
    /// Last day, YYYY-MM-DD, included. At most 366 days after the start.
    pub end_date: String,
    /// Only this category: sleep, recovery, readiness, activity, stress, resilience,
    /// body_battery or strain.
    #[serde(default)]
    pub category: Option<String>,
}
