//! A generator of realistic Apple Health exports, as an iPhone + Apple Watch write them:
//! records grouped by type (heart rate every five minutes, active energy every two, basal
//! energy, steps and distance from both devices, flights, stand and exercise minutes, SpO2 as
//! fractions, respiratory rate, HRV with its beat list, resting and walking heart rate,
//! weight), a night of sleep stages from the watch with the phone's in-bed interval, menstrual
//! flow, category records wearhouse does not use, then workouts with statistics, events,
//! metadata and route references, and one activity summary a day (`Shape::Watch`, about 0.6 MB
//! a day). `Shape::Varied` is the other kind of export users hand over: years of many small
//! records of two dozen types from a dozen apps and devices (one or two a type), in US units,
//! interleaved in time, a third of them with metadata (about 0.5 MB a day). Deterministic for a seed. Used by the
//! tests and the benchmarks (`cargo run --release --example gen_export -- --days 1650 --out
//! export.xml` is about 1 GB).

use std::io::{self, Write};

use chrono::{Duration, NaiveDate, NaiveDateTime};

use crate::payloads::Rng;

#[derive(Debug, Clone)]
pub struct ExportSpec {
    pub days: u32,
    pub start: NaiveDate,
    /// Minutes east of UTC of every timestamp.
    pub offset_minutes: i32,
    pub seed: u64,
    pub shape: Shape,
    /// `Shape::Varied` in metric units (km, km/hr, cm, kg, degC) instead of US ones: the same
    /// quantities, so both must store the same SI values.
    pub metric: bool,
}

/// What the export looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shape {
    /// An iPhone + Apple Watch: long dense series, sleep, workouts, summaries.
    #[default]
    Watch,
    /// Many small records of many types from many apps, interleaved in time.
    Varied,
}

impl std::str::FromStr for Shape {
    type Err = String;
    fn from_str(s: &str) -> Result<Shape, String> {
        match s {
            "watch" => Ok(Shape::Watch),
            "varied" => Ok(Shape::Varied),
            other => Err(format!("unknown shape {other} (watch or varied)")),
        }
    }
}

impl ExportSpec {
    pub fn new(days: u32) -> ExportSpec {
        ExportSpec {
            days,
            start: NaiveDate::from_ymd_opt(2024, 1, 1).unwrap_or_default(),
            offset_minutes: 60,
            seed: 7,
            shape: Shape::Watch,
            metric: false,
        }
    }
}

const WATCH: &str = "&lt;&lt;HKDevice: 0x283c1a490&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.3&gt;";
const PHONE: &str = "&lt;&lt;HKDevice: 0x283c1b2d0&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone15,2, software:17.3&gt;";
const WATCH_NAME: &str = "Ada’s Apple Watch";
const PHONE_NAME: &str = "Ada’s iPhone";

struct Out<'w, W: Write> {
    w: &'w mut W,
    offset: String,
    records: u64,
}

impl<W: Write> Out<'_, W> {
    fn ts(&self, t: NaiveDateTime) -> String {
        format!("{} {}", t.format("%Y-%m-%d %H:%M:%S"), self.offset)
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        kind: &str,
        source: &str,
        device: &str,
        unit: Option<&str>,
        value: &str,
        start: NaiveDateTime,
        end: NaiveDateTime,
    ) -> io::Result<()> {
        self.records += 1;
        let unit = unit.map(|u| format!(" unit=\"{u}\"")).unwrap_or_default();
        writeln!(
            self.w,
            r#" <Record type="{kind}" sourceName="{source}" sourceVersion="10.3" device="{device}"{unit} creationDate="{c}" startDate="{s}" endDate="{e}" value="{value}"/>"#,
            c = self.ts(end),
            s = self.ts(start),
            e = self.ts(end),
        )
    }
}

/// Writes an export per `spec`; returns the number of `Record` elements.
pub fn write_export<W: Write>(w: &mut W, spec: &ExportSpec) -> io::Result<u64> {
    let sign = if spec.offset_minutes < 0 { '-' } else { '+' };
    let m = spec.offset_minutes.unsigned_abs();
    let mut o = Out { w, offset: format!("{sign}{:02}{:02}", m / 60, m % 60), records: 0 };
    header(&mut o)?;
    match spec.shape {
        Shape::Watch => write_watch(&mut o, spec)?,
        Shape::Varied => write_varied(&mut o, spec)?,
    }
    writeln!(o.w, "</HealthData>")?;
    Ok(o.records)
}

fn header<W: Write>(o: &mut Out<'_, W>) -> io::Result<()> {
    writeln!(o.w, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        o.w,
        "<!DOCTYPE HealthData [\n<!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord)*)>\n<!ATTLIST HealthData locale CDATA #REQUIRED>\n]>"
    )?;
    writeln!(o.w, r#"<HealthData locale="en_US">"#)?;
    writeln!(o.w, r#" <ExportDate value="2026-03-14 18:46:45 +0100"/>"#)?;
    writeln!(
        o.w,
        r#" <Me HKCharacteristicTypeIdentifierDateOfBirth="1990-05-01" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"/>"#
    )
}

fn write_watch<W: Write>(o: &mut Out<'_, W>, spec: &ExportSpec) -> io::Result<()> {
    let mut rng = Rng(spec.seed.max(1));
    let day =
        |d: u32| spec.start.and_hms_opt(0, 0, 0).unwrap_or_default() + Duration::days(i64::from(d));
    let hk = |s: &str| format!("HKQuantityTypeIdentifier{s}");

    // Interval series from the watch: (type, step minutes, unit, low, high).
    let watch_series: [(&str, i64, &str, f64, f64); 3] = [
        ("HeartRate", 5, "count/min", 52.0, 150.0),
        ("ActiveEnergyBurned", 2, "Cal", 0.1, 9.0),
        ("BasalEnergyBurned", 15, "Cal", 14.0, 18.0),
    ];
    for (kind, step, unit, lo, hi) in watch_series {
        for d in 0..spec.days {
            let mut t = day(d);
            let end_of_day = t + Duration::days(1);
            while t < end_of_day {
                let v = format!("{:.1}", rng.range(lo, hi));
                let end = if kind == "HeartRate" { t } else { t + Duration::minutes(step) };
                o.record(&hk(kind), WATCH_NAME, WATCH, Some(unit), &v, t, end)?;
                t += Duration::minutes(step);
            }
        }
    }
    // Steps and distance from both devices during the day; distance in km, as exports have it.
    for (kind, unit, lo, hi) in
        [("StepCount", "count", 10.0, 900.0), ("DistanceWalkingRunning", "km", 0.01, 0.6)]
    {
        for (name, dev) in [(PHONE_NAME, PHONE), (WATCH_NAME, WATCH)] {
            for d in 0..spec.days {
                let mut t = day(d) + Duration::hours(7);
                while t < day(d) + Duration::hours(22) {
                    let v = if unit == "count" {
                        format!("{:.0}", rng.range(lo, hi))
                    } else {
                        format!("{:.3}", rng.range(lo, hi))
                    };
                    o.record(&hk(kind), name, dev, Some(unit), &v, t, t + Duration::minutes(9))?;
                    t += Duration::minutes(9 + (rng.next() * 4.0) as i64);
                }
            }
        }
    }
    // Sparse series: (type, per day, unit, low, high, fraction digits).
    let sparse: [(&str, u32, &str, f64, f64); 7] = [
        ("FlightsClimbed", 10, "count", 1.0, 4.0),
        ("AppleStandTime", 12, "min", 1.0, 5.0),
        ("AppleExerciseTime", 30, "min", 1.0, 1.0),
        ("OxygenSaturation", 12, "%", 0.93, 1.0),
        ("RespiratoryRate", 24, "count/min", 11.0, 19.0),
        ("RestingHeartRate", 1, "count/min", 50.0, 62.0),
        ("WalkingHeartRateAverage", 1, "count/min", 85.0, 110.0),
    ];
    for (kind, per_day, unit, lo, hi) in sparse {
        for d in 0..spec.days {
            for i in 0..per_day {
                let t = day(d) + Duration::minutes(i64::from(i) * (1440 / i64::from(per_day)) + 7);
                let v = if unit == "%" {
                    format!("{:.2}", rng.range(lo, hi))
                } else {
                    format!("{:.0}", rng.range(lo, hi))
                };
                o.record(
                    &hk(kind),
                    WATCH_NAME,
                    WATCH,
                    Some(unit),
                    &v,
                    t,
                    t + Duration::minutes(1),
                )?;
            }
        }
    }
    // HRV, with the beat-to-beat list the watch attaches.
    for d in 0..spec.days {
        for i in 0..5 {
            o.records += 1;
            let t = day(d) + Duration::hours(1 + i * 4);
            writeln!(
                o.w,
                r#" <Record type="{k}" sourceName="{WATCH_NAME}" sourceVersion="10.3" device="{WATCH}" unit="ms" creationDate="{s}" startDate="{s}" endDate="{e}" value="{v:.1}">"#,
                k = hk("HeartRateVariabilitySDNN"),
                s = o.ts(t),
                e = o.ts(t + Duration::minutes(1)),
                v = rng.range(20.0, 80.0)
            )?;
            writeln!(o.w, "  <HeartRateVariabilityMetadataList>")?;
            for b in 0..4 {
                writeln!(
                    o.w,
                    r#"   <InstantaneousBeatsPerMinute bpm="{}" time="1:0{b}:00.{b}0 AM"/>"#,
                    60 + b
                )?;
            }
            writeln!(o.w, "  </HeartRateVariabilityMetadataList>\n </Record>")?;
        }
    }
    for d in (0..spec.days).step_by(7) {
        let t = day(d) + Duration::hours(7);
        o.record(
            &hk("BodyMass"),
            "Withings",
            "",
            Some("kg"),
            &format!("{:.1}", rng.range(80.0, 82.0)),
            t,
            t,
        )?;
    }
    // Sleep: the phone's in-bed interval and the watch's stages.
    for d in 0..spec.days {
        let night = day(d) + Duration::minutes(23 * 60 + 10);
        o.record(
            "HKCategoryTypeIdentifierSleepAnalysis",
            PHONE_NAME,
            PHONE,
            None,
            "HKCategoryValueSleepAnalysisInBed",
            night - Duration::minutes(20),
            night + Duration::minutes(470),
        )?;
        let mut t = night;
        for (i, stage) in [
            "AsleepCore",
            "AsleepDeep",
            "AsleepCore",
            "AsleepREM",
            "Awake",
            "AsleepCore",
            "AsleepDeep",
            "AsleepCore",
            "AsleepREM",
            "AsleepCore",
        ]
        .iter()
        .enumerate()
        {
            let len =
                Duration::minutes(if *stage == "Awake" { 4 } else { 30 + (i as i64 * 7) % 25 });
            o.record(
                "HKCategoryTypeIdentifierSleepAnalysis",
                WATCH_NAME,
                WATCH,
                None,
                &format!("HKCategoryValueSleepAnalysis{stage}"),
                t,
                t + len,
            )?;
            t += len;
        }
    }
    // Menstrual flow, every 28 days, the first day marked as the cycle's start.
    for d in (3..spec.days).step_by(28) {
        for (i, flow) in ["Medium", "Heavy", "Medium", "Light", "Light"].iter().enumerate() {
            if d + i as u32 >= spec.days {
                break;
            }
            o.records += 1;
            let t = day(d + i as u32) + Duration::hours(8);
            writeln!(
                o.w,
                r#" <Record type="HKCategoryTypeIdentifierMenstrualFlow" sourceName="{PHONE_NAME}" sourceVersion="17.3" creationDate="{s}" startDate="{s}" endDate="{s}" value="HKCategoryValueMenstrualFlow{flow}">"#,
                s = o.ts(t)
            )?;
            writeln!(
                o.w,
                r#"  <MetadataEntry key="HKMenstrualCycleStart" value="{}"/>"#,
                u8::from(i == 0)
            )?;
            writeln!(o.w, " </Record>")?;
        }
    }
    // Category records wearhouse does not store (reported as dropped).
    for d in 0..spec.days {
        for h in 8..20 {
            let t = day(d) + Duration::hours(h);
            o.record(
                "HKCategoryTypeIdentifierAppleStandHour",
                WATCH_NAME,
                WATCH,
                None,
                "HKCategoryValueAppleStandHourStood",
                t,
                t + Duration::hours(1),
            )?;
        }
    }
    for (start, minutes) in watch_workouts(spec) {
        let end = start + Duration::minutes(i64::from(minutes));
        let km = f64::from(minutes) / 5.5;
        writeln!(
            o.w,
            r#" <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="{minutes}" durationUnit="min" sourceName="{WATCH_NAME}" sourceVersion="10.3" device="{WATCH}" creationDate="{e}" startDate="{s}" endDate="{e}">"#,
            s = o.ts(start),
            e = o.ts(end)
        )?;
        writeln!(o.w, r#"  <MetadataEntry key="HKIndoorWorkout" value="0"/>"#)?;
        writeln!(o.w, r#"  <MetadataEntry key="HKElevationAscended" value="4123 cm"/>"#)?;
        writeln!(o.w, r#"  <MetadataEntry key="HKWeatherTemperature" value="68 degF"/>"#)?;
        writeln!(o.w, r#"  <MetadataEntry key="HKTimeZone" value="Europe/Warsaw"/>"#)?;
        writeln!(
            o.w,
            r#"  <WorkoutEvent type="HKWorkoutEventTypePause" date="{}"/>"#,
            o.ts(start + Duration::minutes(10))
        )?;
        writeln!(
            o.w,
            r#"  <WorkoutEvent type="HKWorkoutEventTypeResume" date="{}"/>"#,
            o.ts(start + Duration::minutes(11))
        )?;
        for (k, attrs) in [
            ("ActiveEnergyBurned", format!(r#"sum="{:.1}" unit="Cal""#, f64::from(minutes) * 11.0)),
            ("BasalEnergyBurned", format!(r#"sum="{:.1}" unit="Cal""#, f64::from(minutes) * 1.1)),
            ("DistanceWalkingRunning", format!(r#"sum="{km:.3}" unit="km""#)),
            ("StepCount", format!(r#"sum="{}" unit="count""#, minutes * 165)),
            (
                "HeartRate",
                r#"average="151.2" minimum="98" maximum="178" unit="count/min""#.to_string(),
            ),
        ] {
            writeln!(
                o.w,
                r#"  <WorkoutStatistics type="{}" startDate="{}" endDate="{}" {attrs}/>"#,
                hk(k),
                o.ts(start),
                o.ts(end)
            )?;
        }
        writeln!(
            o.w,
            r#"  <WorkoutRoute sourceName="{WATCH_NAME}" sourceVersion="10.3" creationDate="{e}" startDate="{s}" endDate="{e}">"#,
            s = o.ts(start),
            e = o.ts(end)
        )?;
        writeln!(o.w, r#"   <MetadataEntry key="HKMetadataKeySyncVersion" value="2"/>"#)?;
        writeln!(o.w, r#"   <FileReference path="/{}"/>"#, route_file(start))?;
        writeln!(o.w, "  </WorkoutRoute>\n </Workout>")?;
    }
    for d in 0..spec.days {
        writeln!(
            o.w,
            r#" <ActivitySummary dateComponents="{}" activeEnergyBurned="{:.1}" activeEnergyBurnedGoal="500" activeEnergyBurnedUnit="Cal" appleMoveTime="0" appleMoveTimeGoal="0" appleExerciseTime="{}" appleExerciseTimeGoal="30" appleStandHours="12" appleStandHoursGoal="12"/>"#,
            day(d).format("%Y-%m-%d"),
            rng.range(300.0, 900.0),
            20 + d % 30
        )?;
    }
    Ok(())
}

/// The watch export's workouts, every other day at 18:00 local time: (start, minutes).
fn watch_workouts(spec: &ExportSpec) -> impl Iterator<Item = (NaiveDateTime, u32)> {
    let first = spec.start.and_hms_opt(18, 0, 0).unwrap_or_default();
    (0..spec.days)
        .step_by(2)
        .map(move |d| (first + Duration::days(i64::from(d)), 30 + (d % 4) * 10))
}

/// A watch workout's route file, as the export's `FileReference` names it (without its `/`).
fn route_file(start: NaiveDateTime) -> String {
    format!("workout-routes/route_{}.gpx", start.format("%Y-%m-%d_%H.%M"))
}

/// The first point of a watch workout's route: (latitude, longitude).
pub const ROUTE_START: (f64, f64) = (52.2297, 21.0122);
/// A route point every this many seconds.
pub const ROUTE_STEP_SECONDS: i64 = 5;

/// The watch export's `workout-routes/*.gpx` files, as Apple Health writes them: (path in the
/// archive's folder, GPX). A point every [`ROUTE_STEP_SECONDS`] from [`ROUTE_START`], with
/// elevation, UTC time, speed, course and accuracies.
pub fn workout_routes(spec: &ExportSpec) -> Vec<(String, Vec<u8>)> {
    let offset = Duration::minutes(i64::from(spec.offset_minutes));
    watch_workouts(spec)
        .map(|(start, minutes)| {
            let mut gpx = String::from(concat!(
                r#"<?xml version="1.0" encoding="UTF-8"?>"#,
                "\n",
                r#"<gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">"#,
                "\n"
            ));
            let utc = start - offset;
            gpx.push_str(&format!(
                "<metadata>\n<time>{}</time>\n</metadata>\n<trk>\n<name>Route {}</name>\n<trkseg>\n",
                utc.format("%Y-%m-%dT%H:%M:%SZ"),
                start.format("%Y-%m-%d %H:%M")
            ));
            for i in 0..i64::from(minutes) * 60 / ROUTE_STEP_SECONDS {
                let (lat, lon) = (ROUTE_START.0 + i as f64 * 1e-5, ROUTE_START.1 + i as f64 * 2e-5);
                gpx.push_str(&format!(
                    r#"<trkpt lon="{lon:.6}" lat="{lat:.6}"><ele>{:.2}</ele><time>{}</time><extensions><speed>2.9</speed><course>84.1</course><hAcc>3.1</hAcc><vAcc>2.4</vAcc></extensions></trkpt>"#,
                    100.0 + i as f64 * 0.05,
                    (utc + Duration::seconds(i * ROUTE_STEP_SECONDS)).format("%Y-%m-%dT%H:%M:%SZ"),
                ));
                gpx.push('\n');
            }
            gpx.push_str("</trkseg>\n</trk>\n</gpx>\n");
            (route_file(start), gpx.into_bytes())
        })
        .collect()
}

/// The apps and devices of a varied export: (source name, version, device).
const APPS: [(&str, &str, &str); 12] = [
    (PHONE_NAME, "17.3", PHONE),
    (WATCH_NAME, "10.3", WATCH),
    ("MyFitnessPal", "24.1.0", ""),
    ("Withings", "6.12", ""),
    ("Oura", "5.4.1", ""),
    ("AutoSleep", "7.3", ""),
    ("Strava", "356.0", ""),
    ("Dexcom G7", "2.3", ""),
    ("Qardio", "2.8", ""),
    ("Zepp Life", "6.9.0", ""),
    ("Garmin Connect", "5.1", ""),
    ("Health Mate &amp; Co", "1.0", ""),
];

/// Types of a varied export: (identifier suffix, unit as HealthKit writes it for a US locale,
/// low, high, records a day, fraction digits).
const VARIED: [(&str, &str, f64, f64, u32, usize); 24] = [
    ("HeartRate", "count/min", 50.0, 150.0, 300, 0),
    ("StepCount", "count", 5.0, 400.0, 200, 0),
    ("DistanceWalkingRunning", "mi", 0.001, 0.3, 160, 4),
    ("ActiveEnergyBurned", "Cal", 0.05, 6.0, 240, 3),
    ("BasalEnergyBurned", "kJ", 40.0, 70.0, 96, 2),
    ("FlightsClimbed", "count", 1.0, 3.0, 10, 0),
    ("WalkingSpeed", "mph", 1.5, 3.8, 40, 2),
    ("WalkingStepLength", "in", 20.0, 32.0, 40, 1),
    ("WalkingDoubleSupportPercentage", "%", 0.2, 0.35, 30, 3),
    ("WalkingAsymmetryPercentage", "%", 0.0, 0.1, 20, 3),
    ("EnvironmentalAudioExposure", "dBASPL", 40.0, 85.0, 48, 1),
    ("HeadphoneAudioExposure", "dBASPL", 50.0, 80.0, 16, 1),
    ("OxygenSaturation", "%", 0.93, 1.0, 24, 2),
    ("RespiratoryRate", "count/min", 11.0, 19.0, 48, 1),
    ("HeartRateVariabilitySDNN", "ms", 20.0, 80.0, 8, 1),
    ("RestingHeartRate", "count/min", 50.0, 62.0, 1, 0),
    ("BloodGlucose", "mg/dL", 70.0, 160.0, 96, 0),
    ("BodyMass", "lb", 170.0, 180.0, 1, 1),
    ("BodyFatPercentage", "%", 0.2, 0.25, 1, 3),
    ("BodyTemperature", "degF", 97.0, 99.5, 2, 1),
    ("VO2Max", "mL/min·kg", 38.0, 44.0, 1, 2),
    ("TimeInDaylight", "min", 1.0, 15.0, 20, 0),
    ("AppleStandTime", "min", 1.0, 5.0, 16, 0),
    ("PhysicalEffort", "kcal/hr·kg", 1.0, 8.0, 60, 1),
];

/// A US-unit value (as written) in its metric twin's unit, with digits to spare.
fn metric(unit: &'static str, us: &str) -> (&'static str, String) {
    let v: f64 = us.parse().unwrap_or_default();
    let (unit, value) = match unit {
        "mi" => ("km", v * 1.609_344),
        "mph" => ("km/hr", v * 1.609_344),
        "in" => ("cm", v * 2.54),
        "lb" => ("kg", v * 0.453_592_37),
        "degF" => ("degC", (v - 32.0) * 5.0 / 9.0),
        _ => return (unit, us.to_string()),
    };
    (unit, format!("{value:.12}"))
}

/// Many small records from many apps, in time order across types.
fn write_varied<W: Write>(o: &mut Out<'_, W>, spec: &ExportSpec) -> io::Result<()> {
    let mut rng = Rng(spec.seed.max(1));
    let start = spec.start.and_hms_opt(0, 0, 0).unwrap_or_default();
    for d in 0..spec.days {
        let day = start + Duration::days(i64::from(d));
        // Each type's records spread over the day, merged by second so types interleave.
        let mut slots: Vec<(i64, usize)> = Vec::new();
        for (k, (.., per_day, _)) in VARIED.iter().enumerate() {
            let step = 86_400 / i64::from(*per_day);
            slots.extend((0..i64::from(*per_day)).map(|i| (i * step + (k as i64 * 13) % step, k)));
        }
        slots.sort_unstable();
        for (second, k) in slots {
            let (kind, unit, lo, hi, _, digits) = VARIED[k];
            // Each type from its own app, and from a second one two hours a day (a phone and
            // a watch both counting steps, a ring beside the watch): as real exports have it.
            let hour = second / 3600;
            let app = if hour == 12 || hour == 18 { k + 5 } else { k };
            let (name, version, device) = APPS[app % APPS.len()];
            let t = day + Duration::seconds(second);
            let end = t + Duration::seconds(if kind == "HeartRate" { 0 } else { 60 });
            let us = format!("{:.*}", digits, rng.range(lo, hi));
            let (unit, value) = if spec.metric { metric(unit, &us) } else { (unit, us) };
            let device =
                if device.is_empty() { String::new() } else { format!(r#" device="{device}""#) };
            o.records += 1;
            let head = format!(
                r#" <Record type="HKQuantityTypeIdentifier{kind}" sourceName="{name}" sourceVersion="{version}"{device} unit="{unit}" creationDate="{c}" startDate="{s}" endDate="{e}" value="{value}""#,
                c = o.ts(end),
                s = o.ts(t),
                e = o.ts(end),
            );
            if second % 3 == 0 {
                writeln!(o.w, "{head}>")?;
                writeln!(
                    o.w,
                    r#"  <MetadataEntry key="HKMetadataKeySyncIdentifier" value="{k}-{d}-{second}"/>"#
                )?;
                writeln!(o.w, r#"  <MetadataEntry key="HKWasUserEntered" value="0"/>"#)?;
                writeln!(o.w, " </Record>")?;
            } else {
                writeln!(o.w, "{head}/>")?;
            }
        }
    }
    Ok(())
}
