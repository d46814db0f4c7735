//! The mapping against the examples of WHOOP's API reference (`docs/vendors/whoop.md` §2), the
//! expected rows worked out by hand.

use ingest::Normalised;
use schema::ids::UserId;
use serde_json::json;

use super::*;
use crate::normal::{at, values};

fn normalised() -> Normalised {
    Normalised { provider: "whoop", ..Normalised::default() }
}

#[test]
fn a_night_is_its_documented_bounds_and_stage_totals_and_invents_no_stage_order() {
    let page = json!({"records": [{
        "id": "ecfc6a15-4661-442f-a9a4-f160dd7afae8", "cycle_id": 93845, "user_id": 10129,
        "created_at": "2022-04-24T11:25:44.774Z", "updated_at": "2022-04-24T14:25:44.774Z",
        "start": "2022-04-24T02:25:44.774Z", "end": "2022-04-24T10:25:44.774Z", "timezone_offset": "-05:00",
        "nap": false, "score_state": "SCORED",
        "score": {"stage_summary": {"total_in_bed_time_milli": 30272735, "total_awake_time_milli": 1403507,
            "total_no_data_time_milli": 0, "total_light_sleep_time_milli": 14905851,
            "total_slow_wave_sleep_time_milli": 6630370, "total_rem_sleep_time_milli": 5879573,
            "sleep_cycle_count": 3, "disturbance_count": 12},
            "respiratory_rate": 16.11328125, "sleep_efficiency_percentage": 91.69533848}}],
        "next_token": "MTIzOjEyMzEyMw"});
    let mut out = normalised();
    Whoop.map_page(SLEEP, &page, &mut out);
    assert_eq!(
        Whoop.next_page(&page, None, crate::normal::any_window()).as_deref(),
        Some("MTIzOjEyMzEyMw")
    );
    let s = &out.sleep[0];
    assert_eq!(s.zone_offset, Some(-300));
    assert_eq!(s.external_id.as_deref(), Some("ecfc6a15-4661-442f-a9a4-f160dd7afae8"));
    assert!(s.intervals.is_empty(), "totals alone: no timeline is made up");
    let night = s.vendor.unwrap_or_else(|| panic!("the night as WHOOP documents it"));
    assert_eq!(
        (night.start, night.end, night.is_nap),
        (at("2022-04-24T02:25:44.774Z"), at("2022-04-24T10:25:44.774Z"), Some(false))
    );
    // Milliseconds to whole seconds; asleep = 14,905,851 + 6,630,370 + 5,879,573 ms.
    assert_eq!(
        night.totals,
        ingest::StageTotals {
            light: Some(14905),
            deep: Some(6630),
            rem: Some(5879),
            awake: Some(1403),
            asleep: Some(27415),
        }
    );
    assert_eq!(night.in_bed, Some(30272));
    // Inside the night, on the wake-up day: its middle, 01:25:44.774 local.
    assert_eq!(
        values(&out, RESPIRATORY_RATE),
        [(at("2022-04-24T06:25:44.774Z"), 16.11328125, Some(-300))]
    );
}

#[test]
fn workouts_cycles_and_recovery_in_their_units() {
    let mut out = normalised();
    let workouts = json!({"records": [{"id": "ecfc6a15-4661-442f-a9a4-f160dd7afae8", "user_id": 9012,
        "start": "2022-04-24T02:25:44.774Z", "end": "2022-04-24T03:25:44.774Z", "timezone_offset": "-05:00",
        "sport_name": "running", "score_state": "SCORED",
        "score": {"strain": 8.2463, "average_heart_rate": 123, "max_heart_rate": 146, "kilojoule": 1569.34033203125,
            "percent_recorded": 100.0, "distance_meter": 1772.77035916, "altitude_gain_meter": 46.64384460449}}]});
    Whoop.map_page(WORKOUT, &workouts, &mut out);
    let w = &out.workouts[0].row;
    assert_eq!(
        (w.figures.kind.as_deref(), w.figures.duration_seconds, w.figures.zone_offset),
        (Some("running"), 3600, Some(-300))
    );
    // 1569.34 kJ / 4.184 = 375.08 kcal.
    assert_eq!(w.figures.calories_kcal.map(|c| (c * 100.0).round() / 100.0), Some(375.08));
    assert_eq!(
        (w.figures.avg_heart_rate_bpm, w.figures.max_heart_rate_bpm),
        (Some(123.0), Some(146.0))
    );
    assert_eq!(w.figures.distance_meters, Some(1772.77035916));

    let cycles = json!({"records": [
        {"id": 93845, "user_id": 10129, "start": "2022-04-24T02:25:44.774Z", "end": "2022-04-25T02:00:00.000Z",
         "timezone_offset": "-05:00", "score_state": "SCORED",
         "score": {"strain": 5.2951527, "kilojoule": 8288.297, "average_heart_rate": 68, "max_heart_rate": 141}},
        {"id": 93846, "user_id": 10129, "start": "2022-04-25T02:00:00.000Z", "timezone_offset": "-05:00",
         "score_state": "SCORED", "score": {"kilojoule": 100.0}}]});
    Whoop.map_page(CYCLE, &cycles, &mut out);
    let energy = values(&out, TOTAL_ENERGY);
    assert_eq!(energy.len(), 1, "the running cycle has no total yet");
    assert_eq!(
        // 8288.297 kJ / 4.184 = 1980.95 kcal.
        // At the cycle's middle: 02:25:44.774Z + (23:34:15.226) / 2.
        (energy[0].0, (energy[0].1 * 100.0).round() / 100.0),
        (at("2022-04-24T14:12:52.387Z"), 1980.95)
    );
    assert!(
        out.samples
            .iter()
            .filter(|s| s.series_type_id == TOTAL_ENERGY)
            .all(|s| s.is_daily_total == Some(true))
    );

    let recovery = json!({"records": [{"cycle_id": 93845, "sleep_id": "123e4567-e89b-12d3-a456-426614174000",
        "user_id": 10129, "created_at": "2022-04-24T11:25:44.774Z", "updated_at": "2022-04-24T14:25:44.774Z",
        "score_state": "SCORED", "score": {"user_calibrating": false, "recovery_score": 44.0,
            "resting_heart_rate": 64.0, "hrv_rmssd_milli": 31.813562, "spo2_percentage": 95.6875,
            "skin_temp_celsius": 33.7}},
        {"cycle_id": 1, "user_id": 10129, "created_at": "2022-04-25T11:00:00Z", "score_state": "PENDING_SCORE"}]});
    Whoop.map_page(RECOVERY, &recovery, &mut out);
    // Its sleep was not in this pull: at the time WHOOP made it, at the offset the pull knows.
    let t = at("2022-04-24T11:25:44.774Z");
    let zone = Some(-300);
    assert_eq!(values(&out, RECOVERY_SCORE), [(t, 44.0, zone)]);
    assert_eq!(values(&out, RESTING_HEART_RATE), [(t, 64.0, zone)]);
    assert_eq!(values(&out, HRV_RMSSD), [(t, 31.813562, zone)]);
    assert_eq!(values(&out, SPO2), [(t, 95.6875, zone)]);
    assert_eq!(values(&out, SKIN_TEMPERATURE), [(t, 33.7, zone)]);
    assert_eq!(out.report.dropped_count(), 0);
}

/// A recovery is its sleep's: its figures are stored inside that night, at its offset, where the
/// night's summary averages them and the wake-up day counts them.
#[test]
fn a_recovery_is_stored_in_the_night_it_follows() {
    let mut out = normalised();
    let sleep = json!({"records": [{"id": "night-1", "start": "2022-04-24T02:25:44.774Z",
        "end": "2022-04-24T10:25:44.774Z", "timezone_offset": "-05:00", "nap": false,
        "score_state": "SCORED", "score": {"stage_summary": {}}}]});
    Whoop.map_page(SLEEP, &sleep, &mut out);
    let recovery = json!({"records": [{"cycle_id": 1, "sleep_id": "night-1",
        "created_at": "2022-04-24T11:25:44.774Z", "score_state": "SCORED",
        "score": {"recovery_score": 44.0, "hrv_rmssd_milli": 31.813562}}]});
    Whoop.map_page(RECOVERY, &recovery, &mut out);
    let t = at("2022-04-24T06:25:44.774Z");
    assert_eq!(values(&out, HRV_RMSSD), [(t, 31.813562, Some(-300))]);
    assert_eq!(values(&out, RECOVERY_SCORE), [(t, 44.0, Some(-300))]);
}

#[test]
fn webhooks_are_signed_in_base64_over_the_timestamp_and_the_body() {
    use base64::Engine;
    use hmac::{Hmac, Mac};
    let ends = Endpoints {
        client_id: "app".into(),
        client_secret: "whoop-secret".into(),
        authorize_url: String::new(),
        token_url: String::new(),
        api_url: "https://api.prod.whoop.com/developer".into(),
        ..Endpoints::default()
    };
    let body = br#"{"user_id":10129,"id":"ecfc6a15-4661-442f-a9a4-f160dd7afae8","type":"sleep.updated","trace_id":"t"}"#;
    // Milliseconds, as WHOOP sends them; now (an old one is refused as a replay).
    let ts = (chrono::Utc::now().timestamp_millis()).to_string();
    let ts = ts.as_str();
    let mut mac =
        Hmac::<sha2::Sha256>::new_from_slice(b"whoop-secret").unwrap_or_else(|_| panic!("key"));
    mac.update(ts.as_bytes());
    mac.update(body);
    let sig = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    let headers = |sig: String| {
        move |name: &str| match name {
            "x-whoop-signature" => Some(sig.clone()),
            "x-whoop-signature-timestamp" => Some(ts.to_string()),
            _ => None,
        }
    };
    assert!(Whoop.webhook_verified(&ends, &headers(sig.clone()), body));
    assert!(!Whoop.webhook_verified(&ends, &headers(sig), &body[1..]));
    let old = |name: &str| match name {
        "x-whoop-signature-timestamp" => Some("1748241241000".to_string()),
        "x-whoop-signature" => Some(String::new()),
        _ => None,
    };
    assert!(!Whoop.webhook_verified(&ends, &old, body), "a replayed notification");
    let value: Value = serde_json::from_slice(body).unwrap_or_default();
    let pulls = Whoop.webhook_notices(&value);
    assert!(matches!(pulls.as_slice(), [Notice::Pull(user, _)] if user == "10129"), "{pulls:?}");
    let c = Connected {
        ends: &ends,
        access_token: "t",
        vendor_user: None,
        user_id: UserId::default(),
        webhook_url: "",
    };
    let revoke: Vec<_> =
        Whoop.revoke(&c).into_iter().map(|r| (r.method, r.url.to_string(), r.auth)).collect();
    assert_eq!(
        revoke,
        [(
            reqwest::Method::DELETE,
            "https://api.prod.whoop.com/developer/v2/user/access".into(),
            CallAuth::Bearer("t".into())
        )]
    );
}
