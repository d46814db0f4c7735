//! The series the rules name, by id: resolved from the catalogue when compiling, so a slug
//! that is not in it fails the build instead of reading nothing.

use schema::catalogue::series_types::id;

pub const HEART_RATE: i16 = id("heart_rate");
pub const RESTING_HEART_RATE: i16 = id("resting_heart_rate");
pub const HRV_SDNN: i16 = id("heart_rate_variability_sdnn");
pub const HRV_RMSSD: i16 = id("heart_rate_variability_rmssd");
pub const RESPIRATORY_RATE: i16 = id("respiratory_rate");
pub const OXYGEN_SATURATION: i16 = id("oxygen_saturation");
pub const RECOVERY_SCORE: i16 = id("recovery_score");
pub const BODY_BATTERY: i16 = id("garmin_body_battery");
pub const STRESS_LEVEL: i16 = id("garmin_stress_level");

pub const STEPS: i16 = id("steps");
pub const DISTANCE: i16 = id("distance_walking_running");
pub const FLIGHTS_CLIMBED: i16 = id("flights_climbed");
pub const ENERGY: i16 = id("energy");
pub const BASAL_ENERGY: i16 = id("basal_energy");
pub const TOTAL_ENERGY: i16 = id("total_energy");
pub const EXERCISE_TIME: i16 = id("exercise_time");
pub const ACTIVE_TIME: i16 = id("active_time");
pub const MOVE_TIME: i16 = id("move_time");
pub const STAND_TIME: i16 = id("stand_time");

pub const WEIGHT: i16 = id("weight");
pub const HEIGHT: i16 = id("height");
pub const BODY_FAT: i16 = id("body_fat_percentage");
pub const MUSCLE_MASS: i16 = id("skeletal_muscle_mass");
pub const LEAN_BODY_MASS: i16 = id("lean_body_mass");
pub const BMI: i16 = id("body_mass_index");
pub const BODY_TEMPERATURE: i16 = id("body_temperature");
pub const SKIN_TEMPERATURE: i16 = id("skin_temperature");
pub const SYSTOLIC: i16 = id("blood_pressure_systolic");
pub const DIASTOLIC: i16 = id("blood_pressure_diastolic");
