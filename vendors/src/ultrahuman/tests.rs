//! The mapping against the payloads in `docs/vendors/ultrahuman.md` §2 (both envelopes), the
//! expected rows worked out by hand.

use ingest::{Normalised, Stage};
use schema::ids::UserId;
use serde_json::json;

use super::*;
use crate::normal::{at, values};

fn normalised() -> Normalised {
    Normalised { provider: "ultrahuman", ..Normalised::default() }
}

#[test]
fn a_day_of_series_by_date_in_the_users_zone() {
    let page = json!({"status": 200, "error": null, "data": {"metrics": {"2024-01-15": [
        {"type": "hr", "object": {"day_start_timestamp": 1705276800, "title": "Heart Rate", "unit": "bpm",
            "last_reading": 72.5, "values": [{"value": 70.0, "timestamp": 1705276800}, {"value": 72.5, "timestamp": 1705276900}]}},
        {"type": "steps", "object": {"day_start_timestamp": 1705276800, "subtitle": "Steps", "total": 8500.0, "avg": 59.0,
            "values": [{"value": 100, "timestamp": 1705276800}, {"value": 200, "timestamp": 1705276900}]}},
        {"type": "night_rhr", "object": {"day_start_timestamp": 1705276800, "avg": 54.0, "values": []}},
        {"type": "recovery_index", "object": {"value": 81.0, "title": "Recovery", "day_start_timestamp": 1705276800}},
        {"type": "movement_index", "object": {"value": 60.0, "day_start_timestamp": 1705276800}}]},
        "latest_time_zone": "Europe/Berlin"}});
    let mut out = normalised();
    Ultrahuman.map_page(METRICS, &page, &mut out);
    let (t0, t1, noon) =
        (at("2024-01-15T00:00:00Z"), at("2024-01-15T00:01:40Z"), at("2024-01-15T12:00:00Z"));
    assert_eq!(values(&out, HR), [(t0, 70.0, Some(60)), (t1, 72.5, Some(60))]);
    assert_eq!(
        values(&out, STEPS),
        [(t0, 100.0, Some(60)), (t1, 200.0, Some(60)), (noon, 8500.0, Some(60))]
    );
    let total: Vec<_> = out
        .samples
        .iter()
        .filter(|s| s.series_type_id == STEPS)
        .map(|s| s.is_daily_total)
        .collect();
    assert_eq!(
        total,
        [Some(false), Some(false), Some(true)],
        "the day's total replaces the intervals"
    );
    assert_eq!(values(&out, RESTING_HR), [(noon, 54.0, Some(60))]);
    assert_eq!(values(&out, RECOVERY), [(noon, 81.0, Some(60))]);
    assert_eq!(out.report.dropped_count(), 0);
}

#[test]
fn a_night_from_its_hypnogram_or_its_stage_totals() {
    let page = json!({"data": {"metric_data": [{"type": "Sleep", "object": {
        "bedtime_start": 1705309200, "bedtime_end": 1705334400,
        "sleep_stages": [{"type": "deep_sleep", "stage_time": 3600}, {"type": "light_sleep", "stage_time": 16200},
                         {"type": "rem_sleep", "stage_time": 3600}, {"type": "awake", "stage_time": 1800}],
        "sleep_graph": {"title": "", "data": [{"start": 1705309200, "end": 1705310100, "type": "light_sleep"},
                                              {"start": 1705310100, "end": 1705334400, "type": "deep_sleep"}]},
        "temperature_deviation": {"celsius": -0.2}}}]}});
    let mut out = normalised();
    Ultrahuman.map_page(METRICS, &page, &mut out);
    let s = &out.sleep[0];
    let spans: Vec<_> = s.intervals.iter().map(|i| (i.stage, i.start, i.end)).collect();
    assert_eq!(
        spans,
        [
            (Stage::Light, at("2024-01-15T09:00:00Z"), at("2024-01-15T09:15:00Z")),
            (Stage::Deep, at("2024-01-15T09:15:00Z"), at("2024-01-15T16:00:00Z")),
        ]
    );
    assert_eq!(s.external_id.as_deref(), Some("sleep-2024-01-15"));
    // Inside the night, on the day one wakes up: its middle.
    assert_eq!(values(&out, SKIN_DEVIATION), [(at("2024-01-15T12:30:00Z"), -0.2, Some(0))]);
    // The night's documented bounds and stage totals (seconds), beside the hypnogram.
    let night = s.vendor.unwrap_or_else(|| panic!("the documented night"));
    assert_eq!((night.start, night.end), (at("2024-01-15T09:00:00Z"), at("2024-01-15T16:00:00Z")));
    assert_eq!((night.totals.rem, night.totals.awake), (Some(3600), Some(1800)));

    // No hypnogram: the totals alone, no timeline made up.
    let mut totals = page.clone();
    totals["data"]["metric_data"][0]["object"]["sleep_graph"] = json!({"data": []});
    let mut out = normalised();
    Ultrahuman.map_page(METRICS, &totals, &mut out);
    assert!(out.sleep[0].intervals.is_empty());
    assert_eq!(out.sleep[0].vendor.map(|n| n.totals.rem), Some(Some(3600)));
}

#[test]
fn a_call_per_day_and_revocation_with_the_apps_credentials() {
    // A day a call: the window's days and the one after.
    let window = (at("2026-03-09T10:00:00Z"), at("2026-03-10T10:00:00Z"));
    let mut days = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let url = Ultrahuman.page_url(INFO.api_url, METRICS, window, next.as_deref());
        let url = url.map(|u| u.to_string()).unwrap_or_default();
        days.push(url.rsplit('=').next().unwrap_or_default().to_string());
        next = Ultrahuman.next_page(&json!({}), next.as_deref(), window);
        if next.is_none() {
            break;
        }
    }
    assert_eq!(days, ["2026-03-09", "2026-03-10", "2026-03-11"]);
    let ends = Endpoints {
        client_id: "uh-app".into(),
        client_secret: "uh-secret".into(),
        token_url: INFO.oauth.token_url.into(),
        ..Endpoints::default()
    };
    let c = Connected {
        ends: &ends,
        access_token: "t",
        vendor_user: None,
        user_id: UserId::default(),
        webhook_url: "",
    };
    let revoke = Ultrahuman.revoke(&c);
    assert_eq!(revoke[0].url.as_str(), "https://partner.ultrahuman.com/api/partners/oauth/revoke");
    assert!(revoke[0].form.contains(&("token".into(), "t".into())));
    assert_eq!(
        Ultrahuman
            .user_id(&json!({"user_id": "test_user_123", "email": "test@example.com"}))
            .as_deref(),
        Some("test_user_123")
    );
    assert!(!Ultrahuman.webhook_verified(&ends, &|_| None, b"{}"));
}

/// The overnight HRV (`avg_sleep_hrv`) goes inside its night, wherever it comes in the page.
#[test]
fn the_overnight_hrv_goes_inside_its_night() {
    let page = json!({"data": {"latest_time_zone": "UTC", "metric_data": [
        {"type": "avg_sleep_hrv", "object": {"value": 52.0, "day_start_timestamp": 1705276800}},
        {"type": "Sleep", "object": {"bedtime_start": 1705276800, "bedtime_end": 1705302000}}]}});
    let mut out = normalised();
    Ultrahuman.map_page(METRICS, &page, &mut out);
    // The night 00:00Z-07:00Z: its middle.
    assert_eq!(values(&out, HRV_RMSSD), [(at("2024-01-15T03:30:00Z"), 52.0, Some(0))]);
}

/// Metrics read as leniently as `.get` read them: numbers as numeric strings, a field of
/// another type as none (never the metric lost), and a metric that does not read dropped alone.
#[test]
fn metrics_read_leniently_one_by_one() {
    let page = json!({"data": {"latest_time_zone": "UTC", "metric_data": [
        {"type": "HR", "object": {"title": 5, "values": [{"value": "71", "timestamp": "1705276800"},
            {"value": true, "timestamp": 1705276900}, "junk", [70.0, 1705277000]]}},
        {"type": "recovery_index", "object": {"value": "80", "day_start_timestamp": 1705276800, "values": "none"}},
        {"type": "vo2_max", "object": {"value": [41.0], "day_start_timestamp": 1705276800}},
        {"type": "Sleep", "object": {"bedtime_start": "1705309200", "bedtime_end": 1705334400,
            "sleep_graph": [{"start": 1705309200, "end": 1705334400, "type": "deep_sleep"}],
            "sleep_stages": [{"type": "rem_sleep", "stage_time": "600"}, 3, {"type": 1, "stage_time": 5}],
            "temperature_deviation": [-0.2]}},
        {"type": 7, "object": {}},
        {"type": "steps"},
        ["steps", {"total": 5}]]}});
    let mut out = normalised();
    Ultrahuman.map_page(METRICS, &page, &mut out);
    assert_eq!(values(&out, HR), [(at("2024-01-15T00:00:00Z"), 71.0, Some(0))]);
    assert_eq!(values(&out, RECOVERY), [(at("2024-01-15T12:00:00Z"), 80.0, Some(0))]);
    assert!(values(&out, VO2_MAX).is_empty());
    let night = out.sleep[0].vendor.unwrap_or_else(|| panic!("the night"));
    assert!(out.sleep[0].intervals.is_empty(), "a hypnogram that is not an object is none");
    assert_eq!((night.totals.rem, night.totals.deep), (Some(600), None));
    assert!(values(&out, SKIN_DEVIATION).is_empty());
    assert_eq!(out.report.dropped_count(), 3, "a type not text, no object, a metric not an object");

    // A malformed envelope reads as nothing, as before.
    for page in
        [json!([]), json!({"data": 5}), json!({"data": {"metrics": [1], "metric_data": {}}})]
    {
        let mut out = normalised();
        Ultrahuman.map_page(METRICS, &page, &mut out);
        assert!(out.samples.is_empty() && out.sleep.is_empty());
        assert_eq!(out.report.dropped_count(), 0);
    }
}
