//! The mapping against the examples of Oura's API documentation (`docs/vendors/oura.md` §2),
//! with the expected rows worked out by hand.

use chrono::{DateTime, Utc};
use ingest::{Normalised, Stage};
use serde_json::json;

use super::*;
use crate::normal::{at, values};

fn normalised() -> Normalised {
    Normalised { provider: "oura", ..Normalised::default() }
}

#[test]
fn a_sleep_period_becomes_a_session_from_its_hypnogram_with_its_night_samples() {
    let body = json!({"data": [{
        "id": "8f9a5221-639e-4a85-81cb-4065ef23f979", "day": "2022-07-12", "type": "long_sleep",
        "period": 0, "bedtime_start": "2022-07-12T01:05:14-07:00",
        "bedtime_end": "2022-07-12T02:07:14-07:00", "time_in_bed": 3720,
        "low_battery_alert": false, "average_breath": 12.625,
        "heart_rate": {"interval": 300, "items": [null, 50, 46], "timestamp": "2022-07-12T01:05:14.000-07:00"},
        "hrv": {"interval": 300, "items": [null, 102, 122], "timestamp": "2022-07-12T01:05:14.000-07:00"},
        "sleep_phase_5_min": "4422111233344"
    }, {
        "id": "rejected", "type": "rest", "bedtime_start": "2022-07-12T13:00:00-07:00",
        "bedtime_end": "2022-07-12T13:30:00-07:00", "time_in_bed": 1800, "period": 1,
        "low_battery_alert": false, "day": "2022-07-12"
    }], "next_token": null});
    let mut out = normalised();
    page(Collection::Sleep, &body, &mut out);
    assert_eq!(out.sleep.len(), 1, "the rejected detection is left out");
    let s = &out.sleep[0];
    assert_eq!(
        (s.zone_offset, s.external_id.as_deref()),
        (Some(-420), Some("8f9a5221-639e-4a85-81cb-4065ef23f979"))
    );
    let stages: Vec<(Stage, DateTime<Utc>, DateTime<Utc>)> =
        s.intervals.iter().map(|i| (i.stage, i.start, i.end)).collect();
    // 01:05:14 local is 08:05:14 UTC; 5-minute epochs; the last cut at the end (09:07:14).
    assert_eq!(
        stages,
        [
            (Stage::Awake, at("2022-07-12T08:05:14Z"), at("2022-07-12T08:15:14Z")),
            (Stage::Light, at("2022-07-12T08:15:14Z"), at("2022-07-12T08:25:14Z")),
            (Stage::Deep, at("2022-07-12T08:25:14Z"), at("2022-07-12T08:40:14Z")),
            (Stage::Light, at("2022-07-12T08:40:14Z"), at("2022-07-12T08:45:14Z")),
            (Stage::Rem, at("2022-07-12T08:45:14Z"), at("2022-07-12T09:00:14Z")),
            (Stage::Awake, at("2022-07-12T09:00:14Z"), at("2022-07-12T09:07:14Z")),
        ]
    );
    assert_eq!(
        values(&out, HEART_RATE),
        [
            (at("2022-07-12T08:10:14Z"), 50.0, Some(-420)),
            (at("2022-07-12T08:15:14Z"), 46.0, Some(-420))
        ]
    );
    assert_eq!(values(&out, HRV_RMSSD).iter().map(|s| s.1).collect::<Vec<_>>(), [102.0, 122.0]);
    // Inside the period, on the day one wakes up: its middle.
    assert_eq!(values(&out, RESPIRATORY_RATE), [(at("2022-07-12T08:36:14Z"), 12.625, Some(-420))]);
    // The period as Oura documents it: its bounds, its time in bed, a night (`long_sleep`).
    let night = s.vendor.unwrap_or_else(|| panic!("the documented period"));
    assert_eq!(
        (night.start, night.end, night.in_bed, night.is_nap),
        (at("2022-07-12T08:05:14Z"), at("2022-07-12T09:07:14Z"), Some(3720), Some(false))
    );

    // The night's SpO2 (a day, no time) goes inside the night that ends on that day.
    let spo2 =
        json!({"data": [{"id": "s", "day": "2022-07-12", "spo2_percentage": {"average": 97.5}}]});
    page(Collection::DailySpo2, &spo2, &mut out);
    assert_eq!(values(&out, SPO2), [(at("2022-07-12T08:36:14Z"), 97.5, Some(-420))]);
    // One source: the ring.
    assert_eq!(out.sources.list.len(), 1);
    assert_eq!(out.sources.list[0].device_type.as_deref(), Some("ring"));
}

#[test]
fn daily_activity_gives_daily_totals_at_the_days_own_time() {
    let body = json!({"data": [{"id": "a", "day": "2021-11-26", "timestamp": "2021-11-26T04:00:00-08:00",
        "score": 82, "steps": 18430, "active_calories": 1222, "total_calories": 3446,
        "equivalent_walking_distance": 20122}], "next_token": null});
    let mut out = normalised();
    page(Collection::DailyActivity, &body, &mut out);
    let t = at("2021-11-26T12:00:00Z");
    assert_eq!(values(&out, STEPS), [(t, 18430.0, Some(-480))]);
    assert_eq!(values(&out, ENERGY), [(t, 1222.0, Some(-480))]);
    assert_eq!(values(&out, TOTAL_ENERGY), [(t, 3446.0, Some(-480))]);
    assert!(out.samples.iter().all(|s| s.is_daily_total == Some(true)));
    // Equivalent walking distance is no distance walked: not stored as one.
    assert_eq!(out.samples.len(), 3);
}

#[test]
fn heart_rate_readiness_spo2_and_workouts() {
    let mut out = normalised();
    let hr = json!({"data": [{"bpm": 78, "source": "rest", "timestamp": "2024-01-12T06:04:46+00:00",
        "timestamp_unix": 1705039486000_i64}], "next_token": null});
    page(Collection::HeartRate, &hr, &mut out);
    assert_eq!(values(&out, HEART_RATE), [(at("2024-01-12T06:04:46Z"), 78.0, None)]);

    let readiness = json!({"data": [{"id": "r", "day": "2021-10-27", "timestamp": "2021-10-27T00:00:00+00:00",
        "score": 66, "temperature_deviation": -0.2, "temperature_trend_deviation": 0.1,
        "contributors": {"hrv_balance": 75}}], "next_token": null});
    page(Collection::DailyReadiness, &readiness, &mut out);
    let t = at("2021-10-27T00:00:00Z");
    assert_eq!(values(&out, RECOVERY_SCORE), [(t, 66.0, Some(0))]);
    assert_eq!(values(&out, TEMPERATURE_DEVIATION), [(t, -0.2, Some(0))]);
    assert_eq!(values(&out, TEMPERATURE_TREND), [(t, 0.1, Some(0))]);

    let spo2 = json!({"data": [{"id": "s", "day": "2024-01-15", "spo2_percentage": {"average": 96.8},
        "breathing_disturbance_index": 12}, {"id": "none", "day": "2024-01-16", "spo2_percentage": null}],
        "next_token": null});
    page(Collection::DailySpo2, &spo2, &mut out);
    // No night of that day in the pull: the day's local noon.
    assert_eq!(values(&out, SPO2), [(at("2024-01-15T12:00:00Z"), 96.8, Some(0))]);

    let workout = json!({"data": [{"id": "wo-1", "activity": "cycling", "day": "2026-07-05",
        "start_datetime": "2026-07-05T10:00:00-04:00", "end_datetime": "2026-07-05T11:00:00-04:00",
        "calories": 600.0, "distance": 21000.0, "intensity": "moderate", "label": null,
        "source": "autodetected"}], "next_token": null});
    page(Collection::Workout, &workout, &mut out);
    let w = &out.workouts[0].row;
    assert_eq!(
        (w.figures.kind.as_deref(), w.figures.start_time, w.figures.duration_seconds),
        (Some("cycling"), at("2026-07-05T14:00:00Z"), 3600)
    );
    assert_eq!(
        (w.figures.zone_offset, w.figures.calories_kcal, w.figures.distance_meters),
        (Some(-240), Some(600.0), Some(21000.0))
    );
    assert_eq!(w.external_id.as_deref(), Some("wo-1"));
    assert_eq!(w.statistics["intensity"], "moderate");
    assert_eq!(out.report.dropped_count(), 0);
}

#[test]
fn a_record_that_does_not_read_is_dropped_and_reported_never_the_page() {
    let body = json!({"data": [{"bpm": "fast"}, {"bpm": 60, "timestamp": "2024-01-12T06:00:00Z"}],
        "next_token": null});
    let mut out = normalised();
    page(Collection::HeartRate, &body, &mut out);
    assert_eq!(out.samples.len(), 1);
    assert_eq!(out.report.dropped_count(), 1);
    // A page that is not a page: nothing, and no panic.
    page(Collection::Sleep, &json!("junk"), &mut out);
    assert_eq!(out.sleep.len(), 0);
}
