//! Parsing and normalising generated exports.

use schema::catalogue::series_types::by_slug;

use super::generate::{ExportSpec, write_export};
use super::*;
use crate::batch::Normalised;

fn export(days: u32) -> Vec<u8> {
    let mut out = Vec::new();
    write_export(&mut out, &ExportSpec::new(days)).unwrap_or_default();
    out
}

/// Every chunk of an export, normalised and merged.
fn read_all(bytes: &[u8]) -> Result<(Normalised, Vec<MenstrualItem>, usize), ExportError> {
    let mut all = Normalised { provider: "phonehealth", ..Default::default() };
    let mut menstrual = Vec::new();
    let mut chunks = 0;
    for chunk in ExportReader::new(bytes) {
        let batch = normalise(&chunk?);
        chunks += 1;
        menstrual.extend(batch.menstrual);
        all.absorb(batch.normalised);
    }
    Ok((all, menstrual, chunks))
}

fn values(n: &Normalised, slug: &str) -> Vec<f64> {
    let id = by_slug(slug).map(|t| t.id);
    n.samples.iter().filter(|s| Some(s.series_type_id) == id).map(|s| s.value).collect()
}

#[test]
fn a_generated_export_normalises() {
    let bytes = export(3);
    let (n, menstrual, chunks) = read_all(&bytes).unwrap_or_else(|e| panic!("{e}"));
    assert!(chunks >= 1);
    // Heart rate every five minutes from the watch, with the export's offset.
    let hr = values(&n, "heart_rate");
    assert_eq!(hr.len(), 3 * 288);
    assert!(n.samples.iter().all(|s| s.zone_offset == Some(60)));
    // SpO2 fractions become percentages; kilometres become metres; `Cal` is kcal.
    assert!(values(&n, "oxygen_saturation").iter().all(|v| (93.0..=100.0).contains(v)));
    assert!(values(&n, "distance_walking_running").iter().all(|v| (10.0..=600.0).contains(v)));
    assert!(!values(&n, "energy").is_empty());
    // Two sources of steps: phone and watch, by hardware model.
    let models: Vec<Option<&str>> =
        n.sources.list.iter().map(|s| s.device_model.as_deref()).collect();
    assert!(
        models.contains(&Some("Watch6,2")) && models.contains(&Some("iPhone15,2")),
        "{models:?}"
    );
    // Workouts on days 0 and 2, with statistics and metadata.
    assert_eq!(n.workouts.len(), 2);
    let w = &n.workouts[0].row;
    assert_eq!(w.figures.kind.as_deref(), Some("running"));
    assert_eq!(w.figures.duration_seconds, 30 * 60);
    assert_eq!(w.figures.calories_kcal, Some(330.0));
    assert_eq!(w.figures.distance_meters, Some(5455.0), "5.455 km");
    assert_eq!(w.figures.avg_heart_rate_bpm, Some(151.2));
    assert!(w.figures.elevation_gain_meters.is_some_and(|e| (e - 41.23).abs() < 1e-9));
    assert_eq!(w.statistics["events"]["Pause"], 1);
    // Statistics in the SDK path's shape: value and canonical unit.
    assert_eq!(w.statistics["distance"], serde_json::json!({"value": 5455.0, "unit": "meters"}));
    // The route's file is named; its points come from the archive at the end of the import.
    assert_eq!(
        w.statistics["route_files"],
        serde_json::json!(["/workout-routes/route_2024-01-01_18.00.gpx"])
    );
    assert_eq!(w.route, None);
    // Activity summaries are daily totals.
    let totals: Vec<_> = n.samples.iter().filter(|s| s.is_daily_total == Some(true)).collect();
    assert_eq!(totals.len(), 3 * 3, "energy, exercise and move time a day");
    // Sleep: a watch session and a phone in-bed session per night.
    assert_eq!(n.sleep.len(), 6);
    // Menstrual flow on day 3 only falls outside three days.
    assert!(menstrual.is_empty());
    // Stand hours are not stored, and say so.
    assert_eq!(n.report.dropped["record.unknown_type"].count, 3 * 12);
    assert_eq!(
        n.report.dropped["record.unknown_type"].examples,
        vec!["HKCategoryTypeIdentifierAppleStandHour"]
    );
}

#[test]
fn a_varied_export_stores_every_record_in_si_units() {
    let mut bytes = Vec::new();
    let spec = ExportSpec { shape: generate::Shape::Varied, ..ExportSpec::new(2) };
    let records = write_export(&mut bytes, &spec).unwrap_or_default();
    let (n, _, _) = read_all(&bytes).unwrap_or_else(|e| panic!("{e}"));
    // Every type and every US unit of the generator is known: nothing is dropped.
    assert!(n.report.dropped.is_empty(), "{:?}", n.report.dropped);
    assert_eq!(n.samples.len() as u64, records);
    // Miles, pounds, inches, mph and °F arrive in the canonical units.
    let within = |slug: &str, lo: f64, hi: f64| {
        let v = values(&n, slug);
        assert!(!v.is_empty() && v.iter().all(|x| (lo..=hi).contains(x)), "{slug}: {v:?}");
    };
    within("distance_walking_running", 1.6, 483.0);
    within("weight", 77.1, 81.7);
    within("walking_step_length", 50.8, 81.3);
    within("walking_speed", 0.67, 1.7);
    within("body_temperature", 36.1, 37.5);
    // A dozen apps, each its own source.
    assert!(n.sources.list.len() >= 12, "{}", n.sources.list.len());
}

#[test]
fn menstrual_flow_becomes_cycles() {
    let (_, menstrual, _) = read_all(&export(62)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(menstrual.len(), 5 + 5 + 3, "days 3, 31 and 59 start a period");
    assert_eq!(menstrual.iter().filter(|m| m.cycle_start).count(), 3);
    let c = cycles(menstrual);
    assert_eq!(c.len(), 3);
    assert_eq!(c[0].cycle_length, Some(28));
    assert_eq!(c[0].period_length, 5);
    assert_eq!(c[2].end, None);
}

#[test]
fn malformed_and_truncated_files_fail_with_a_position() {
    let bytes = export(1);
    let cut = bytes.len() / 2;
    let err = read_all(&bytes[..cut]).err();
    assert!(
        matches!(err, Some(ExportError::Truncated { .. }) | Some(ExportError::Xml { .. })),
        "{err:?}"
    );
    let cut_between = bytes.len() - "</HealthData>\n".len();
    assert!(matches!(read_all(&bytes[..cut_between]).err(), Some(ExportError::Truncated { .. })));

    let mut broken = bytes.clone();
    let at = broken
        .windows(9)
        .enumerate()
        .filter(|(_, w)| *w == b"\n <Record")
        .nth(100)
        .map(|(i, _)| i + 1)
        .unwrap_or(0);
    broken.splice(at..at, b"</Oops>".iter().copied());
    match read_all(&broken).err() {
        Some(ExportError::Xml { offset, reason }) => {
            assert!((offset as usize) >= at && (offset as usize) < at + 16, "{offset} vs {at}");
            assert!(!reason.is_empty());
        }
        other => panic!("expected an XML error, got {other:?}"),
    }
    assert!(matches!(read_all(b"<NotHealth/>").err(), Some(ExportError::NotAnExport)));
}

/// `unit` over and over.
struct Repeat {
    unit: &'static [u8],
    at: usize,
}

impl std::io::Read for Repeat {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        for b in buf.iter_mut() {
            *b = self.unit[self.at];
            self.at = (self.at + 1) % self.unit.len();
        }
        Ok(buf.len())
    }
}

/// `head`, then `unit` repeated up to `bytes` in all, never closing what `head` opened.
fn hostile(head: &'static [u8], unit: &'static [u8], bytes: u64) -> impl std::io::BufRead {
    use std::io::Read;
    std::io::BufReader::new(head.chain(Repeat { unit, at: 0 }).take(bytes))
}

/// The chunks read before the first error, and that error (open elements bounded at 1 MiB).
fn read_raw(input: impl std::io::BufRead) -> (usize, Option<ExportError>) {
    let mut chunks = 0;
    for chunk in ExportReader::with_open_max(input, 1 << 20) {
        match chunk {
            Ok(_) => chunks += 1,
            Err(e) => return (chunks, Some(e)),
        }
    }
    (chunks, None)
}

fn refused(e: &Option<ExportError>) -> Option<&Limit> {
    match e {
        Some(ExportError::Refused { limit, .. }) => Some(limit),
        _ => None,
    }
}

#[test]
fn hostile_exports_are_refused_with_the_bound_they_broke() {
    let event = Some(&Limit::Event { max: 8 << 20 });
    // One text node of 9 MiB.
    let (_, err) = read_raw(hostile(b"<HealthData>", b"x", 9 << 20));
    assert_eq!(refused(&err), event, "{err:?}");
    // A tag that never ends.
    let (_, err) = read_raw(hostile(b"<HealthData><Record value=\"", b"1", 9 << 20));
    assert_eq!(refused(&err), event, "{err:?}");
    assert!(err.is_some_and(|e| e.to_string().contains("larger than 8388608 bytes")));

    let open = Some(&Limit::Open { max: 1 << 20 });
    // A workout that never closes: its statistics pile up.
    let (_, err) = read_raw(hostile(
        b"<HealthData><Workout workoutActivityType=\"HKWorkoutActivityTypeRunning\">",
        b"<WorkoutStatistics type=\"HKQuantityTypeIdentifierActiveEnergyBurned\" sum=\"1\"/>",
        2 << 20,
    ));
    assert_eq!(refused(&err), open, "{err:?}");
    // A record that never closes, with records inside it.
    let (_, err) = read_raw(hostile(
        b"<HealthData><Record type=\"HKQuantityTypeIdentifierHeartRate\" value=\"1\">",
        b"<Record type=\"HKQuantityTypeIdentifierStepCount\" value=\"1\"/>",
        2 << 20,
    ));
    assert_eq!(refused(&err), open, "{err:?}");
}

#[test]
fn workouts_in_a_row_are_cut_into_chunks_like_records() {
    // 30 MiB of workouts, each closed: more than one chunk's worth, so chunks come out before
    // the end (where this file, cut anywhere, is broken).
    let (chunks, err) = read_raw(hostile(
        b"<HealthData>",
        b"<Workout workoutActivityType=\"HKWorkoutActivityTypeRunning\" duration=\"1\"/>",
        30 << 20,
    ));
    assert!(chunks >= 1, "{chunks}");
    assert!(
        matches!(err, Some(ExportError::Truncated { .. } | ExportError::Xml { .. })),
        "{err:?}"
    );
}
