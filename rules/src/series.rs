//! The series the rules name, by id: resolved from the catalogue when compiling, so a slug
//! that is not in it fails the build instead of reading nothing.

use schema::catalogue::series_types::id;
pub use schema::ids::SeriesId;

pub const HEART_RATE: SeriesId = id("heart_rate");
pub const RESTING_HEART_RATE: SeriesId = id("resting_heart_rate");
pub(crate) const HRV_SDNN: SeriesId = id("heart_rate_variability_sdnn");
pub const HRV_RMSSD: SeriesId = id("heart_rate_variability_rmssd");
pub const RESPIRATORY_RATE: SeriesId = id("respiratory_rate");
pub const OXYGEN_SATURATION: SeriesId = id("oxygen_saturation");
pub const RECOVERY_SCORE: SeriesId = id("recovery_score");
pub const BODY_BATTERY: SeriesId = id("garmin_body_battery");
pub const STRESS_LEVEL: SeriesId = id("garmin_stress_level");

pub const STEPS: SeriesId = id("steps");
pub const DISTANCE: SeriesId = id("distance_walking_running");
pub(crate) const FLIGHTS_CLIMBED: SeriesId = id("flights_climbed");
pub const ENERGY: SeriesId = id("energy");
pub(crate) const BASAL_ENERGY: SeriesId = id("basal_energy");
pub const TOTAL_ENERGY: SeriesId = id("total_energy");
pub(crate) const EXERCISE_TIME: SeriesId = id("exercise_time");
pub const ACTIVE_TIME: SeriesId = id("active_time");
pub(crate) const MOVE_TIME: SeriesId = id("move_time");
pub(crate) const STAND_TIME: SeriesId = id("stand_time");

pub const WEIGHT: SeriesId = id("weight");
pub const HEIGHT: SeriesId = id("height");
pub const BODY_FAT: SeriesId = id("body_fat_percentage");
pub(crate) const MUSCLE_MASS: SeriesId = id("skeletal_muscle_mass");
pub const LEAN_BODY_MASS: SeriesId = id("lean_body_mass");
pub const BMI: SeriesId = id("body_mass_index");
pub const BODY_TEMPERATURE: SeriesId = id("body_temperature");
pub const SKIN_TEMPERATURE: SeriesId = id("skin_temperature");
pub const SYSTOLIC: SeriesId = id("blood_pressure_systolic");
pub const DIASTOLIC: SeriesId = id("blood_pressure_diastolic");
