//! A user's record as FHIR R4 resources, one JSON object a line (`fhir.ndjson`): a `Patient`,
//! an `Observation` for each sample of a series that has a LOINC code (a blood pressure
//! reading as the 85354-9 panel), each sleep session (93832-4 with its stages) and each workout
//! (73985-4 with its figures). What maps to what, and what is left out, is the README's table
//! ("Exports"); the codes are those of the FHIR vital-signs profiles and the HL7 Physical
//! Activity IG where they have one.
//!
//! Resource ids are made of `[A-Za-z0-9.-]` and stay under 64 characters; every time carries
//! its offset and seconds; no empty array, `null` or empty string is written.

use schema::catalogue::series_types::{SeriesId, id as series};
use schema::ids::UserId;
use schema::timeseries::SeriesPoint;
use schema::users::User;
use serde_json::{Value, json};

use crate::routes::events::{SleepOut, WorkoutOut};

const LOINC: &str = "http://loinc.org";
const UCUM: &str = "http://unitsofmeasure.org";
const CATEGORY: &str = "http://terminology.hl7.org/CodeSystem/observation-category";
/// This service's own codes, where LOINC has none we could confirm.
const OWN: &str = "urn:wearhouse:fhir";

/// How a series' samples are told in FHIR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Coding {
    pub loinc: &'static str,
    pub display: &'static str,
    /// The UCUM code of the value (the series' stored unit).
    pub ucum: &'static str,
    pub category: &'static str,
    /// The vital-signs profile the observation conforms to, if one.
    pub profile: Option<&'static str>,
}

const fn c(
    loinc: &'static str,
    display: &'static str,
    ucum: &'static str,
    category: &'static str,
    profile: Option<&'static str>,
) -> Coding {
    Coding { loinc, display, ucum, category, profile }
}

const VS: &str = "vital-signs";
const ACTIVITY: &str = "activity";

/// Series (`schema::catalogue::series_types`) that map, and how. Blood pressure
/// ([`SYSTOLIC`], [`DIASTOLIC`]) goes as a panel of both ([`blood_pressure`]).
pub(crate) const SERIES: [(SeriesId, Coding); 17] = [
    (series("heart_rate"), c("8867-4", "Heart rate", "/min", VS, Some("heartrate"))),
    (series("resting_heart_rate"), c("40443-4", "Heart rate --resting", "/min", VS, None)),
    (
        series("heart_rate_variability_sdnn"),
        c("80404-7", "R-R interval.standard deviation (Heart rate variability)", "ms", VS, None),
    ),
    (
        series("oxygen_saturation"),
        c("2708-6", "Oxygen saturation in Arterial blood", "%", VS, Some("oxygensat")),
    ),
    (
        series("blood_glucose"),
        c("2339-0", "Glucose [Mass/volume] in Blood", "mg/dL", "laboratory", None),
    ),
    (series("respiratory_rate"), c("9279-1", "Respiratory rate", "/min", VS, Some("resprate"))),
    (series("height"), c("8302-2", "Body height", "cm", VS, Some("bodyheight"))),
    (series("weight"), c("29463-7", "Body weight", "kg", VS, Some("bodyweight"))),
    (series("body_fat_percentage"), c("41982-0", "Percentage of body fat Measured", "%", VS, None)),
    (
        series("body_mass_index"),
        c("39156-5", "Body mass index (BMI) [Ratio]", "kg/m2", VS, Some("bmi")),
    ),
    (series("lean_body_mass"), c("91557-9", "Lean body weight", "kg", VS, None)),
    (series("body_temperature"), c("8310-5", "Body temperature", "Cel", VS, Some("bodytemp"))),
    (
        series("waist_circumference"),
        c("8280-0", "Waist Circumference at umbilicus by Tape measure", "cm", VS, None),
    ),
    (
        series("steps"),
        c("55423-8", "Number of steps in unspecified time Pedometer", "{steps}", ACTIVITY, None),
    ),
    (series("energy"), c("41981-2", "Calories burned", "kcal", ACTIVITY, None)),
    (series("exercise_time"), c("55411-3", "Exercise duration", "min", ACTIVITY, None)),
    (
        series("flights_climbed"),
        c("100304-5", "Flights climbed [#] Reporting Period", "{flights}", ACTIVITY, None),
    ),
];

pub(crate) const SYSTOLIC: SeriesId = series("blood_pressure_systolic");
pub(crate) const DIASTOLIC: SeriesId = series("blood_pressure_diastolic");

/// The coding of a series, if it maps.
pub(crate) fn coding(series: SeriesId) -> Option<&'static Coding> {
    SERIES.iter().find(|(id, _)| *id == series).map(|(_, c)| c)
}

fn category(code: &str) -> Value {
    json!([{"coding": [{"system": CATEGORY, "code": code}]}])
}

fn loinc(code: &str, display: &str) -> Value {
    json!({"coding": [{"system": LOINC, "code": code, "display": display}]})
}

fn quantity(value: f64, ucum: &str) -> Value {
    json!({"value": value, "unit": ucum, "system": UCUM, "code": ucum})
}

fn minutes(value: i64) -> Value {
    json!({"value": value, "unit": "min", "system": UCUM, "code": "min"})
}

/// The reference every observation's subject is.
pub(crate) fn subject(user: UserId) -> Value {
    json!({"reference": format!("Patient/{user}")})
}

/// The user as a `Patient`: their id (and the integrator's id for them), their name when known.
pub(crate) fn patient(user: &User) -> Value {
    let mut identifier =
        vec![json!({"system": "urn:wearhouse:user", "value": user.id.to_string()})];
    if let Some(ext) = user.external_user_id.as_deref().filter(|e| !e.is_empty()) {
        identifier.push(json!({"system": "urn:wearhouse:external-user-id", "value": ext}));
    }
    let mut p =
        json!({"resourceType": "Patient", "id": user.id.to_string(), "identifier": identifier});
    let given: Vec<&str> =
        user.first_name.iter().map(String::as_str).filter(|n| !n.is_empty()).collect();
    let family = user.last_name.as_deref().filter(|n| !n.is_empty());
    if !given.is_empty() || family.is_some() {
        let mut name = json!({});
        if !given.is_empty() {
            name["given"] = json!(given);
        }
        if let Some(f) = family {
            name["family"] = json!(f);
        }
        p["name"] = json!([name]);
    }
    p
}

/// An observation's id: `<what>-<n>` made of the allowed characters, at most 64 of them.
fn id(what: &str, n: impl std::fmt::Display) -> String {
    let mut s = format!("{what}-{n}");
    s.retain(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    s.truncate(64);
    s
}

/// A sample as an `Observation`, if its series maps (not blood pressure: [`blood_pressure`]).
/// `source` is the sample's source's place in the user's sources (it keeps ids unique).
pub(crate) fn sample(
    p: &SeriesPoint,
    user: UserId,
    local_time: &str,
    source: usize,
) -> Option<Value> {
    let c = coding(p.series_type_id)?;
    let mut o = json!({
        "resourceType": "Observation",
        "id": id(&format!("s{}-{source}", p.series_type_id), p.ts.timestamp_millis()),
        "status": "final",
        "category": category(c.category),
        "code": loinc(c.loinc, c.display),
        "subject": subject(user),
        "effectiveDateTime": local_time,
        "valueQuantity": quantity(p.value, c.ucum),
    });
    if let Some(profile) = c.profile {
        o["meta"] =
            json!({"profile": [format!("http://hl7.org/fhir/StructureDefinition/{profile}")]});
    }
    Some(o)
}

/// A blood pressure reading as the vital-signs panel, with the components it has.
pub(crate) fn blood_pressure(
    user: UserId,
    at_millis: i64,
    local_time: &str,
    source: usize,
    systolic: Option<f64>,
    diastolic: Option<f64>,
) -> Option<Value> {
    let mut component = Vec::new();
    if let Some(v) = systolic {
        component.push(json!({"code": loinc("8480-6", "Systolic blood pressure"),
                              "valueQuantity": quantity(v, "mm[Hg]")}));
    }
    if let Some(v) = diastolic {
        component.push(json!({"code": loinc("8462-4", "Diastolic blood pressure"),
                              "valueQuantity": quantity(v, "mm[Hg]")}));
    }
    if component.is_empty() {
        return None;
    }
    Some(json!({
        "resourceType": "Observation",
        "id": id(&format!("bp-{source}"), at_millis),
        "meta": {"profile": ["http://hl7.org/fhir/StructureDefinition/bp"]},
        "status": "final",
        "category": category(VS),
        "code": loinc("85354-9", "Blood pressure panel with all children optional"),
        "subject": subject(user),
        "effectiveDateTime": local_time,
        "component": component,
    }))
}

/// A sleep session: 93832-4 "Sleep duration" over its period, time asleep as the value, the
/// stages as components (awake in this service's own code: no LOINC code for it could be
/// confirmed).
pub(crate) fn sleep(s: &SleepOut, user: UserId) -> Value {
    let asleep = s.sleep_duration_seconds.map(|v| i64::from(v) / 60).unwrap_or_else(|| {
        i64::from(s.stages.light_minutes + s.stages.deep_minutes + s.stages.rem_minutes)
    });
    let stage = |code: &str, display: &str, value: i32| json!({"code": loinc(code, display), "valueQuantity": minutes(i64::from(value))});
    let mut component = vec![
        stage("93831-6", "Deep sleep duration", s.stages.deep_minutes),
        stage("93830-8", "Light sleep duration", s.stages.light_minutes),
        stage("93829-0", "REM sleep duration", s.stages.rem_minutes),
    ];
    component.push(json!({
        "code": {"coding": [{"system": format!("{OWN}:sleep-stage"), "code": "awake", "display": "Awake duration"}],
                 "text": "Awake duration"},
        "valueQuantity": minutes(i64::from(s.stages.awake_minutes)),
    }));
    let mut o = json!({
        "resourceType": "Observation",
        "id": id("sleep", s.id),
        "status": "final",
        "category": category(ACTIVITY),
        "code": loinc("93832-4", "Sleep duration"),
        "subject": subject(user),
        "effectivePeriod": {"start": s.start_time, "end": s.end_time},
        "valueQuantity": minutes(asleep),
        "component": component,
    });
    if s.is_nap {
        o["note"] = json!([{"text": "a nap"}]);
    }
    o
}

/// LOINC's answers (list LL734-5) for the workout types that have one we could confirm.
fn activity_answer(kind: &str) -> Option<(&'static str, &'static str)> {
    match kind {
        "running" => Some(("LA11836-6", "Running")),
        "strength_training" | "weightlifting" | "functional_strength_training" => {
            Some(("LA11839-0", "Weights"))
        }
        _ => None,
    }
}

/// A workout: 73985-4 "Exercise activity" over its period, valued with its type (LOINC's answer
/// where there is one, else this service's code), its figures as components. One resource a
/// workout (the Physical Activity IG's panel-and-members form would be several).
pub(crate) fn workout(w: &WorkoutOut, user: UserId) -> Value {
    let mut coding = Vec::new();
    if let Some((code, display)) = activity_answer(&w.kind) {
        coding.push(json!({"system": LOINC, "code": code, "display": display}));
    }
    coding.push(json!({"system": format!("{OWN}:workout-type"), "code": w.kind}));
    let mut component = vec![json!({
        "code": loinc("55411-3", "Exercise duration"),
        "valueQuantity": json!({"value": (f64::from(w.duration_seconds) / 60.0 * 10.0).round() / 10.0,
                                "unit": "min", "system": UCUM, "code": "min"}),
    })];
    if let Some(kcal) = w.calories_kcal {
        component.push(
            json!({"code": loinc("55424-6", "Calories burned in unspecified time Pedometer"),
                              "valueQuantity": quantity(kcal, "kcal")}),
        );
    }
    if let Some(bpm) = w.avg_heart_rate_bpm {
        component.push(
            json!({"code": loinc("55425-3", "Heart rate unspecified time mean by Pedometer"),
                              "valueQuantity": quantity(bpm as f64, "/min")}),
        );
    }
    if let Some(bpm) = w.max_heart_rate_bpm {
        component.push(
            json!({"code": loinc("55426-1", "Heart rate unspecified time maximum by Pedometer"),
                              "valueQuantity": quantity(bpm as f64, "/min")}),
        );
    }
    if let Some(m) = w.distance_meters {
        component.push(json!({
            "code": {"coding": [{"system": format!("{OWN}:workout-figure"), "code": "distance", "display": "Distance"}],
                     "text": "Distance"},
            "valueQuantity": quantity(m, "m"),
        }));
    }
    json!({
        "resourceType": "Observation",
        "id": id("workout", w.id),
        "status": "final",
        "category": category(ACTIVITY),
        "code": loinc("73985-4", "Exercise activity"),
        "subject": subject(user),
        "effectivePeriod": {"start": w.start_time, "end": w.end_time},
        "valueCodeableConcept": {"coding": coding, "text": w.kind},
        "component": component,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn point(series: SeriesId, value: f64) -> SeriesPoint {
        SeriesPoint {
            ts: chrono::DateTime::from_timestamp(1_773_126_000, 0).unwrap_or_default(),
            series_type_id: series,
            data_source_id: Uuid::nil(),
            value,
            zone_offset: Some(60),
            is_daily_total: None,
        }
    }

    #[test]
    fn samples_map_by_series_and_ids_keep_to_fhir_s_alphabet() {
        let user = UserId(Uuid::from_u128(7));
        let o = sample(&point(series("heart_rate"), 62.0), user, "2026-03-10T08:00:00+01:00", 3)
            .expect("maps");
        assert_eq!(o["code"]["coding"][0]["code"], "8867-4");
        assert_eq!(o["valueQuantity"]["code"], "/min");
        assert_eq!(o["category"][0]["coding"][0]["code"], "vital-signs");
        assert_eq!(o["id"], "s1-3-1773126000000");
        assert!(sample(&point(SYSTOLIC, 120.0), user, "x", 0).is_none(), "as a panel");
        assert!(sample(&point(SeriesId(209), 10.0), user, "x", 0).is_none(), "elevation: left out");
        assert_eq!(id(&"a_b:c".repeat(30), 1).len(), 64);
        assert!(id("x_y", "a:b").chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
        let bp = blood_pressure(user, 1, "2026-03-10T08:00:00Z", 0, Some(120.0), None).expect("bp");
        assert_eq!(bp["component"].as_array().map(Vec::len), Some(1));
        assert!(blood_pressure(user, 1, "x", 0, None, None).is_none());
        // Every mapped unit is stored in the unit its UCUM code names.
        for (series, c) in SERIES {
            let unit = schema::catalogue::series_types::by_id(series).map(|t| t.unit);
            let stored = match c.ucum {
                "/min" => &["bpm", "brpm"][..],
                "%" => &["percent"],
                "Cel" => &["celsius"],
                "mg/dL" => &["mg_dl"],
                "kg/m2" => &["kg_m2"],
                "min" => &["minutes"],
                "{steps}" | "{flights}" => &["count"],
                other => &[other][..],
            };
            assert!(unit.is_some_and(|u| stored.contains(&u)), "{series}: {unit:?} as {}", c.ucum);
        }
    }
}
