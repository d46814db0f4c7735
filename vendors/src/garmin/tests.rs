//! The mapping against the summaries in `docs/vendors/garmin.md` §2–3 (the reference system's
//! fixtures and third-party schemas), the expected rows worked out by hand.

use ingest::{Normalised, Stage};
use serde_json::json;

use super::*;
use crate::normal::{at, values};

fn normalised() -> Normalised {
    Normalised { provider: "garmin", ..Normalised::default() }
}

#[test]
fn a_day_its_totals_resting_rate_and_heart_rate_samples() {
    let page = json!([{"userId": "garmin_user_123", "summaryId": "daily-123", "calendarDate": "2026-01-13",
        "activityType": "GENERIC", "startTimeInSeconds": 1768258800, "startTimeOffsetInSeconds": 3600,
        "durationInSeconds": 77040, "steps": 7694, "distanceInMeters": 6688.0, "activeTimeInSeconds": 4821,
        "activeKilocalories": 503, "bmrKilocalories": 1825, "floorsClimbed": 12,
        "restingHeartRateInBeatsPerMinute": 55, "averageHeartRateInBeatsPerMinute": 72, "averageStressLevel": 35,
        "timeOffsetHeartRateSamples": {"0": 60, "900": 65, "1800": 70}}]);
    let mut out = normalised();
    Garmin.map_page(DAILIES, &page, &mut out);
    // Local noon of 13 January at UTC+1.
    let noon = at("2026-01-13T11:00:00Z");
    assert_eq!(values(&out, STEPS), [(noon, 7694.0, Some(60))]);
    assert_eq!(values(&out, WALKED), [(noon, 6688.0, Some(60))]);
    assert_eq!(values(&out, ENERGY), [(noon, 503.0, Some(60))]);
    assert_eq!(values(&out, BASAL), [(noon, 1825.0, Some(60))]);
    assert_eq!(values(&out, FLOORS), [(noon, 12.0, Some(60))]);
    assert_eq!(values(&out, RESTING_HR), [(noon, 55.0, Some(60))]);
    let mut hr = values(&out, HR);
    hr.sort_by_key(|(t, _, _)| *t);
    assert_eq!(
        hr,
        [
            (at("2026-01-12T23:00:00Z"), 60.0, Some(60)),
            (at("2026-01-12T23:15:00Z"), 65.0, Some(60)),
            (at("2026-01-12T23:30:00Z"), 70.0, Some(60)),
        ]
    );
    assert!(
        out.samples
            .iter()
            .filter(|s| s.series_type_id == STEPS)
            .all(|s| s.is_daily_total == Some(true))
    );
}

#[test]
fn nights_activities_and_the_rest_in_their_units() {
    let mut out = normalised();
    let sleeps = json!([{"userId": "garmin_user_123", "summaryId": "sleep_123", "calendarDate": "2024-01-15",
        "startTimeInSeconds": 1705273200, "startTimeOffsetInSeconds": 3600, "durationInSeconds": 28800,
        "sleepLevelsMap": {"light": [{"startTimeInSeconds": 1705273200, "endTimeInSeconds": 1705276800}],
                           "deep": [{"startTimeInSeconds": 1705276800, "endTimeInSeconds": 1705280400}],
                           "rem": [{"startTimeInSeconds": 1705280400, "endTimeInSeconds": 1705284000}],
                           "awake": [{"startTimeInSeconds": 1705284000, "endTimeInSeconds": 1705285800}],
                           "unmeasurable": [{"startTimeInSeconds": 1705285800, "endTimeInSeconds": 1705286000}]},
        "overallSleepScore": {"value": 82, "qualifierKey": "GOOD"}}]);
    Garmin.map_page(SLEEPS, &sleeps, &mut out);
    let s = &out.sleep[0];
    let spans: Vec<_> = s.intervals.iter().map(|i| (i.stage, i.start, i.end)).collect();
    assert_eq!(
        spans,
        [
            (Stage::Light, at("2024-01-14T23:00:00Z"), at("2024-01-15T00:00:00Z")),
            (Stage::Deep, at("2024-01-15T00:00:00Z"), at("2024-01-15T01:00:00Z")),
            (Stage::Rem, at("2024-01-15T01:00:00Z"), at("2024-01-15T02:00:00Z")),
            (Stage::Awake, at("2024-01-15T02:00:00Z"), at("2024-01-15T02:30:00Z")),
        ],
        "an unknown level is skipped"
    );
    assert_eq!((s.zone_offset, s.external_id.as_deref()), (Some(60), Some("sleep_123")));

    let activities = json!({"activities": [{"userId": "garmin_user_123", "summaryId": "21047282990",
        "activityId": 21047282990_i64, "activityName": "Morning Run", "activityType": "RUNNING",
        "startTimeInSeconds": 1763597760, "startTimeOffsetInSeconds": 3600, "durationInSeconds": 3600,
        "deviceName": "Forerunner 965", "distanceInMeters": 5000, "activeKilocalories": 350,
        "averageHeartRateInBeatsPerMinute": 140, "maxHeartRateInBeatsPerMinute": 172,
        "averageSpeedInMetersPerSecond": 2.9, "elevationGainInMeters": 42.0, "steps": 5600}]});
    Garmin.map_page(ACTIVITIES, &activities["activities"], &mut out);
    let w = &out.workouts[0].row;
    assert_eq!(
        (w.figures.start_time, w.figures.end_time),
        (at("2025-11-20T00:16:00Z"), at("2025-11-20T01:16:00Z"))
    );
    assert_eq!(
        (w.figures.kind.as_deref(), w.figures.zone_offset, w.external_id.as_deref()),
        (Some("running"), Some(60), Some("21047282990"))
    );
    assert_eq!(
        (w.figures.distance_meters, w.figures.calories_kcal, w.figures.steps),
        (Some(5000.0), Some(350.0), Some(5600))
    );
    assert_eq!(
        (w.figures.avg_heart_rate_bpm, w.figures.max_heart_rate_bpm, w.figures.avg_speed_m_per_s),
        (Some(140.0), Some(172.0), Some(2.9))
    );

    let hrv = json!([{"summaryId": "x5b70ccc-6966bceb", "calendarDate": "2026-01-14", "lastNightAvg": 84,
        "startTimeInSeconds": 1768340715, "startTimeOffsetInSeconds": 3600, "hrvValues": {"265": 70}}]);
    Garmin.map_page(HRV, &hrv, &mut out);
    assert_eq!(values(&out, HRV_RMSSD), [(at("2026-01-13T21:49:40Z"), 70.0, Some(60))]);

    let stress = json!([{"summaryId": "s", "startTimeInSeconds": 1705276800, "startTimeOffsetInSeconds": 3600,
        "timeOffsetStressLevelValues": {"0": 25, "180": -1}, "timeOffsetBodyBatteryValues": {"0": 80}}]);
    Garmin.map_page(STRESS, &stress, &mut out);
    assert_eq!(
        values(&out, STRESS_LEVEL),
        [(at("2024-01-15T00:00:00Z"), 25.0, Some(60))],
        "-1 is no stress"
    );
    assert_eq!(values(&out, BODY_BATTERY), [(at("2024-01-15T00:00:00Z"), 80.0, Some(60))]);

    let body = json!([{"summaryId": "b", "measurementTimeInSeconds": 1705276800, "measurementTimeOffsetInSeconds": 3600,
        "weightInGrams": 72500, "bodyFatInPercent": 18.5, "bodyMassIndex": 23.1}]);
    Garmin.map_page(BODY, &body, &mut out);
    assert_eq!(values(&out, WEIGHT), [(at("2024-01-15T00:00:00Z"), 72.5, Some(60))]);
    let bp = json!([{"summaryId": "sd60a3665-6a31b950", "systolic": 112, "diastolic": 73, "pulse": 69,
        "sourceType": "MANUAL", "measurementTimeInSeconds": 1705276800, "measurementTimeOffsetInSeconds": -18000}]);
    Garmin.map_page(PRESSURE, &bp, &mut out);
    assert_eq!(values(&out, SYSTOLIC), [(at("2024-01-15T00:00:00Z"), 112.0, Some(-300))]);
    let skin = json!([{"summaryId": "t", "calendarDate": "2025-10-09", "startTimeInSeconds": 1705276800,
        "startTimeOffsetInSeconds": -21600, "durationInSeconds": 1980, "avgDeviationCelsius": -1.6}]);
    Garmin.map_page(SKIN, &skin, &mut out);
    // At the end of the window it was measured over: 1,980 s after its start, less a second.
    assert_eq!(values(&out, SKIN_DEVIATION), [(at("2024-01-15T00:32:59Z"), -1.6, Some(-360))]);
    assert_eq!(out.report.dropped_count(), 0);
}

#[test]
fn pushes_are_data_per_user_pings_are_pulls_and_deregistrations_end_connections() {
    let body = json!({
        "dailies": [{"userId": "u1", "summaryId": "d1", "calendarDate": "2026-01-13", "startTimeInSeconds": 1768258800, "steps": 1},
                    {"userId": "u2", "summaryId": "d2", "calendarDate": "2026-01-13", "startTimeInSeconds": 1768258800, "steps": 2},
                    {"userId": "u1", "summaryId": "d3", "calendarDate": "2026-01-14", "startTimeInSeconds": 1768345200, "steps": 3}],
        "allDayRespiration": [{"userId": "u1", "summaryId": "r", "startTimeInSeconds": 1782318600, "timeOffsetEpochToBreaths": {"0": 11.33}}],
        "sleeps": [{"userId": "u3", "callbackURL": "https://apis.garmin.com/wellness-api/rest/sleeps?uploadStartTimeInSeconds=1234567890&uploadEndTimeInSeconds=1234567900&token=YYYYY"}],
        "deregistrations": [{"userId": "u4"}],
        "somethingNew": [{"userId": "u1"}]});
    let notices = Garmin.webhook_notices(&body);
    let data: Vec<(String, &str, usize)> = notices
        .iter()
        .filter_map(|n| match n {
            Notice::Data { user, collection, page } => {
                Some((user.clone(), *collection, page.as_array().map_or(0, Vec::len)))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        data,
        [("u1".into(), RESPIRATION, 1), ("u1".into(), DAILIES, 2), ("u2".into(), DAILIES, 1)]
    );
    assert!(notices.contains(&Notice::Pull(
        "u3".into(),
        (at("2009-02-13T23:31:30Z"), at("2009-02-13T23:31:41Z"))
    )));
    assert!(notices.contains(&Notice::Deregistered("u4".into())));
    assert_eq!(notices.len(), 5);

    let ends = Endpoints { client_id: "garmin-app".into(), ..Endpoints::default() };
    let header =
        |id: &'static str| move |name: &str| (name == "garmin-client-id").then(|| id.to_string());
    assert!(Garmin.webhook_verified(&ends, &header("garmin-app"), b"{}"));
    assert!(!Garmin.webhook_verified(&ends, &header("someone-else"), b"{}"));
    assert!(!Garmin.webhook_verified(&ends, &|_| None, b"{}"));

    let window = (at("2026-01-01T00:00:00Z"), at("2026-01-31T00:00:00Z"));
    let url =
        Garmin.backfill_url("https://apis.garmin.com", PULSE_OX, window).map(|u| u.to_string());
    assert_eq!(
        url.as_deref(),
        Some(
            "https://apis.garmin.com/wellness-api/rest/backfill/pulseOx?summaryStartTimeInSeconds=1767225600&summaryEndTimeInSeconds=1769817600"
        )
    );
}

/// Without its 5-minute values, a night's HRV is its `lastNightAvg`, inside the night of its
/// `calendarDate`.
#[test]
fn a_nights_average_hrv_goes_inside_the_night() {
    let mut out = normalised();
    // Pushed alone, without the night's sleep summary: its own window says where.
    let hrv = json!([{"userId": "u1", "summaryId": "h", "calendarDate": "2024-01-15",
        "startTimeInSeconds": 1705269600, "startTimeOffsetInSeconds": 3600, "durationInSeconds": 28800,
        "lastNightAvg": 44}]);
    Garmin.map_page(HRV, &hrv, &mut out);
    // The night 22:00Z-06:00Z: its middle.
    assert_eq!(values(&out, HRV_RMSSD), [(at("2024-01-15T02:00:00Z"), 44.0, Some(60))]);
}

/// Summaries read as leniently as `.get` read them: numbers as numeric strings, a field of
/// another type as none (never the summary lost); a summary that does not read is dropped
/// alone; a map of samples only asks for the summary's start where it is a map.
#[test]
fn summaries_read_leniently_one_by_one() {
    let mut out = normalised();
    let dailies = json!([
        {"calendarDate": "2026-03-10", "startTimeOffsetInSeconds": "3600", "steps": "8000",
         "floorsClimbed": [3], "timeOffsetHeartRateSamples": []},
        {"calendarDate": "2026-03-11", "timeOffsetHeartRateSamples": {}},
        {"calendarDate": 20260312, "startTimeInSeconds": 1773273600,
         "timeOffsetHeartRateSamples": {"0": "61", "x": 62, "15": null}},
        "junk"]);
    Garmin.map_page(DAILIES, &dailies, &mut out);
    assert_eq!(values(&out, STEPS), [(at("2026-03-10T11:00:00Z"), 8000.0, Some(60))]);
    assert!(values(&out, FLOORS).is_empty());
    assert_eq!(values(&out, HR), [(at("2026-03-12T00:00:00Z"), 61.0, None)]);
    assert_eq!(
        out.report.dropped_count(),
        2,
        "an empty map without a start, a summary not an object"
    );

    let mut out = normalised();
    let sleeps = json!({"sleeps": [{"summaryId": 42, "startTimeInSeconds": "1773100800",
        "durationInSeconds": 3600, "sleepLevelsMap": {"deep": [{"startTimeInSeconds": 1773100800,
        "endTimeInSeconds": 1773102600}, 5], "light": {"startTimeInSeconds": 1773102600}, "nap": []},
        "naps": [{"napStartTimeInSeconds": 1773144000, "napDurationInSeconds": "1200"}, "junk"],
        "timeOffsetSleepSpo2": [95]}]});
    Garmin.map_page(SLEEPS, &sleeps, &mut out);
    assert_eq!(out.sleep.len(), 2);
    assert_eq!(out.sleep[0].external_id.as_deref(), Some("42"));
    assert_eq!(out.sleep[0].intervals.len(), 1);
    assert!(values(&out, OXYGEN).is_empty());

    let mut out = normalised();
    let activities = json!([{"activityId": 7, "startTimeInSeconds": 1773100800, "durationInSeconds": "600",
        "activityType": 5, "activityName": ["x"], "deviceName": null, "steps": "900"}]);
    Garmin.map_page(ACTIVITIES, &activities, &mut out);
    let w = &out.workouts[0].row;
    assert_eq!(
        (w.external_id.as_deref(), w.figures.kind.as_deref(), w.figures.notes.as_deref()),
        (Some("7"), None, None)
    );
    assert_eq!((w.figures.steps, w.statistics["deviceName"].clone()), (Some(900), Value::Null));

    // HRV values that are a map of nothing numeric still stand for the night's average.
    let mut out = normalised();
    let hrv = json!([{"startTimeInSeconds": 1773100800, "durationInSeconds": 3600,
        "hrvValues": {"300": "x"}, "lastNightAvg": 40}]);
    Garmin.map_page(HRV, &hrv, &mut out);
    assert!(values(&out, HRV_RMSSD).is_empty());

    let mut out = normalised();
    Garmin.map_page("epochs", &dailies, &mut out);
    assert!(out.samples.is_empty() && out.report.dropped_count() == 0);
    let window = crate::normal::any_window();
    let url =
        Garmin.backfill_url("https://apis.garmin.com", "epochs", window).map(|u| u.to_string());
    assert_eq!(
        url.as_deref(),
        Some(
            "https://apis.garmin.com/wellness-api/rest/backfill/epochs?summaryStartTimeInSeconds=1773014400&summaryEndTimeInSeconds=1773100800"
        )
    );
}
