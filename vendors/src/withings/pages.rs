//! Withings' page records as typed rows, read as leniently as `.get` read them: every field
//! optional, a field of another type `None` (see `crate::normal::record`).

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::normal::{Keyed, lenient, lenient_id, lenient_keyed, lenient_number};
use crate::normal::{lenient_record, lenient_records};

/// A group of measures taken at once.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct MeasureGroup {
    #[serde(deserialize_with = "lenient")]
    pub(super) attrib: Option<i64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) date: Option<f64>,
    #[serde(deserialize_with = "lenient_records")]
    pub(super) measures: Option<Vec<Measure>>,
}

/// `value × 10^unit` of a measure type.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Measure {
    #[serde(rename = "type", deserialize_with = "lenient")]
    pub(super) kind: Option<i64>,
    #[serde(deserialize_with = "lenient")]
    pub(super) value: Option<i64>,
    #[serde(deserialize_with = "lenient")]
    pub(super) unit: Option<i64>,
}

/// A day's totals (metres, floors, kcal).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct ActivityDay {
    #[serde(deserialize_with = "lenient")]
    pub(super) date: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) timezone: Option<String>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) steps: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) distance: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) elevation: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) calories: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) totalcalories: Option<f64>,
}

/// A row of a `series` with bounds: a workout (`D` its figures) or a night (its totals).
#[derive(Deserialize, Default)]
#[serde(default, bound(deserialize = "D: DeserializeOwned + Default"))]
pub(super) struct Span<D> {
    #[serde(deserialize_with = "lenient_number")]
    pub(super) startdate: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) enddate: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub(super) timezone: Option<String>,
    #[serde(deserialize_with = "lenient_id")]
    pub(super) id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) category: Option<i64>,
    #[serde(deserialize_with = "lenient_record")]
    pub(super) data: Option<D>,
}

/// A workout's figures (kcal, metres, bpm, seconds of pauses).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct WorkoutData {
    #[serde(deserialize_with = "lenient_number")]
    pub(super) pause_duration: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) calories: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) distance: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) steps: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) hr_average: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) hr_max: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) hr_min: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) spo2_average: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) elevation: Option<f64>,
}

/// A night's totals, in seconds.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct NightData {
    #[serde(deserialize_with = "lenient_number")]
    pub(super) lightsleepduration: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) deepsleepduration: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) remsleepduration: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) wakeupduration: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) total_sleep_time: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) asleepduration: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) total_timeinbed: Option<f64>,
}

/// A stage segment, with the night's figures keyed by time.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Segment {
    #[serde(deserialize_with = "lenient_number")]
    pub(super) startdate: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) enddate: Option<f64>,
    #[serde(deserialize_with = "lenient")]
    pub(super) state: Option<i64>,
    #[serde(deserialize_with = "lenient_keyed")]
    pub(super) hr: Option<Keyed>,
    #[serde(deserialize_with = "lenient_keyed")]
    pub(super) rr: Option<Keyed>,
    #[serde(deserialize_with = "lenient_keyed")]
    pub(super) rmssd: Option<Keyed>,
}

/// The fields measured in one minute of intraday data.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Minute {
    #[serde(deserialize_with = "lenient_number")]
    pub(super) heart_rate: Option<f64>,
    #[serde(deserialize_with = "lenient_number")]
    pub(super) spo2_auto: Option<f64>,
}
