//! Normalisation of each real client's wire format (sdk-clients.md).

use chrono::{DateTime, Utc};
use schema::catalogue::series_types::by_slug;

use super::*;
use crate::batch::Sample;

fn run(body: &str) -> Normalised {
    normalise(body.as_bytes()).unwrap_or_else(|e| panic!("envelope: {e}"))
}

fn utc(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|d| d.with_timezone(&Utc)).unwrap_or_default()
}

fn values(n: &Normalised, slug: &str) -> Vec<f64> {
    let id = by_slug(slug).map(|t| t.id);
    n.samples.iter().filter(|s| Some(s.series_type_id) == id).map(|s| s.value).collect()
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
}

const IOS_SOURCE: &str = r#"{"appId":"com.apple.health.81D2","name":"Ada’s Apple Watch","deviceId":null,
    "deviceName":"Apple Watch","deviceManufacturer":"Apple Inc.","deviceModel":"Watch6,2","deviceType":"watch",
    "recordingMethod":null,"deviceSoftwareVersion":"10.3","operatingSystemVersion":{"majorVersion":10,"minorVersion":3,"patchVersion":0}}"#;

fn ios_record(kind: &str, value: &str, unit: &str, zone: &str) -> String {
    format!(
        r#"{{"id":"A1B2-{kind}","type":"HKQuantityTypeIdentifier{kind}","startDate":"2026-03-14T18:46:45Z",
        "endDate":"2026-03-14T18:46:45Z","zoneOffset":{zone},"source":{IOS_SOURCE},"value":{value},"unit":"{unit}",
        "parentId":null,"metadata":{{"HKWasUserEntered":"0"}}}}"#
    )
}

#[test]
fn ios_values_and_units() {
    let records = [
        ios_record("HeartRate", "81", "bpm", "null"),
        ios_record("ActiveEnergyBurned", "25.315", "Cal", r#""+01:00""#),
        ios_record("OxygenSaturation", "98", "%", "null"),
        ios_record("BodyFatPercentage", "0.242", "%", "null"),
        ios_record("BodyMass", "86.3", "kg", "null"),
        ios_record("Height", "1.69", "m", "null"),
        ios_record("BloodGlucose", "114", "mg\\/dL", "null"),
        ios_record("WalkingAsymmetryPercentage", "0.031", "%", "null"),
        ios_record("DietaryWater", "0.25", "L", "null"),
    ]
    .join(",");
    let body = format!(
        r#"{{"data":{{"workouts":[],"records":[{records}],"sleep":[]}},"provider":"apple","sdkVersion":"0.13.0","syncTimestamp":"2026-03-14T18:50:00Z"}}"#
    );
    let n = run(&body);
    assert_eq!(n.provider, "phonehealth");
    assert_eq!(n.report.dropped_count(), 0, "{:?}", n.report.dropped);
    assert!(close(&values(&n, "heart_rate"), &[81.0]));
    assert!(close(&values(&n, "energy"), &[25.315]));
    assert!(close(&values(&n, "oxygen_saturation"), &[98.0]));
    assert!(close(&values(&n, "body_fat_percentage"), &[24.2]));
    assert!(close(&values(&n, "weight"), &[86.3]));
    assert!(close(&values(&n, "height"), &[169.0]));
    assert!(close(&values(&n, "blood_glucose"), &[114.0]));
    assert!(close(&values(&n, "walking_asymmetry_percentage"), &[3.1]));
    assert!(close(&values(&n, "hydration"), &[250.0]));
    // One source for all: the watch, by model and name.
    assert_eq!(n.sources.list.len(), 1);
    let src = &n.sources.list[0];
    assert_eq!(src.device_model.as_deref(), Some("Watch6,2"));
    assert_eq!(src.source.as_deref(), Some("Ada’s Apple Watch"));
    assert_eq!(src.device_manufacturer.as_deref(), Some("Apple Inc."));
    assert_eq!(src.device_type.as_deref(), Some("watch"));
    assert_eq!(src.software_version.as_deref(), Some("10.3"));
    // Additive series carry is_daily_total = false, levels null; the zone offset is kept.
    let energy =
        n.samples.iter().find(|s| Some(s.series_type_id) == by_slug("energy").map(|t| t.id));
    assert_eq!(energy.map(|s| (s.is_daily_total, s.zone_offset)), Some((Some(false), Some(60))));
    assert_eq!(n.samples[0].is_daily_total, None);
    assert_eq!(n.samples[0].ts, utc("2026-03-14T18:46:45Z"));
    assert_eq!(n.latest_offset.get(), Some((utc("2026-03-14T18:46:45Z"), 60)));
}

#[test]
fn health_connect_and_samsung() {
    let hc_source = r#"{"appId":"com.google.android.apps.fitness","deviceId":null,"deviceName":null,
        "deviceManufacturer":"Google","deviceModel":"Pixel Watch 2","deviceType":"watch","recordingMethod":"automatic"}"#;
    let body = format!(
        r#"{{"provider":"google","sdkVersion":"0.11.1","syncTimestamp":"2026-03-14T18:46:45Z","data":{{"records":[
        {{"id":"r1-s0","type":"HEART_RATE","startDate":"2026-03-14T18:40:00Z","endDate":"2026-03-14T18:40:00Z","zoneOffset":"Z","source":{hc_source},"value":81.0,"unit":"bpm","parentId":"r1","metadata":null}},
        {{"id":"g1","type":"BLOOD_GLUCOSE","startDate":"2026-03-14T08:00:00Z","endDate":"2026-03-14T08:00:00Z","zoneOffset":"+02:00","source":{hc_source},"value":6.333333333333333,"unit":"mmol/L","parentId":null,"metadata":{{"relationToMeal":"fasting"}}}},
        {{"id":"f1","type":"BODY_FAT","startDate":"2026-03-14T08:00:00Z","endDate":"2026-03-14T08:00:00Z","zoneOffset":null,"source":{hc_source},"value":24.2,"unit":"%","parentId":null,"metadata":null}},
        {{"id":"h1","type":"HEART_RATE_VARIABILITY","startDate":"2026-03-14T03:00:00Z","endDate":"2026-03-14T03:00:00Z","zoneOffset":"+05:45:30","source":{hc_source},"value":42.0,"unit":"ms","parentId":null,"metadata":{{"method":"rmssd"}}}},
        {{"id":"b1","type":"BASAL_METABOLIC_RATE","startDate":"2026-03-14T00:00:00Z","endDate":"2026-03-14T00:00:00Z","zoneOffset":null,"source":{hc_source},"value":1650.0,"unit":"kcal/day","parentId":null,"metadata":null}}
        ],"workouts":[{{"id":"w1","parentId":null,"type":"RUNNING_TREADMILL","startDate":"2026-03-14T07:00:00Z","endDate":"2026-03-14T07:36:25Z","zoneOffset":"+02:00","source":{hc_source},"title":"Morning","notes":null,"values":[{{"type":"duration","value":2185.0,"unit":"s"}}],"segments":null,"laps":null,"route":null,"samples":null,"metadata":null}}],"sleep":[]}}}}"#
    );
    let n = run(&body);
    assert_eq!(n.provider, "google");
    assert_eq!(n.report.dropped_count(), 0, "{:?}", n.report.dropped);
    assert!((values(&n, "blood_glucose")[0] - 114.0).abs() < 0.2);
    assert!(close(&values(&n, "body_fat_percentage"), &[24.2]));
    assert!(close(&values(&n, "heart_rate_variability_rmssd"), &[42.0]));
    assert!(values(&n, "heart_rate_variability_sdnn").is_empty());
    assert!(close(&values(&n, "basal_metabolic_rate"), &[1650.0]));
    assert!(values(&n, "basal_energy").is_empty(), "a rate is not interval energy");
    let hr: Vec<&Sample> = n.samples.iter().filter(|s| s.series_type_id.0 == 1).collect();
    assert_eq!(hr[0].zone_offset, Some(0));
    let hrv = n.samples.iter().find(|s| s.series_type_id.0 == 7);
    assert_eq!(hrv.and_then(|s| s.zone_offset), Some(346));
    let w = &n.workouts[0].row;
    assert_eq!(w.figures.kind.as_deref(), Some("treadmill"));
    assert_eq!(w.figures.duration_seconds, 2185);
    assert_eq!(w.figures.zone_offset, Some(120));

    let samsung_source = r#"{"appId":null,"deviceId":"d-1","deviceName":"b0q","deviceManufacturer":"samsung",
        "deviceModel":"SM-S918B","deviceType":"phone","recordingMethod":null}"#;
    let body = format!(
        r#"{{"provider":"samsung","sdkVersion":"0.11.1","syncTimestamp":"2026-03-14T18:46:45Z","data":{{"records":[
        {{"id":"x1","type":"BODY_FAT","startDate":"2026-03-14T08:00:00Z","endDate":"2026-03-14T08:00:00Z","zoneOffset":null,"source":{samsung_source},"value":24.200000762939453,"unit":"%","parentId":null,"metadata":null}},
        {{"id":"x2","type":"BLOOD_GLUCOSE","startDate":"2026-03-14T08:00:00Z","endDate":"2026-03-14T08:00:00Z","zoneOffset":null,"source":{samsung_source},"value":6.33,"unit":"mmol/L","parentId":null,"metadata":null}},
        {{"id":"x3","type":"STEP_COUNT","startDate":"2026-03-14T08:00:00Z","endDate":"2026-03-14T09:00:00Z","zoneOffset":null,"source":{samsung_source},"value":587.0,"unit":"count","parentId":null,"metadata":null}}
        ],"workouts":[{{"id":"u1-s0","parentId":"u1","type":"RUNNING","startDate":"2026-03-14T07:00:00Z","endDate":"2026-03-14T07:36:25Z","zoneOffset":null,"source":{samsung_source},"title":null,"notes":null,
          "values":[{{"type":"calories","value":412.5,"unit":"kcal"}},{{"type":"distance","value":6446.16,"unit":"m"}},{{"type":"duration","value":2185000,"unit":"ms"}},
                    {{"type":"meanHeartRate","value":151,"unit":"bpm"}},{{"type":"maxHeartRate","value":178,"unit":"bpm"}},{{"type":"meanSpeed","value":2.95,"unit":"m/s"}},
                    {{"type":"altitudeGain","value":41.2,"unit":"m"}},{{"type":"vo2Max","value":47.5,"unit":"mL/kg/min"}},{{"type":"count","value":3,"unit":""}}],
          "segments":null,"laps":null,
          "route":[{{"timestamp":"2026-03-14T07:00:05Z","latitude":52.23,"longitude":21.01,"altitudeM":110.0,"horizontalAccuracyM":4.0,"verticalAccuracyM":null}}],
          "samples":[{{"timestamp":"2026-03-14T07:01:00Z","type":"heartRate","value":132,"unit":"bpm"}},{{"timestamp":"2026-03-14T07:02:00Z","type":"cadence","value":168,"unit":"spm"}}],
          "metadata":null}}],
        "sleep":[]}}}}"#
    );
    let n = run(&body);
    assert_eq!(n.report.dropped_count(), 0, "{:?}", n.report.dropped);
    assert!((values(&n, "body_fat_percentage")[0] - 24.2).abs() < 1e-5);
    assert!((values(&n, "blood_glucose")[0] - 114.0).abs() < 0.2);
    assert!(close(&values(&n, "steps"), &[587.0]));
    let w = &n.workouts[0].row;
    assert_eq!(w.figures.duration_seconds, 2185, "Samsung durations are milliseconds");
    assert_eq!(w.figures.calories_kcal, Some(412.5));
    assert_eq!(w.figures.distance_meters, Some(6446.16));
    assert_eq!(w.figures.avg_heart_rate_bpm, Some(151.0));
    assert_eq!(w.figures.max_heart_rate_bpm, Some(178.0));
    assert_eq!(w.figures.elevation_gain_meters, Some(41.2));
    assert_eq!(w.external_id.as_deref(), Some("u1-s0"));
    assert_eq!(w.route.as_ref().and_then(|r| r.as_array()).map(Vec::len), Some(1));
    assert!(close(&values(&n, "heart_rate"), &[132.0]));
    assert!(close(&values(&n, "cadence"), &[168.0]));
    assert!(close(&values(&n, "vo2_max"), &[47.5]));
}

#[test]
fn bad_items_are_counted_not_fatal() {
    let body = r#"{"provider":"apple","sdkVersion":"0.13.0","syncTimestamp":"2026-03-14T18:46:45Z","data":{"records":[
        {"type":"HKQuantityTypeIdentifierHeartRate","startDate":"2026-03-14T18:46:45Z","value":70,"unit":"bpm","zoneOffset":"+0100"},
        {"type":"HKQuantityTypeIdentifierHeartRate","startDate":"2026-03-14T18:47:45Z","value":71,"unit":"bpm","zoneOffset":"bogus"},
        {"type":"HKCategoryTypeIdentifierMindfulSession","startDate":"2026-03-14T18:46:45Z","value":0,"unit":null},
        {"type":"HKQuantityTypeIdentifierHeartRate","startDate":"not a date","value":70,"unit":"bpm"},
        {"type":"HKQuantityTypeIdentifierHeartRate","startDate":"2026-03-14T18:46:45Z","value":"abc","unit":"bpm"},
        {"type":"HKQuantityTypeIdentifierHeartRate","startDate":"2026-03-14T18:46:45Z","value":70,"unit":"furlongs"},
        {"type":"HKQuantityTypeIdentifierHeartRate","startDate":"2026-03-14T18:46:45Z","value":70,"unit":null},
        {"startDate":"2026-03-14T18:46:45Z","value":70},
        42
      ],
      "sleep":[{"stage":"napping","startDate":"2026-03-14T01:00:00Z","endDate":"2026-03-14T02:00:00Z"},
               {"stage":"deep","startDate":"2026-03-14T03:00:00Z","endDate":"2026-03-14T02:00:00Z"}],
      "workouts":[{"type":"running","startDate":"2026-03-14T07:00:00Z"}]}}"#;
    let n = run(body);
    assert_eq!(n.samples.len(), 2);
    assert_eq!(n.samples[0].zone_offset, Some(60));
    assert_eq!(n.samples[1].zone_offset, None);
    let d = &n.report.dropped;
    for (reason, count) in [
        ("record.unknown_type", 1),
        ("record.invalid_date", 1),
        ("record.invalid_value", 1),
        ("record.unknown_unit", 1),
        ("record.missing_unit", 1),
        ("record.missing_type", 1),
        ("record.not_an_object", 1),
        ("sleep.invalid_stage", 1),
        ("sleep.end_before_start", 1),
        ("workout.missing_date", 1),
    ] {
        assert_eq!(d.get(reason).map(|t| t.count), Some(count), "{reason}: {d:?}");
    }
    assert_eq!(d["record.unknown_type"].examples, vec!["HKCategoryTypeIdentifierMindfulSession"]);
    assert_eq!(n.report.warnings["record.invalid_zone_offset"].count, 1);
    assert_eq!(n.report.received["records"], 9);
}

#[test]
fn malformed_envelopes_fail_with_a_reason() {
    let cases: &[(&str, &str)] = &[
        ("{not json", "not valid JSON"),
        ("[1,2]", "not a JSON object"),
        (r#"{"provider":"fitbit","data":{}}"#, "Unsupported provider: fitbit"),
        (r#"{"data":{}}"#, "Unsupported provider: (none)"),
        (r#"{"provider":"apple","data":[]}"#, "`data` must be an object"),
        (r#"{"provider":"apple","data":{"records":{}}}"#, "`data.records` must be an array"),
    ];
    for (body, expected) in cases {
        let err = normalise(body.as_bytes()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains(expected), "{body}: {err}");
    }
    // No data at all is an empty batch, not an error.
    let n =
        run(r#"{"provider":"APPLE","sdkVersion":"0.1","syncTimestamp":"2026-03-14T18:46:45Z"}"#);
    assert!(n.samples.is_empty());
}

#[test]
fn ios_sleep_night_with_overlapping_in_bed() {
    let stage = |s: &str, a: &str, b: &str, src: &str| {
        format!(
            r#"{{"id":"{s}{a}","parentId":null,"stage":"{s}","startDate":"{a}","endDate":"{b}","zoneOffset":"+01:00","source":{src},"values":null,"metadata":null}}"#
        )
    };
    let phone = r#"{"appId":"com.apple.health.P","name":"iPhone","deviceModel":"iPhone15,2","deviceType":"phone"}"#;
    let items = [
        stage("in_bed", "2026-03-13T21:30:00Z", "2026-03-14T06:12:00Z", phone),
        stage("light", "2026-03-13T22:00:00Z", "2026-03-14T00:00:00Z", IOS_SOURCE),
        stage("deep", "2026-03-14T00:00:00Z", "2026-03-14T01:30:00Z", IOS_SOURCE),
        stage("core", "2026-03-14T01:30:00Z", "2026-03-14T03:00:00Z", IOS_SOURCE),
        stage("awake", "2026-03-14T03:00:00Z", "2026-03-14T03:10:00Z", IOS_SOURCE),
        stage("rem", "2026-03-14T03:10:00Z", "2026-03-14T05:00:00Z", IOS_SOURCE),
    ]
    .join(",");
    let n = run(&format!(
        r#"{{"provider":"apple","sdkVersion":"0.13.0","syncTimestamp":"2026-03-14T07:00:00Z","data":{{"records":[],"workouts":[],"sleep":[{items}]}}}}"#
    ));
    // One session per source: the phone's in-bed interval and the watch's stages.
    assert_eq!(n.sleep.len(), 2);
    let watch = n
        .sleep
        .iter()
        .find(|s| n.sources.list[s.source].device_model.as_deref() == Some("Watch6,2"));
    let watch = watch.unwrap_or_else(|| panic!("watch session"));
    let summary = crate::sleep::summarize(&watch.intervals, watch.zone_offset, None)
        .unwrap_or_else(|| panic!("summary"));
    assert_eq!(summary.light_minutes, Some(120 + 90));
    assert_eq!(summary.deep_minutes, Some(90));
    assert_eq!(summary.rem_minutes, Some(110));
    assert_eq!(summary.awake_minutes, Some(10));
    assert_eq!(watch.zone_offset, Some(60));
    assert_eq!(watch.external_id.as_deref(), Some("light2026-03-13T22:00:00Z"));
}
