//! Every HealthKit quantity type the contract lists, in the unit HealthKit writes for a US
//! locale and in a metric one, through the export path: both store the same value in the
//! series' canonical unit. And every unit string HealthKit documents parses.

use schema::catalogue::identifiers::{CONTRACT_HEALTHKIT_TYPES, series_for};

use super::hkunit;
use super::{Origin, to_canonical};

/// A value in a unit: `(unit, value)`.
type Quantity = (&'static str, f64);

/// `(type, in a US unit, the same quantity in a metric unit, canonical value)`. Where a type
/// has one unit everywhere, both sides use it.
#[rustfmt::skip]
const TYPES: &[(&str, Quantity, Quantity, f64)] = &[
    ("HeartRate", ("count/min", 61.0), ("count/min", 61.0), 61.0),
    ("RestingHeartRate", ("count/min", 52.0), ("count/min", 52.0), 52.0),
    ("HeartRateVariabilitySDNN", ("ms", 48.2), ("ms", 48.2), 48.2),
    ("HeartRateRecoveryOneMinute", ("count/min", 23.0), ("count/min", 23.0), 23.0),
    ("WalkingHeartRateAverage", ("count/min", 98.0), ("count/min", 98.0), 98.0),
    ("OxygenSaturation", ("%", 0.97), ("%", 0.97), 97.0),
    ("BloodGlucose", ("mg/dL", 90.077_94), ("mmol<180.15588000005408>/L", 5.0), 90.077_94),
    ("BloodPressureSystolic", ("mmHg", 121.0), ("mmHg", 121.0), 121.0),
    ("BloodPressureDiastolic", ("mmHg", 79.0), ("mmHg", 79.0), 79.0),
    ("RespiratoryRate", ("count/min", 14.5), ("count/min", 14.5), 14.5),
    ("Height", ("in", 66.535_433), ("cm", 169.0), 169.0),
    ("BodyMass", ("lb", 143.300_470_420), ("kg", 65.0), 65.0),
    ("BodyFatPercentage", ("%", 0.242), ("%", 0.242), 24.2),
    ("BodyMassIndex", ("count", 22.8), ("count", 22.8), 22.8),
    ("LeanBodyMass", ("lb", 110.231_131), ("kg", 50.0), 50.0),
    ("BodyTemperature", ("degF", 98.6), ("degC", 37.0), 37.0),
    ("VO2Max", ("mL/min·kg", 44.1), ("mL/min·kg", 44.1), 44.1),
    ("SixMinuteWalkTestDistance", ("yd", 546.806_649), ("m", 500.0), 500.0),
    ("StepCount", ("count", 812.0), ("count", 812.0), 812.0),
    ("ActiveEnergyBurned", ("Cal", 10.0), ("kJ", 41.84), 10.0),
    ("BasalEnergyBurned", ("Cal", 70.0), ("kcal", 70.0), 70.0),
    ("AppleStandTime", ("min", 5.0), ("min", 5.0), 5.0),
    ("AppleExerciseTime", ("min", 12.0), ("min", 12.0), 12.0),
    ("FlightsClimbed", ("count", 3.0), ("count", 3.0), 3.0),
    ("DistanceWalkingRunning", ("mi", 1.0), ("km", 1.609_344), 1_609.344),
    ("DistanceCycling", ("mi", 12.0), ("km", 19.312_128), 19_312.128),
    ("DistanceSwimming", ("yd", 100.0), ("m", 91.44), 91.44),
    ("DistanceDownhillSnowSports", ("mi", 2.0), ("km", 3.218_688), 3_218.688),
    ("DistancePaddleSports", ("mi", 1.5), ("km", 2.414_016), 2_414.016),
    ("DistanceRowing", ("mi", 0.5), ("m", 804.672), 804.672),
    ("DistanceSkatingSports", ("mi", 3.0), ("km", 4.828_032), 4_828.032),
    ("DistanceWheelchair", ("mi", 0.25), ("m", 402.336), 402.336),
    ("DistanceCrossCountrySkiing", ("mi", 6.0), ("km", 9.656_064), 9_656.064),
    ("WalkingStepLength", ("in", 27.559_055), ("cm", 70.0), 70.0),
    ("WalkingSpeed", ("mi/hr", 3.0), ("km/hr", 4.828_032), 1.341_12),
    ("WalkingDoubleSupportPercentage", ("%", 0.28), ("%", 0.28), 28.0),
    ("WalkingAsymmetryPercentage", ("%", 0.04), ("%", 0.04), 4.0),
    ("AppleWalkingSteadiness", ("%", 0.91), ("%", 0.91), 91.0),
    ("StairDescentSpeed", ("ft/s", 1.5), ("m/s", 0.4572), 0.4572),
    ("StairAscentSpeed", ("ft/s", 1.2), ("m/s", 0.365_76), 0.365_76),
    ("RunningPower", ("W", 250.0), ("W", 250.0), 250.0),
    ("RunningSpeed", ("mi/hr", 6.0), ("km/hr", 9.656_064), 2.682_24),
    ("RunningVerticalOscillation", ("in", 3.5), ("cm", 8.89), 8.89),
    ("RunningGroundContactTime", ("ms", 245.0), ("ms", 245.0), 245.0),
    ("RunningStrideLength", ("ft", 3.5), ("m", 1.0668), 106.68),
    ("SwimmingStrokeCount", ("count", 24.0), ("count", 24.0), 24.0),
    ("EnvironmentalAudioExposure", ("dBASPL", 71.0), ("dBASPL", 71.0), 71.0),
    ("HeadphoneAudioExposure", ("dBASPL", 64.0), ("dBASPL", 64.0), 64.0),
    ("EnvironmentalSoundReduction", ("dBASPL", 21.0), ("dBASPL", 21.0), 21.0),
    ("TimeInDaylight", ("min", 34.0), ("min", 34.0), 34.0),
    ("PhysicalEffort", ("kcal/hr·kg", 3.2), ("kcal/hr·kg", 3.2), 3.2),
    ("WorkoutEffortScore", ("appleEffortScore", 7.0), ("appleEffortScore", 7.0), 7.0),
    ("EstimatedWorkoutEffortScore", ("appleEffortScore", 6.0), ("appleEffortScore", 6.0), 6.0),
    ("AppleMoveTime", ("min", 40.0), ("min", 40.0), 40.0),
    ("AppleSleepingWristTemperature", ("degF", 95.36), ("degC", 35.2), 35.2),
    ("BloodAlcoholContent", ("%", 0.0004), ("%", 0.0004), 0.04),
    ("PeripheralPerfusionIndex", ("%", 0.031), ("%", 0.031), 3.1),
    ("ForcedVitalCapacity", ("L", 4.6), ("L", 4.6), 4.6),
    ("ForcedExpiratoryVolume1", ("L", 3.7), ("L", 3.7), 3.7),
    ("PeakExpiratoryFlowRate", ("L/min", 520.0), ("L/min", 520.0), 520.0),
    ("BasalBodyTemperature", ("degF", 97.7), ("degC", 36.5), 36.5),
    ("AppleSleepingBreathingDisturbances", ("count", 2.0), ("count", 2.0), 2.0),
    ("WaistCircumference", ("in", 31.5), ("cm", 80.01), 80.01),
    ("InsulinDelivery", ("IU", 4.5), ("IU", 4.5), 4.5),
    ("NumberOfTimesFallen", ("count", 1.0), ("count", 1.0), 1.0),
    ("InhalerUsage", ("count", 2.0), ("count", 2.0), 2.0),
    ("NumberOfAlcoholicBeverages", ("count", 1.0), ("count", 1.0), 1.0),
    ("ElectrodermalActivity", ("mcS", 2.4), ("mcS", 2.4), 2.4),
    ("UVExposure", ("count", 5.0), ("count", 5.0), 5.0),
    ("PushCount", ("count", 120.0), ("count", 120.0), 120.0),
    ("AtrialFibrillationBurden", ("%", 0.02), ("%", 0.02), 2.0),
    ("UnderwaterDepth", ("ft", 10.0), ("m", 3.048), 3.048),
    ("WaterTemperature", ("degF", 68.0), ("degC", 20.0), 20.0),
    ("CyclingCadence", ("count/min", 88.0), ("count/min", 88.0), 88.0),
    ("CyclingFunctionalThresholdPower", ("W", 240.0), ("W", 240.0), 240.0),
    ("CyclingPower", ("W", 180.0), ("W", 180.0), 180.0),
    ("CyclingSpeed", ("mi/hr", 15.0), ("km/hr", 24.140_16), 6.7056),
];

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

#[test]
fn every_contract_type_stores_the_same_value_in_us_and_metric_units() {
    for (name, (us, us_value), (metric, metric_value), want) in TYPES {
        let id = format!("HKQuantityTypeIdentifier{name}");
        let series = series_for(&id).unwrap_or_else(|| panic!("{id} is not mapped"));
        for (unit, value) in [(us, us_value), (metric, metric_value)] {
            let got = to_canonical(series, Some(unit), *value, Origin::AppleExport);
            assert!(
                got.as_ref().is_ok_and(|v| close(*v, *want)),
                "{name}: {value} {unit} gave {got:?}, want {want} {}",
                series.unit
            );
        }
    }
}

#[test]
fn the_table_holds_every_type_the_contract_lists() {
    let mut listed: Vec<&str> = TYPES.iter().map(|t| t.0).collect();
    let mut contract: Vec<&str> = CONTRACT_HEALTHKIT_TYPES.split_whitespace().collect();
    listed.sort_unstable();
    contract.sort_unstable();
    assert_eq!(listed, contract);
}

/// Every unit string HealthKit's documentation gives (`HKUnit(from:)`), with each metric
/// prefix on a unit that takes one, parses; so do compounds of them.
#[test]
fn every_documented_healthkit_unit_string_parses() {
    let units = [
        // Mass, length, volume.
        "g",
        "oz",
        "lb",
        "st",
        "mol<180.15588000005408>",
        "m",
        "in",
        "ft",
        "yd",
        "mi",
        "L",
        "fl_oz_us",
        "fl_oz_imp",
        "cup_us",
        "cup_imp",
        "pt_us",
        "pt_imp",
        // Pressure, time, energy, temperature.
        "Pa",
        "mmHg",
        "cmAq",
        "atm",
        "inHg",
        "s",
        "min",
        "hr",
        "d",
        "J",
        "cal",
        "Cal",
        "kcal",
        // Conductance, scalars, hearing, frequency, potential, power, pharmacology.
        "S",
        "count",
        "%",
        "dBASPL",
        "dBHL",
        "Hz",
        "V",
        "W",
        "IU",
        // Illuminance, angles, effort, lens power.
        "lx",
        "rad",
        "deg",
        "appleEffortScore",
        "D",
    ];
    for unit in units {
        assert!(hkunit::parse(unit).is_some(), "{unit}");
    }
    for t in ["degC", "degF", "K"] {
        assert!(hkunit::conversion(t, "degC").is_some(), "{t}");
    }
    let prefixes = ["f", "p", "n", "mc", "m", "c", "d", "da", "h", "k", "M", "G", "T"];
    for base in ["g", "m", "L", "Pa", "s", "J", "cal", "S", "Hz", "V", "W", "mol", "lx", "rad"] {
        for p in prefixes {
            let unit = format!("{p}{base}");
            assert!(hkunit::parse(&unit).is_some(), "{unit}");
        }
    }
    for compound in [
        "count/min",
        "mL/min·kg",
        "mL/(kg·min)",
        "kcal/hr·kg",
        "mi/hr",
        "km/hr",
        "m/s",
        "ft/s",
        "mg/dL",
        "mmol<180.15588000005408>/L",
        "L/min",
        "kg/m^2",
        "IU/hr",
        "dBASPL",
        "mcg",
        "cm^3",
    ] {
        assert!(hkunit::parse(compound).is_some(), "{compound}");
    }
}
