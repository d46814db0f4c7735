//! Wire identifiers of samples → series types: HealthKit's `HKQuantityTypeIdentifier…` names
//! (sent by the iOS SDK and found in Apple Health exports) and the SCREAMING_SNAKE names the
//! Android SDK uses for Health Connect and Samsung Health. One table; lookups are exact.
//!
//! Where the reference maps plainly wrong we differ: speeds and underwater depth are not
//! distances, sleeping wrist temperature is a skin temperature, total calories are not active
//! calories, a basal metabolic *rate* is not interval energy.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::series_types::{self, SeriesType};

/// `(wire identifier, series slug)`.
pub(crate) const IDENTIFIERS: &[(&str, &str)] = &[
    // HealthKit quantity types.
    ("HKQuantityTypeIdentifierHeartRate", "heart_rate"),
    ("HKQuantityTypeIdentifierRestingHeartRate", "resting_heart_rate"),
    ("HKQuantityTypeIdentifierHeartRateVariabilitySDNN", "heart_rate_variability_sdnn"),
    ("HKQuantityTypeIdentifierHeartRateRecoveryOneMinute", "heart_rate_recovery_one_minute"),
    ("HKQuantityTypeIdentifierWalkingHeartRateAverage", "walking_heart_rate_average"),
    ("HKQuantityTypeIdentifierAtrialFibrillationBurden", "atrial_fibrillation_burden"),
    ("HKQuantityTypeIdentifierOxygenSaturation", "oxygen_saturation"),
    ("HKQuantityTypeIdentifierPeripheralPerfusionIndex", "peripheral_perfusion_index"),
    ("HKQuantityTypeIdentifierBloodGlucose", "blood_glucose"),
    ("HKQuantityTypeIdentifierBloodAlcoholContent", "blood_alcohol_content"),
    ("HKQuantityTypeIdentifierInsulinDelivery", "insulin_delivery"),
    ("HKQuantityTypeIdentifierBloodPressureSystolic", "blood_pressure_systolic"),
    ("HKQuantityTypeIdentifierBloodPressureDiastolic", "blood_pressure_diastolic"),
    ("HKQuantityTypeIdentifierRespiratoryRate", "respiratory_rate"),
    (
        "HKQuantityTypeIdentifierAppleSleepingBreathingDisturbances",
        "sleeping_breathing_disturbances",
    ),
    ("HKQuantityTypeIdentifierForcedVitalCapacity", "forced_vital_capacity"),
    ("HKQuantityTypeIdentifierForcedExpiratoryVolume1", "forced_expiratory_volume_1"),
    ("HKQuantityTypeIdentifierPeakExpiratoryFlowRate", "peak_expiratory_flow_rate"),
    ("HKQuantityTypeIdentifierHeight", "height"),
    ("HKQuantityTypeIdentifierBodyMass", "weight"),
    ("HKQuantityTypeIdentifierBodyFatPercentage", "body_fat_percentage"),
    ("HKQuantityTypeIdentifierBodyMassIndex", "body_mass_index"),
    ("HKQuantityTypeIdentifierLeanBodyMass", "lean_body_mass"),
    ("HKQuantityTypeIdentifierWaistCircumference", "waist_circumference"),
    ("HKQuantityTypeIdentifierBodyTemperature", "body_temperature"),
    ("HKQuantityTypeIdentifierBasalBodyTemperature", "body_temperature"),
    ("HKQuantityTypeIdentifierAppleSleepingWristTemperature", "skin_temperature"),
    ("HKQuantityTypeIdentifierVO2Max", "vo2_max"),
    ("HKQuantityTypeIdentifierSixMinuteWalkTestDistance", "six_minute_walk_test_distance"),
    ("HKQuantityTypeIdentifierStepCount", "steps"),
    ("HKQuantityTypeIdentifierActiveEnergyBurned", "energy"),
    ("HKQuantityTypeIdentifierBasalEnergyBurned", "basal_energy"),
    ("HKQuantityTypeIdentifierAppleStandTime", "stand_time"),
    ("HKQuantityTypeIdentifierAppleExerciseTime", "exercise_time"),
    ("HKQuantityTypeIdentifierAppleMoveTime", "move_time"),
    ("HKQuantityTypeIdentifierPhysicalEffort", "physical_effort"),
    ("HKQuantityTypeIdentifierFlightsClimbed", "flights_climbed"),
    ("HKQuantityTypeIdentifierPushCount", "push_count"),
    ("HKQuantityTypeIdentifierNikeFuel", "nike_fuel"),
    ("HKQuantityTypeIdentifierDistanceWalkingRunning", "distance_walking_running"),
    ("HKQuantityTypeIdentifierDistanceCycling", "distance_cycling"),
    ("HKQuantityTypeIdentifierDistanceSwimming", "distance_swimming"),
    ("HKQuantityTypeIdentifierDistanceDownhillSnowSports", "distance_downhill_snow_sports"),
    ("HKQuantityTypeIdentifierDistancePaddleSports", "distance_other"),
    ("HKQuantityTypeIdentifierDistanceRowing", "distance_other"),
    ("HKQuantityTypeIdentifierDistanceSkatingSports", "distance_other"),
    ("HKQuantityTypeIdentifierDistanceWheelchair", "distance_other"),
    ("HKQuantityTypeIdentifierDistanceCrossCountrySkiing", "distance_other"),
    ("HKQuantityTypeIdentifierWalkingStepLength", "walking_step_length"),
    ("HKQuantityTypeIdentifierWalkingSpeed", "walking_speed"),
    ("HKQuantityTypeIdentifierWalkingDoubleSupportPercentage", "walking_double_support_percentage"),
    ("HKQuantityTypeIdentifierWalkingAsymmetryPercentage", "walking_asymmetry_percentage"),
    ("HKQuantityTypeIdentifierAppleWalkingSteadiness", "walking_steadiness"),
    ("HKQuantityTypeIdentifierStairDescentSpeed", "stair_descent_speed"),
    ("HKQuantityTypeIdentifierStairAscentSpeed", "stair_ascent_speed"),
    ("HKQuantityTypeIdentifierRunningPower", "running_power"),
    ("HKQuantityTypeIdentifierRunningSpeed", "running_speed"),
    ("HKQuantityTypeIdentifierRunningVerticalOscillation", "running_vertical_oscillation"),
    ("HKQuantityTypeIdentifierRunningGroundContactTime", "running_ground_contact_time"),
    ("HKQuantityTypeIdentifierRunningStrideLength", "running_stride_length"),
    ("HKQuantityTypeIdentifierSwimmingStrokeCount", "swimming_stroke_count"),
    ("HKQuantityTypeIdentifierUnderwaterDepth", "underwater_depth"),
    ("HKQuantityTypeIdentifierWaterTemperature", "water_temperature"),
    ("HKQuantityTypeIdentifierCyclingCadence", "cadence"),
    ("HKQuantityTypeIdentifierCyclingPower", "power"),
    ("HKQuantityTypeIdentifierCyclingFunctionalThresholdPower", "functional_threshold_power"),
    ("HKQuantityTypeIdentifierCyclingSpeed", "speed"),
    ("HKQuantityTypeIdentifierCrossCountrySkiingSpeed", "speed"),
    ("HKQuantityTypeIdentifierPaddleSportsSpeed", "speed"),
    ("HKQuantityTypeIdentifierRowingSpeed", "speed"),
    ("HKQuantityTypeIdentifierWorkoutEffortScore", "workout_effort_score"),
    ("HKQuantityTypeIdentifierEstimatedWorkoutEffortScore", "estimated_workout_effort_score"),
    ("HKQuantityTypeIdentifierEnvironmentalAudioExposure", "environmental_audio_exposure"),
    ("HKQuantityTypeIdentifierHeadphoneAudioExposure", "headphone_audio_exposure"),
    ("HKQuantityTypeIdentifierEnvironmentalSoundReduction", "environmental_sound_reduction"),
    ("HKQuantityTypeIdentifierTimeInDaylight", "time_in_daylight"),
    ("HKQuantityTypeIdentifierUVExposure", "uv_exposure"),
    ("HKQuantityTypeIdentifierInhalerUsage", "inhaler_usage"),
    ("HKQuantityTypeIdentifierNumberOfTimesFallen", "number_of_times_fallen"),
    ("HKQuantityTypeIdentifierNumberOfAlcoholicBeverages", "number_of_alcoholic_beverages"),
    ("HKQuantityTypeIdentifierElectrodermalActivity", "electrodermal_activity"),
    ("HKQuantityTypeIdentifierDietaryWater", "hydration"),
    // Health Connect and Samsung Health, as named by the Android SDK.
    ("HEART_RATE", "heart_rate"),
    ("RESTING_HEART_RATE", "resting_heart_rate"),
    // Health Connect's heart-rate variability is RMSSD, not SDNN.
    ("HEART_RATE_VARIABILITY", "heart_rate_variability_rmssd"),
    ("OXYGEN_SATURATION", "oxygen_saturation"),
    ("BLOOD_GLUCOSE", "blood_glucose"),
    ("BLOOD_PRESSURE_SYSTOLIC", "blood_pressure_systolic"),
    ("BLOOD_PRESSURE_DIASTOLIC", "blood_pressure_diastolic"),
    ("RESPIRATORY_RATE", "respiratory_rate"),
    ("HEIGHT", "height"),
    ("WEIGHT", "weight"),
    ("LEAN_BODY_MASS", "lean_body_mass"),
    ("SKELETAL_MUSCLE_MASS", "skeletal_muscle_mass"),
    ("BODY_FAT_MASS", "body_fat_mass"),
    ("BODY_FAT", "body_fat_percentage"),
    ("BMI", "body_mass_index"),
    ("BODY_TEMPERATURE", "body_temperature"),
    ("VO2_MAX", "vo2_max"),
    ("STEP_COUNT", "steps"),
    ("ACTIVE_CALORIES_BURNED", "energy"),
    ("TOTAL_CALORIES_BURNED", "total_energy"),
    ("BASAL_METABOLIC_RATE", "basal_metabolic_rate"),
    ("FLOORS_CLIMBED", "flights_climbed"),
    ("DISTANCE", "distance_walking_running"),
    ("HYDRATION", "hydration"),
    ("POWER", "power"),
    ("SPEED", "speed"),
    ("CYCLING_PEDALING_CADENCE", "cadence"),
];

static BY_IDENTIFIER: LazyLock<HashMap<&'static str, &'static SeriesType>> = LazyLock::new(|| {
    IDENTIFIERS
        .iter()
        .filter_map(|(id, slug)| series_types::by_slug(slug).map(|t| (*id, t)))
        .collect()
});

/// The series type a wire identifier stands for; `None` for identifiers we do not store.
pub fn series_for(identifier: &str) -> Option<&'static SeriesType> {
    BY_IDENTIFIER.get(identifier).copied()
}

/// The HealthKit quantity types the contract lists (without `HKQuantityTypeIdentifier`): the
/// tests here and the unit grammar's (`ingest::units`) check each is mapped and converted.
pub const CONTRACT_HEALTHKIT_TYPES: &str = "HeartRate RestingHeartRate HeartRateVariabilitySDNN HeartRateRecoveryOneMinute \
    WalkingHeartRateAverage OxygenSaturation BloodGlucose BloodPressureSystolic \
    BloodPressureDiastolic RespiratoryRate Height BodyMass BodyFatPercentage BodyMassIndex \
    LeanBodyMass BodyTemperature VO2Max SixMinuteWalkTestDistance StepCount \
    ActiveEnergyBurned BasalEnergyBurned AppleStandTime AppleExerciseTime FlightsClimbed \
    DistanceWalkingRunning DistanceCycling DistanceSwimming DistanceDownhillSnowSports \
    DistancePaddleSports DistanceRowing DistanceSkatingSports DistanceWheelchair \
    DistanceCrossCountrySkiing WalkingStepLength WalkingSpeed WalkingDoubleSupportPercentage \
    WalkingAsymmetryPercentage AppleWalkingSteadiness StairDescentSpeed StairAscentSpeed \
    RunningPower RunningSpeed RunningVerticalOscillation RunningGroundContactTime \
    RunningStrideLength SwimmingStrokeCount EnvironmentalAudioExposure \
    HeadphoneAudioExposure EnvironmentalSoundReduction TimeInDaylight PhysicalEffort \
    WorkoutEffortScore EstimatedWorkoutEffortScore AppleMoveTime \
    AppleSleepingWristTemperature BloodAlcoholContent PeripheralPerfusionIndex \
    ForcedVitalCapacity ForcedExpiratoryVolume1 PeakExpiratoryFlowRate BasalBodyTemperature \
    AppleSleepingBreathingDisturbances WaistCircumference InsulinDelivery \
    NumberOfTimesFallen InhalerUsage NumberOfAlcoholicBeverages ElectrodermalActivity \
    UVExposure PushCount AtrialFibrillationBurden UnderwaterDepth WaterTemperature \
    CyclingCadence CyclingFunctionalThresholdPower CyclingPower CyclingSpeed";

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_row_maps_to_a_series() {
        let mut seen = HashSet::new();
        for (id, slug) in IDENTIFIERS {
            assert!(seen.insert(id), "{id} listed twice");
            let found = series_for(id).map(|t| t.slug);
            assert_eq!(found, Some(*slug), "{id}");
        }
    }

    #[test]
    fn both_families_and_the_contracts_names() {
        // Every HealthKit name the contract lists is mapped.
        let contract = CONTRACT_HEALTHKIT_TYPES;
        for name in contract.split_whitespace() {
            let id = format!("HKQuantityTypeIdentifier{name}");
            assert!(series_for(&id).is_some(), "{id} is not mapped");
        }
        let android = "HEART_RATE RESTING_HEART_RATE HEART_RATE_VARIABILITY OXYGEN_SATURATION \
            BLOOD_GLUCOSE BLOOD_PRESSURE_SYSTOLIC BLOOD_PRESSURE_DIASTOLIC RESPIRATORY_RATE HEIGHT \
            WEIGHT LEAN_BODY_MASS SKELETAL_MUSCLE_MASS BODY_FAT_MASS BODY_FAT BMI BODY_TEMPERATURE \
            VO2_MAX STEP_COUNT ACTIVE_CALORIES_BURNED BASAL_METABOLIC_RATE FLOORS_CLIMBED DISTANCE \
            HYDRATION POWER SPEED CYCLING_PEDALING_CADENCE TOTAL_CALORIES_BURNED";
        for id in android.split_whitespace() {
            assert!(series_for(id).is_some(), "{id} is not mapped");
        }
    }

    #[test]
    fn the_mappings_that_matter_most() {
        let slug = |id: &str| series_for(id).map(|t| t.slug);
        assert_eq!(slug("HKQuantityTypeIdentifierBodyMass"), Some("weight"));
        assert_eq!(slug("WEIGHT"), Some("weight"));
        assert_eq!(
            slug("HKQuantityTypeIdentifierHeartRateVariabilitySDNN"),
            Some("heart_rate_variability_sdnn")
        );
        assert_eq!(slug("HEART_RATE_VARIABILITY"), Some("heart_rate_variability_rmssd"));
        assert_eq!(slug("HKQuantityTypeIdentifierRowingSpeed"), Some("speed"));
        assert_eq!(slug("BASAL_METABOLIC_RATE"), Some("basal_metabolic_rate"));
        assert_eq!(slug("heart_rate"), None, "lookups are exact");
        assert_eq!(slug("HKCategoryTypeIdentifierMindfulSession"), None);
    }
}
