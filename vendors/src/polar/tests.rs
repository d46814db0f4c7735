//! The mapping against the examples of Polar's AccessLink reference (`docs/vendors/polar.md`
//! §2–3), the expected rows worked out by hand.

use ingest::{Normalised, Stage};
use serde_json::json;

use super::*;
use crate::normal::{at, values};

fn normalised() -> Normalised {
    Normalised { provider: "polar", ..Normalised::default() }
}

fn night() -> Value {
    json!({"nights": [{"polar_user": "https://www.polaraccesslink/v3/users/1", "date": "2020-01-01",
        "sleep_start_time": "2020-01-01T00:39:07+03:00", "sleep_end_time": "2020-01-01T09:19:37+03:00",
        "device_id": "1111AAAA", "continuity": 2.1, "light_sleep": 1000, "deep_sleep": 1000,
        "rem_sleep": 1000, "sleep_score": 80, "hypnogram": {"00:39": 2, "00:50": 3, "01:23": 5},
        "heart_rate_samples": {"00:41": 76, "00:46": 77, "00:51": 76}}]})
}

#[test]
fn a_night_is_its_hypnogram_read_at_the_nights_offset() {
    let mut out = normalised();
    Polar.map_page(SLEEP, &night(), &mut out);
    let s = &out.sleep[0];
    assert_eq!((s.zone_offset, s.external_id.as_deref()), (Some(180), Some("sleep-2020-01-01")));
    let spans: Vec<_> = s.intervals.iter().map(|i| (i.stage, i.start, i.end)).collect();
    // 00:39 +03:00 is 21:39 UTC the evening before; the first run starts when the night does.
    assert_eq!(
        spans,
        [
            (Stage::Light, at("2019-12-31T21:39:07Z"), at("2019-12-31T21:50:00Z")),
            (Stage::Light, at("2019-12-31T21:50:00Z"), at("2019-12-31T22:23:00Z")),
            (Stage::Unknown, at("2019-12-31T22:23:00Z"), at("2020-01-01T06:19:37Z")),
        ]
    );
    assert_eq!(
        values(&out, HR),
        [
            (at("2019-12-31T21:41:00Z"), 76.0, Some(180)),
            (at("2019-12-31T21:46:00Z"), 77.0, Some(180)),
            (at("2019-12-31T21:51:00Z"), 76.0, Some(180)),
        ]
    );
}

#[test]
fn a_night_over_midnight_moves_its_clock_to_the_next_day() {
    let page = json!([{"date": "2026-03-11", "sleep_start_time": "2026-03-10T23:30:00+01:00",
        "sleep_end_time": "2026-03-11T07:00:00+01:00", "hypnogram": {"23:30": 0, "23:45": 4, "02:00": 1}}]);
    let mut out = normalised();
    Polar.map_page(SLEEP, &page, &mut out);
    let spans: Vec<_> = out.sleep[0].intervals.iter().map(|i| (i.stage, i.start, i.end)).collect();
    assert_eq!(
        spans,
        [
            (Stage::Awake, at("2026-03-10T22:30:00Z"), at("2026-03-10T22:45:00Z")),
            (Stage::Deep, at("2026-03-10T22:45:00Z"), at("2026-03-11T01:00:00Z")),
            (Stage::Rem, at("2026-03-11T01:00:00Z"), at("2026-03-11T06:00:00Z")),
        ]
    );
}

#[test]
fn exercises_days_and_biosensing_in_their_units_and_offsets() {
    let mut out = normalised();
    let exercises = json!([{"id": "2AC312F", "upload_time": "2008-10-13T10:40:02.000Z",
        "device": "Polar M400", "start_time": "2008-10-13T10:40:02", "start_time_utc_offset": 180,
        "duration": "PT2H44M", "calories": 530, "distance": 1600,
        "heart_rate": {"average": 129, "maximum": 147}, "training_load": 143.22, "sport": "RUNNING"}]);
    Polar.map_page(EXERCISES, &exercises, &mut out);
    let w = &out.workouts[0].row;
    // 10:40:02 at +03:00 is 07:40:02 UTC; 2 h 44 min later.
    assert_eq!(
        (w.figures.start_time, w.figures.end_time),
        (at("2008-10-13T07:40:02Z"), at("2008-10-13T10:24:02Z"))
    );
    assert_eq!(
        (w.figures.duration_seconds, w.figures.zone_offset, w.figures.kind.as_deref()),
        (9840, Some(180), Some("running"))
    );
    assert_eq!((w.figures.calories_kcal, w.figures.distance_meters), (Some(530.0), Some(1600.0)));
    assert_eq!(
        (w.figures.avg_heart_rate_bpm, w.figures.max_heart_rate_bpm),
        (Some(129.0), Some(147.0))
    );
    assert_eq!(w.external_id.as_deref(), Some("2AC312F"));

    // Times without an offset are read at the latest one seen (the exercise's, +03:00).
    let days = json!([{"start_time": "2025-08-13T08:15:30", "end_time": "2025-08-13T23:59:59",
        "calories": 2500, "active_calories": 1500, "steps": 8823, "distance_from_steps": 4590.53}]);
    Polar.map_page(ACTIVITIES, &days, &mut out);
    let noon = at("2025-08-13T09:00:00Z");
    assert_eq!(values(&out, STEPS), [(noon, 8823.0, Some(180))]);
    assert_eq!(values(&out, ENERGY), [(noon, 1500.0, Some(180))]);
    assert_eq!(values(&out, TOTAL_ENERGY), [(noon, 2500.0, Some(180))]);
    assert_eq!(values(&out, DISTANCE), [(noon, 4590.53, Some(180))]);
    assert!(
        out.samples
            .iter()
            .filter(|s| s.series_type_id == STEPS)
            .all(|s| s.is_daily_total == Some(true))
    );

    let hr = json!({"polar_user": "https://polaraccesslink.com/v3/users/627139", "date": "2022-09-12",
        "heart_rate_samples": [{"heart_rate": 63, "sample_time": "00:02:08"}, {"heart_rate": 62, "sample_time": "00:07:08"}]});
    Polar.map_page(HEART_RATE, &hr, &mut out);
    assert_eq!(
        values(&out, HR),
        [
            (at("2022-09-11T21:02:08Z"), 63.0, Some(180)),
            (at("2022-09-11T21:07:08Z"), 62.0, Some(180))
        ]
    );
    let wrapped = json!({"heart_rates": [hr]});
    let mut again = normalised();
    Polar.map_page(HEART_RATE, &wrapped, &mut again);
    assert_eq!(values(&again, HR).len(), 2, "the list form too");

    let recharge = json!({"recharges": [{"date": "2020-01-01", "heart_rate_avg": 70,
        "heart_rate_variability_avg": 28, "breathing_rate_avg": 14.1, "nightly_recharge_status": 3,
        "hrv_samples": {"23:56": 12, "00:41": 14}, "breathing_samples": {"00:39": 13.4}}]});
    Polar.map_page(RECHARGE, &recharge, &mut out);
    assert_eq!(
        values(&out, HRV_RMSSD),
        [
            (at("2019-12-31T20:56:00Z"), 12.0, Some(180)),
            (at("2019-12-31T21:41:00Z"), 14.0, Some(180))
        ]
    );
    assert_eq!(values(&out, BREATHING), [(at("2019-12-31T21:39:00Z"), 13.4, Some(180))]);

    let spo2 = json!([{"source_device_id": "1111AAAA", "test_time": 1697787256, "time_zone_offset": 180,
        "test_status": "SPO2_TEST_PASSED", "blood_oxygen_percent": 95},
        {"test_time": 1697787300, "test_status": "SPO2_TEST_FAILED", "blood_oxygen_percent": 70}]);
    Polar.map_page(SPO2, &spo2, &mut out);
    assert_eq!(values(&out, OXYGEN), [(at("2023-10-20T07:34:16Z"), 95.0, Some(180))]);

    let skin = json!([{"sleep_date": "2023-10-20", "sleep_time_skin_temperature_celsius": 36.5,
        "deviation_from_baseline_celsius": 0.5}]);
    Polar.map_page(SKIN_TEMPERATURE, &skin, &mut out);
    assert_eq!(values(&out, SKIN), [(at("2023-10-20T09:00:00Z"), 36.5, Some(180))]);
    assert_eq!(values(&out, SKIN_DEVIATION), [(at("2023-10-20T09:00:00Z"), 0.5, Some(180))]);
    assert_eq!(out.report.dropped_count(), 0);
}

#[test]
fn webhooks_are_hex_hmacs_of_the_body_and_the_ping_is_taken_unsigned() {
    use hmac::{Hmac, Mac};
    let ends = Endpoints { webhook_secret: Some("abe1f3ae".into()), ..Endpoints::default() };
    let body = br#"{"event":"SLEEP","user_id":475,"date":"2019-12-31","timestamp":"2018-05-15T14:22:24Z","url":"https://www.polaraccesslink.com/v3/users/sleep/2019-12-31"}"#;
    let mut mac =
        Hmac::<sha2::Sha256>::new_from_slice(b"abe1f3ae").unwrap_or_else(|_| panic!("key"));
    mac.update(body);
    let sig = hex::encode(mac.finalize().into_bytes());
    let headers =
        |sig: String| move |name: &str| (name == "polar-webhook-signature").then(|| sig.clone());
    assert!(Polar.webhook_verified(&ends, &headers(sig.clone()), body));
    assert!(!Polar.webhook_verified(&ends, &headers(sig.clone()), &body[1..]));
    let no_secret = Endpoints::default();
    assert!(!Polar.webhook_verified(&no_secret, &headers(sig), body));
    let ping = br#"{"timestamp":"2018-05-15T14:22:24Z","event":"PING"}"#;
    let event = |name: &str| (name == "polar-webhook-event").then(|| "PING".to_string());
    assert!(Polar.webhook_verified(&no_secret, &event, ping));
    assert!(!Polar.webhook_verified(&no_secret, &event, body), "a PING header on data");
    let value: Value = serde_json::from_slice(body).unwrap_or_default();
    assert_eq!(
        Polar.webhook_notices(&value),
        [Notice::Pull("475".into(), (at("2019-12-30T00:00:00Z"), at("2020-01-02T00:00:00Z")))]
    );
    assert!(Polar.webhook_notices(&serde_json::from_slice(ping).unwrap_or_default()).is_empty());
}

#[test]
fn a_connection_registers_the_user_and_a_disconnection_deregisters_it() {
    let ends =
        Endpoints { api_url: "https://www.polaraccesslink.com".into(), ..Endpoints::default() };
    let user = schema::ids::UserId::default();
    let c = Connected {
        ends: &ends,
        access_token: "t",
        vendor_user: Some("475"),
        user_id: user,
        webhook_url: "",
    };
    let register = Polar.on_connect(&c);
    assert_eq!(register[0].url.as_str(), "https://www.polaraccesslink.com/v3/users");
    assert_eq!(register[0].json, Some(json!({"member-id": user.to_string()})));
    assert!(register[0].required && register[0].also_ok == [409]);
    let revoke = Polar.revoke(&c);
    assert_eq!(
        (revoke[0].method.as_str(), revoke[0].url.as_str()),
        ("DELETE", "https://www.polaraccesslink.com/v3/users/475")
    );
    assert_eq!(
        Polar.token_user_id(&json!({"access_token": "a", "x_user_id": 475})).as_deref(),
        Some("475")
    );
}
