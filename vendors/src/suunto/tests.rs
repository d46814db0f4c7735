//! The mapping against the examples of Suunto's API Zone pages and the reference system's
//! captures (`docs/vendors/suunto.md` §2–3), the expected rows worked out by hand.

use ingest::Normalised;
use serde_json::json;

use super::*;
use crate::normal::{at, values};

fn normalised() -> Normalised {
    Normalised { provider: "suunto", ..Normalised::default() }
}

fn created() -> Value {
    json!({"type": "WORKOUT_CREATED", "username": "johndoe123",
        "workout": {"workoutKey": "67604889401b942184624cb8", "activityId": 1, "startTime": 1702729200000_i64,
            "totalTime": 3600, "energyConsumption": 500, "startPosition": {"x": 24.97242731, "y": 60.27185791},
            "stepCount": 8500, "totalAscent": 120.5, "totalDescent": 110.3, "totalDistance": 10000,
            "hrdata": {"workoutAvgHR": 145, "workoutMaxHR": 175}, "avgSpeed": 2.78, "maxSpeed": 6,
            "timeOffsetInMinutes": 120},
        "gear": {"manufacturer": "Suunto", "name": "Suunto Vertical", "productType": "SPORT_WATCH"}})
}

#[test]
fn a_workout_notification_is_the_workout_itself() {
    let notices = Suunto.webhook_notices(&created());
    let [Notice::Data { user, collection, page }] = notices.as_slice() else {
        panic!("{notices:?}")
    };
    assert_eq!((user.as_str(), *collection), ("johndoe123", WORKOUTS));
    let mut out = normalised();
    Suunto.map_page(collection, page, &mut out);
    let w = &out.workouts[0].row;
    assert_eq!(
        (w.figures.start_time, w.figures.end_time),
        (at("2023-12-16T12:20:00Z"), at("2023-12-16T13:20:00Z"))
    );
    assert_eq!(
        (w.figures.zone_offset, w.figures.kind.as_deref(), w.figures.duration_seconds),
        (Some(120), Some("running"), 3600)
    );
    assert_eq!(
        (w.figures.distance_meters, w.figures.elevation_gain_meters),
        (Some(10000.0), Some(120.5))
    );
    assert_eq!(
        (w.figures.avg_heart_rate_bpm, w.figures.max_heart_rate_bpm),
        (Some(145.0), Some(175.0))
    );
    assert_eq!(
        (w.figures.calories_kcal, w.figures.steps, w.figures.avg_speed_m_per_s),
        (Some(500.0), Some(8500), Some(2.78))
    );
    assert_eq!(w.statistics["gear"]["name"], "Suunto Vertical");

    // The API's form: one object; the workout's peak heart rate, not the user's maximum.
    let one = json!({"error": null, "payload": {"workoutKey": "k", "activityId": 0, "startTime": 1779025042670_i64,
        "totalTime": 12.144, "timeOffsetInMinutes": 120, "totalDistance": 53.0,
        "hrdata": {"workoutMaxHR": 79, "workoutAvgHR": 78, "userMaxHR": 196, "hrmax": 79, "avg": 78, "max": 196}}});
    let mut out = normalised();
    Suunto.map_page(WORKOUTS, &one, &mut out);
    let w = &out.workouts[0].row;
    assert_eq!(
        (w.figures.max_heart_rate_bpm, w.figures.kind.as_deref(), w.figures.duration_seconds),
        (Some(79.0), Some("walking"), 12)
    );
}

#[test]
fn samples_of_the_day_and_the_night_in_their_units() {
    let mut out = normalised();
    let sleep = json!([{"timestamp": "2026-05-17T02:13:00.000+02:00",
        "entryData": {"BedtimeStart": "2026-05-17T02:13:00.000+02:00", "BedtimeEnd": "2026-05-17T09:19:00.000+02:00",
            "Duration": 25560.0, "DeepSleepDuration": 5610.0, "LightSleepDuration": 17970.0, "REMSleepDuration": 1710.0,
            "HRAvg": 67.0, "HRMin": 52.0, "SleepQualityScore": 75, "IsNap": false, "SleepId": 1778976780, "AvgHRV": 41.0}}]);
    Suunto.map_page(SLEEP, &sleep, &mut out);
    let s = &out.sleep[0];
    assert!(s.intervals.is_empty(), "totals alone: no timeline is made up");
    let night = s.vendor.unwrap_or_else(|| panic!("the documented night"));
    assert_eq!(
        (night.start, night.end, night.in_bed, night.is_nap),
        (at("2026-05-17T00:13:00Z"), at("2026-05-17T07:19:00Z"), Some(25560), Some(false))
    );
    // 5,610 + 17,970 + 1,710 = 25,290 s asleep; awake 25,560 − 25,290 = 270 s.
    assert_eq!(
        night.totals,
        ingest::StageTotals {
            light: Some(17970),
            deep: Some(5610),
            rem: Some(1710),
            awake: Some(270),
            asleep: Some(25290),
        }
    );
    assert_eq!((s.zone_offset, s.external_id.as_deref()), (Some(120), Some("1778976780")));
    // Inside the night, on the day one wakes up: its middle (03:46 UTC, 05:46 local).
    assert_eq!(values(&out, HRV_RMSSD), [(at("2026-05-17T03:46:00Z"), 41.0, Some(120))]);

    let activity = json!([{"timestamp": "2026-05-17T12:00:00.000+02:00",
        "entryData": {"HR": 62, "StepCount": 15, "SpO2": 0.97, "EnergyConsumption": 5230.0, "HRV": 0}}]);
    Suunto.map_page(ACTIVITY, &activity, &mut out);
    let t = at("2026-05-17T10:00:00Z");
    assert_eq!(values(&out, HR), [(t, 62.0, Some(120))]);
    assert_eq!(values(&out, OXYGEN), [(t, 97.0, Some(120))], "a fraction, as percent");
    assert_eq!(values(&out, TOTAL_ENERGY), [(t, 1.25, Some(120))], "5,230 J");
    assert_eq!(values(&out, HRV_RMSSD).len(), 1, "an HRV of 0 is none");
    let recovery = json!({"samples": [{"timestamp": "2026-09-26T00:00:00.000+02:00", "entryData": {"Balance": 0.5, "StressState": 1}}]});
    Suunto.map_page(RECOVERY, &recovery, &mut out);
    assert_eq!(values(&out, RECOVERY_SCORE), [(at("2026-09-25T22:00:00Z"), 50.0, Some(120))]);

    let daily = json!([{"Name": "energyconsumption", "Aggregation": "sum",
        "Sources": [{"Name": "suunto-247-3e0f", "Samples": [{"TimeISO8601": "2019-02-11T02:00:00.000", "Value": null},
            {"TimeISO8601": "2019-02-12T02:00:00.000", "Value": 640580.3985}]}]},
        {"Name": "stepcount", "Aggregation": "sum",
         "Sources": [{"Name": "suunto-247-3e0f", "Samples": [{"TimeISO8601": "2019-02-12T02:00:00.000", "Value": 4617}]}]}]);
    let mut days = normalised();
    Suunto.map_page(DAILY, &daily, &mut days);
    let energy = values(&days, TOTAL_ENERGY);
    assert_eq!(energy.len(), 1, "a null day is no day");
    assert_eq!(
        (energy[0].0, (energy[0].1 * 100.0).round() / 100.0),
        (at("2019-02-12T14:00:00Z"), 153.1)
    );
    assert_eq!(values(&days, STEPS), [(at("2019-02-12T14:00:00Z"), 4617.0, Some(0))]);
    assert_eq!(out.report.dropped_count() + days.report.dropped_count(), 0);
}

#[test]
fn requests_carry_the_subscription_key_and_the_user_is_the_tokens() {
    let mut ends =
        Endpoints { api_url: "https://cloudapi.suunto.com".into(), ..Endpoints::default() };
    ends.settings.insert("SUBSCRIPTION_KEY", "apim-key".into());
    let request =
        Suunto.authorize(reqwest::Client::new().get("https://cloudapi.suunto.com/x"), &ends, "jwt");
    let request = request.build().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(request.headers()["ocp-apim-subscription-key"], "apim-key");
    assert_eq!(request.headers()["authorization"], "Bearer jwt");
    assert_eq!(
        Suunto.token_user_id(&json!({"access_token": "x", "user": "johndoe123"})).as_deref(),
        Some("johndoe123")
    );
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyIjogImpvaG5kb2UxMjMiLCAic3ViIjogIngifQ.sig";
    assert_eq!(Suunto.token_user_id(&json!({"access_token": jwt})).as_deref(), Some("johndoe123"));
    let full = json!({"payload": vec![json!({}); 100]});
    assert_eq!(
        Suunto.next_page(&full, Some("100"), crate::normal::any_window()).as_deref(),
        Some("200")
    );
    assert_eq!(
        Suunto.next_page(&json!({"payload": []}), Some("100"), crate::normal::any_window()),
        None
    );
}

#[test]
fn notifications_are_signed_with_the_notification_secret() {
    use hmac::{Hmac, Mac};
    let ends = Endpoints { webhook_secret: Some("n-secret".into()), ..Endpoints::default() };
    let body = created().to_string();
    let mut mac =
        Hmac::<sha2::Sha256>::new_from_slice(b"n-secret").unwrap_or_else(|_| panic!("key"));
    mac.update(body.as_bytes());
    let sig = hex::encode(mac.finalize().into_bytes());
    let header =
        |sig: String| move |name: &str| (name == "x-hmac-sha256-signature").then(|| sig.clone());
    assert!(Suunto.webhook_verified(&ends, &header(sig.clone()), body.as_bytes()));
    assert!(!Suunto.webhook_verified(&ends, &header(sig), &body.as_bytes()[1..]));
    assert!(!Suunto.webhook_verified(
        &Endpoints::default(),
        &header(String::new()),
        body.as_bytes()
    ));
}

/// Records read as leniently as `.get` read them: numbers as numeric strings, a field of another
/// type as none (never the record lost); a record that does not read is dropped alone; an
/// unknown collection reads as nothing and is asked for as a 24/7 one.
#[test]
fn records_read_leniently_one_by_one() {
    let workouts = json!({"payload": [
        {"workoutKey": 7, "activityId": "1", "startTime": "1702729200000", "totalTime": "60",
            "hrdata": [145, 175], "gear": null, "energyConsumption": "none"},
        {"startTime": true, "totalTime": 60}]});
    let mut out = normalised();
    Suunto.map_page(WORKOUTS, &workouts, &mut out);
    let w = &out.workouts[0].row;
    assert_eq!((w.external_id.as_deref(), w.figures.kind.as_deref()), (None, Some("running")));
    assert_eq!((w.figures.duration_seconds, w.figures.avg_heart_rate_bpm), (60, None));
    assert_eq!(w.figures.calories_kcal, None);
    assert_eq!(w.statistics["gear"], Value::Null);
    assert_eq!(out.report.dropped_count(), 1, "a start that is no number");

    let sleep = json!([{"entryData": {"BedtimeStart": "2026-05-17T02:13:00+02:00",
            "BedtimeEnd": "2026-05-17T09:19:00+02:00", "Duration": "25560", "DeepSleepDuration": [1],
            "IsNap": "no", "SleepId": "night-1", "AvgHRV": "41"}},
        {"entryData": [{"BedtimeStart": "2026-05-17T02:13:00+02:00"}]}, "junk"]);
    let mut out = normalised();
    Suunto.map_page(SLEEP, &sleep, &mut out);
    let night = out.sleep[0].vendor.unwrap_or_else(|| panic!("the night"));
    assert_eq!((night.in_bed, night.totals.deep, night.is_nap), (Some(25560), None, None));
    assert_eq!(out.sleep[0].external_id.as_deref(), Some("night-1"));
    assert_eq!(values(&out, HRV_RMSSD).len(), 1);
    assert_eq!(out.report.dropped_count(), 2);

    let activity = json!([{"timestamp": "2026-05-17T12:00:00+02:00", "entryData": {"HR": "62", "StepCount": {}}},
        {"timestamp": "2026-05-17T12:01:00+02:00", "entryData": "none"}, {"timestamp": 5}]);
    let mut out = normalised();
    Suunto.map_page(ACTIVITY, &activity, &mut out);
    assert_eq!(values(&out, HR), [(at("2026-05-17T10:00:00Z"), 62.0, Some(120))]);
    assert!(values(&out, STEPS).is_empty());
    assert_eq!(out.report.dropped_count(), 1, "a time that is no text");

    // A day without its time costs its statistic after the days before it were read.
    let daily = json!([{"Name": "stepcount", "Sources": ["junk", {"Samples": [
            {"TimeISO8601": "2019-02-12T02:00:00.000", "Value": "4617"}, {"Value": 1}]}]},
        {"Name": "stepcount", "Sources": {}}, {"Name": "other", "Sources": 5}]);
    let mut out = normalised();
    Suunto.map_page(DAILY, &daily, &mut out);
    assert_eq!(values(&out, STEPS), [(at("2019-02-12T14:00:00Z"), 4617.0, Some(0))]);
    assert_eq!(out.report.dropped_count(), 2);

    let mut out = normalised();
    Suunto.map_page("v3/other", &workouts, &mut out);
    assert!(out.workouts.is_empty() && out.report.dropped_count() == 0);
    let window = crate::normal::any_window();
    let url = Suunto.page_url(INFO.api_url, "v3/other", window, None).map(|u| u.to_string());
    assert_eq!(
        url.as_deref(),
        Ok("https://cloudapi.suunto.com/v3/other?from=1773014400000&to=1773100800000")
    );
    assert_eq!(Suunto.window_step("v3/other"), Some(Duration::days(28)));
    assert_eq!(Suunto.window_step(WORKOUTS), None);
}
