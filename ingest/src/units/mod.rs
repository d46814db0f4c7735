//! Unit conversion into each series' canonical unit (`SeriesType::unit`).
//!
//! Conversion goes by the unit the client sent and by what each real client is known to mean by
//! it — never by the size of the number. The one case where a unit string alone is ambiguous is
//! HealthKit's `%`: the iOS SDK sends SpO2 already multiplied by 100 but every other percentage
//! (body fat, walking asymmetry, AFib burden, …) as a fraction, and Apple Health exports write
//! every percentage as a fraction. Health Connect and Samsung send 0–100.
//!
//! A unit we do not know is an error for the caller to report, not a value to store.

pub(crate) mod hkunit;

#[cfg(test)]
mod healthkit_tests;

use std::collections::HashMap;
use std::sync::LazyLock;

use schema::catalogue::series_types::SeriesType;

/// Which client put a value on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// The iOS SDK (HealthKit).
    Ios,
    /// The Android SDK reading Health Connect.
    HealthConnect,
    /// The Android SDK reading Samsung Health.
    Samsung,
    /// An Apple Health `export.xml`.
    AppleExport,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UnitError {
    #[error("missing unit (expected {expected})")]
    Missing { expected: &'static str },
    #[error("unit '{unit}' is not supported for {series} (stored in {expected})")]
    Unknown { unit: String, series: &'static str, expected: &'static str },
}

impl UnitError {
    /// How a run reports a record dropped for its unit: the reason, and an example naming the
    /// record's type (`kind`) and, for an unknown unit, the unit and the series.
    pub(crate) fn dropped(&self, kind: &str) -> (&'static str, String) {
        match self {
            UnitError::Missing { .. } => ("record.missing_unit", kind.to_string()),
            UnitError::Unknown { .. } => ("record.unknown_unit", format!("{kind}: {self}")),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Conv {
    /// value × factor
    Factor(f64),
    /// (value + offset) × factor
    Affine { offset: f64, factor: f64 },
}

/// `(canonical unit, unit on the wire, conversion)`. Unit strings are matched exactly (`Cal`
/// is a kilocalorie, `cal` a calorie).
pub(crate) const CONVERSIONS: &[(&str, &str, f64)] = &[
    ("bpm", "bpm", 1.0),
    ("bpm", "count/min", 1.0),
    ("bpm", "beats/min", 1.0),
    ("bpm", "/min", 1.0),
    ("ms", "ms", 1.0),
    ("ms", "s", 1000.0),
    ("mg_dl", "mg/dL", 1.0),
    ("mg_dl", "mg/dl", 1.0),
    // Glucose: 1 mmol/L = 18.0182 mg/dL (molar mass 180.182 g/mol).
    ("mg_dl", "mmol/L", 18.0182),
    ("mg_dl", "mmol/l", 18.0182),
    ("mmHg", "mmHg", 1.0),
    ("brpm", "breaths/min", 1.0),
    ("brpm", "count/min", 1.0),
    ("brpm", "brpm", 1.0),
    ("brpm", "/min", 1.0),
    ("liters", "L", 1.0),
    ("liters", "mL", 0.001),
    ("L/min", "L/min", 1.0),
    ("cm", "cm", 1.0),
    ("cm", "m", 100.0),
    ("cm", "mm", 0.1),
    ("cm", "in", 2.54),
    ("cm", "ft", 30.48),
    ("kg", "kg", 1.0),
    ("kg", "g", 0.001),
    ("kg", "lb", 0.453_592_37),
    ("kg", "oz", 0.028_349_523_125),
    ("kg", "st", 6.350_293_18),
    ("kg_m2", "kg/m²", 1.0),
    ("kg_m2", "kg/m^2", 1.0),
    ("kg_m2", "kg/m2", 1.0),
    ("kg_m2", "count", 1.0),
    ("ml_kg_min", "mL/kg/min", 1.0),
    ("ml_kg_min", "ml/kg/min", 1.0),
    ("ml_kg_min", "mL/min·kg", 1.0),
    ("ml_kg_min", "ml/(kg·min)", 1.0),
    ("meters", "m", 1.0),
    ("meters", "km", 1000.0),
    ("meters", "cm", 0.01),
    ("meters", "mi", 1609.344),
    ("meters", "ft", 0.3048),
    ("meters", "yd", 0.9144),
    ("years", "yr", 1.0),
    ("years", "years", 1.0),
    // HealthKit's `Cal` is the large calorie, i.e. kcal.
    ("kcal", "kcal", 1.0),
    ("kcal", "Cal", 1.0),
    ("kcal", "cal", 0.001),
    ("kcal", "kJ", 1.0 / 4.184),
    ("kcal/day", "kcal/day", 1.0),
    ("kcal/day", "Cal/d", 1.0),
    ("minutes", "min", 1.0),
    ("minutes", "s", 1.0 / 60.0),
    ("minutes", "ms", 1.0 / 60_000.0),
    ("minutes", "h", 60.0),
    ("minutes", "hr", 60.0),
    ("met", "kcal/hr·kg", 1.0),
    ("met", "kcal/(kg·hr)", 1.0),
    ("met", "kcal/kg/hr", 1.0),
    ("met", "MET", 1.0),
    ("m_per_s", "m/s", 1.0),
    ("m_per_s", "km/h", 1.0 / 3.6),
    ("m_per_s", "km/hr", 1.0 / 3.6),
    ("m_per_s", "mph", 0.447_04),
    ("watts", "W", 1.0),
    ("watts", "kW", 1000.0),
    ("rpm", "rpm", 1.0),
    ("rpm", "count/min", 1.0),
    ("rpm", "spm", 1.0),
    ("dB", "dBASPL", 1.0),
    ("dB", "dB", 1.0),
    ("degrees", "deg", 1.0),
    ("microsiemens", "mcS", 1.0),
    ("microsiemens", "µS", 1.0),
    ("microsiemens", "S", 1_000_000.0),
    ("IU", "IU", 1.0),
    ("mL", "mL", 1.0),
    ("mL", "ml", 1.0),
    ("mL", "L", 1000.0),
    ("mL", "fl_oz_us", 29.573_529_562_5),
    ("count", "count", 1.0),
    ("score", "score", 1.0),
    ("score", "count", 1.0),
    // HealthKit's unit of workout effort (1–10).
    ("score", "appleEffortScore", 1.0),
    ("percent", "%", 1.0),
    ("percent", "percent", 1.0),
];

/// Temperatures are affine: `(canonical, wire, offset, factor)`.
const AFFINE: &[(&str, &str, f64, f64)] = &[
    ("celsius", "degC", 0.0, 1.0),
    ("celsius", "°C", 0.0, 1.0),
    ("celsius", "C", 0.0, 1.0),
    ("celsius", "celsius", 0.0, 1.0),
    ("celsius", "degF", -32.0, 5.0 / 9.0),
    ("celsius", "°F", -32.0, 5.0 / 9.0),
    ("celsius", "F", -32.0, 5.0 / 9.0),
];

/// Canonical units that are plain numbers: a missing unit means the number itself.
const DIMENSIONLESS: &[&str] = &["count", "score"];

/// Both tables by `(canonical, wire)`: every record goes through here.
static TABLE: LazyLock<HashMap<(&'static str, &'static str), Conv>> = LazyLock::new(|| {
    let factors = CONVERSIONS.iter().map(|(c, u, f)| ((*c, *u), Conv::Factor(*f)));
    let affine =
        AFFINE.iter().map(|(c, u, o, f)| ((*c, *u), Conv::Affine { offset: *o, factor: *f }));
    factors.chain(affine).collect()
});

fn conversion(canonical: &str, unit: &str) -> Option<Conv> {
    if let Some(conv) = TABLE.get(&(canonical, unit)) {
        return Some(*conv);
    }
    // Any other spelling HealthKit can write (`mi/hr`, `mmol<180.15588000005408>/L`, `kcal/d`,
    // `dL`, …), by HealthKit's unit grammar, when its dimension is the series'.
    // Never for `%` (see `percent_is_fraction`): a percentage means what its client means.
    if unit.contains('%') {
        return None;
    }
    let (offset, factor) = hkunit::conversion(unit, as_healthkit(canonical)?)?;
    Some(if offset == 0.0 { Conv::Factor(factor) } else { Conv::Affine { offset, factor } })
}

/// A canonical unit in HealthKit's grammar. None for units whose meaning a grammar cannot carry
/// (`percent`: whether `%` is a fraction depends on the client; `score`).
fn as_healthkit(canonical: &str) -> Option<&'static str> {
    Some(match canonical {
        "bpm" | "brpm" | "rpm" => "count/min",
        "ms" => "ms",
        "mg_dl" => "mg/dL",
        "mmHg" => "mmHg",
        "liters" => "L",
        "L/min" => "L/min",
        "cm" => "cm",
        "kg" => "kg",
        "kg_m2" => "kg/m^2",
        "ml_kg_min" => "mL/(kg·min)",
        "meters" => "m",
        "years" => "yr",
        "kcal" => "kcal",
        "kcal/day" => "kcal/d",
        "minutes" => "min",
        "met" => "kcal/(kg·hr)",
        "m_per_s" => "m/s",
        "watts" => "W",
        "dB" => "dBASPL",
        "microsiemens" => "mcS",
        "degrees" => "deg",
        "IU" => "IU",
        "mL" => "mL",
        "count" => "count",
        "celsius" => "degC",
        _ => return None,
    })
}

/// True where this origin writes a `%` value as a fraction (0.242 for 24.2 %).
fn percent_is_fraction(series: &SeriesType, origin: Origin) -> bool {
    match origin {
        // The iOS SDK multiplies SpO2 by 100 itself, and nothing else.
        Origin::Ios => series.slug != "oxygen_saturation",
        Origin::AppleExport => true,
        Origin::HealthConnect | Origin::Samsung => false,
    }
}

/// Seconds from a duration in its unit: the one table for SDK workout statistics (Samsung
/// sends milliseconds) and export workouts (`durationUnit`). No unit means seconds; `None` for
/// a unit we do not know.
pub(crate) fn duration_seconds(value: f64, unit: Option<&str>) -> Option<f64> {
    Some(match unit.map(str::trim).unwrap_or("s") {
        "ms" => value / 1000.0,
        "s" | "" | "sec" => value,
        "min" => value * 60.0,
        "h" | "hr" => value * 3600.0,
        _ => return None,
    })
}

/// Converts a value sent with `unit` by `origin` into `series`' canonical unit.
pub(crate) fn to_canonical(
    series: &SeriesType,
    unit: Option<&str>,
    value: f64,
    origin: Origin,
) -> Result<f64, UnitError> {
    let canonical = series.unit;
    let unit = unit.map(str::trim).filter(|u| !u.is_empty());
    let Some(unit) = unit else {
        return if DIMENSIONLESS.contains(&canonical) {
            Ok(value)
        } else {
            Err(UnitError::Missing { expected: canonical })
        };
    };
    let conv = conversion(canonical, unit).ok_or_else(|| UnitError::Unknown {
        unit: unit.to_string(),
        series: series.slug,
        expected: canonical,
    })?;
    let mut out = match conv {
        Conv::Factor(f) => value * f,
        Conv::Affine { offset, factor } => (value + offset) * factor,
    };
    if canonical == "percent" && unit == "%" && percent_is_fraction(series, origin) {
        out *= 100.0;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_every_unit_clients_send() {
        let cases = [(Some("ms"), 90_000.0), (Some("s"), 90.0), (None, 90.0), (Some("min"), 1.5)];
        for (unit, value) in cases {
            assert_eq!(duration_seconds(value, unit), Some(90.0), "{unit:?}");
        }
        assert_eq!(duration_seconds(0.025, Some("hr")), Some(90.0));
        assert_eq!(duration_seconds(1.0, Some("fortnight")), None);
    }
    use schema::catalogue::series_types::{SERIES_TYPES, by_slug};

    fn series(slug: &str) -> &'static SeriesType {
        by_slug(slug).unwrap_or_else(|| panic!("no series {slug}"))
    }

    fn conv(slug: &str, unit: Option<&str>, value: f64, origin: Origin) -> f64 {
        to_canonical(series(slug), unit, value, origin).unwrap_or(f64::NAN)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn us_spellings_convert_by_healthkit_grammar_and_other_dimensions_are_refused() {
        let e = Origin::AppleExport;
        let cases = [
            ("walking_speed", "mi/hr", 1.0, 0.447_04),
            ("walking_speed", "ft/s", 1.0, 0.3048),
            ("distance_walking_running", "mi", 1.0, 1_609.344),
            ("walking_step_length", "ft", 1.0, 30.48),
            ("weight", "lb", 1.0, 0.453_592_37),
            ("body_temperature", "degF", 98.6, 37.0),
            ("body_temperature", "K", 310.15, 37.0),
            ("blood_glucose", "mmol<180.15588000005408>/L", 5.0, 90.077_94),
            ("energy", "kJ", 4.184, 1.0),
            ("vo2_max", "mL/min·kg", 40.0, 40.0),
            ("physical_effort", "kcal/hr·kg", 3.0, 3.0),
            ("environmental_audio_exposure", "dBASPL", 70.0, 70.0),
        ];
        for (slug, unit, value, want) in cases {
            let got = conv(slug, Some(unit), value, e);
            assert!(close(got, want), "{slug} in {unit}: {got}, want {want}");
        }
        for (slug, unit) in
            [("walking_speed", "mi"), ("weight", "L"), ("steps", "%"), ("heart_rate", "mmHg")]
        {
            let got = to_canonical(series(slug), Some(unit), 1.0, e);
            assert!(matches!(got, Err(UnitError::Unknown { .. })), "{slug} in {unit}: {got:?}");
        }
    }

    #[test]
    fn every_row_converts_into_a_canonical_unit_in_use() {
        let units: Vec<&str> = SERIES_TYPES.iter().map(|t| t.unit).collect();
        for (canonical, wire, factor) in CONVERSIONS {
            assert!(units.contains(canonical), "{canonical} is no series' unit");
            let t = SERIES_TYPES.iter().find(|t| t.unit == *canonical).unwrap_or(&SERIES_TYPES[0]);
            let got = to_canonical(t, Some(wire), 2.0, Origin::HealthConnect);
            assert!(
                got.as_ref().is_ok_and(|v| close(*v, 2.0 * factor)),
                "{canonical} <- {wire}: {got:?}"
            );
        }
        for (canonical, wire, offset, factor) in AFFINE {
            let t = SERIES_TYPES.iter().find(|t| t.unit == *canonical).unwrap_or(&SERIES_TYPES[0]);
            let got = to_canonical(t, Some(wire), 50.0, Origin::Ios);
            assert!(
                got.as_ref().is_ok_and(|v| close(*v, (50.0 + offset) * factor)),
                "{wire}: {got:?}"
            );
        }
    }

    #[test]
    fn every_canonical_unit_accepts_itself_or_is_listed() {
        for t in SERIES_TYPES {
            let ok = to_canonical(t, Some(t.unit), 1.0, Origin::HealthConnect).is_ok()
                || CONVERSIONS.iter().any(|(c, _, _)| *c == t.unit)
                || AFFINE.iter().any(|(c, _, _, _)| *c == t.unit);
            assert!(ok, "{} ({}) has no accepted unit", t.slug, t.unit);
        }
    }

    #[test]
    fn what_each_client_means() {
        // iOS: SpO2 already in percent, body fat and walking percentages as fractions.
        assert!(close(conv("oxygen_saturation", Some("%"), 97.0, Origin::Ios), 97.0));
        assert!(close(conv("body_fat_percentage", Some("%"), 0.242, Origin::Ios), 24.2));
        assert!(close(conv("walking_asymmetry_percentage", Some("%"), 0.05, Origin::Ios), 5.0));
        assert!(close(conv("weather_humidity", Some("%"), 0.61, Origin::Ios), 61.0));
        // Android: 0–100 as is.
        assert!(close(conv("body_fat_percentage", Some("%"), 24.2, Origin::HealthConnect), 24.2));
        assert!(close(conv("oxygen_saturation", Some("%"), 98.0, Origin::Samsung), 98.0));
        // Exports: every percentage a fraction.
        assert!(close(conv("oxygen_saturation", Some("%"), 0.97, Origin::AppleExport), 97.0));
        // Energy: `Cal` is kcal; kJ converted.
        assert!(close(conv("energy", Some("Cal"), 25.315, Origin::Ios), 25.315));
        assert!(close(conv("energy", Some("kJ"), 418.4, Origin::HealthConnect), 100.0));
        // Glucose: mmol/L from Health Connect and Samsung, mg/dL from iOS, molar mass in exports.
        assert!((conv("blood_glucose", Some("mmol/L"), 6.33, Origin::Samsung) - 114.0).abs() < 0.2);
        assert!(close(conv("blood_glucose", Some("mg/dL"), 114.0, Origin::Ios), 114.0));
        let export =
            conv("blood_glucose", Some("mmol<180.15588000005408>/L"), 6.0, Origin::AppleExport);
        assert!((export - 108.09).abs() < 0.01, "{export}");
        // Lengths, durations, temperatures.
        assert!(close(conv("height", Some("m"), 1.69, Origin::Ios), 169.0));
        assert!(close(conv("walking_step_length", Some("m"), 0.7, Origin::Ios), 70.0));
        assert!(close(conv("exercise_time", Some("s"), 120.0, Origin::Ios), 2.0));
        assert!(close(conv("body_temperature", Some("degF"), 98.6, Origin::Ios), 37.0));
        assert!(close(conv("hydration", Some("L"), 0.5, Origin::Ios), 500.0));
        // Counts may come without a unit; nothing else may.
        assert!(close(conv("steps", None, 587.0, Origin::Samsung), 587.0));
        assert_eq!(
            to_canonical(series("heart_rate"), None, 60.0, Origin::Ios),
            Err(UnitError::Missing { expected: "bpm" })
        );
        assert!(matches!(
            to_canonical(series("heart_rate"), Some("furlongs"), 60.0, Origin::Ios),
            Err(UnitError::Unknown { .. })
        ));
    }
}
