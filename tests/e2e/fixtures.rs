//! Small, hand-written SDK payloads for the read tests: every value below is chosen so that the
//! expected answers can be worked out by hand.

use serde_json::{Value, json};

use crate::util::{Auth, TestApp};

/// An Apple Watch and the iPhone it is paired with, as the iOS SDK describes them.
pub fn watch() -> Value {
    json!({"appId": "com.apple.health.W", "name": "Apple Watch", "deviceName": "Apple Watch",
           "deviceManufacturer": "Apple Inc.", "deviceModel": "Watch6,2", "deviceType": "watch"})
}

pub fn phone() -> Value {
    json!({"appId": "com.apple.health.P", "name": "iPhone", "deviceName": "iPhone",
           "deviceManufacturer": "Apple Inc.", "deviceModel": "iPhone15,2", "deviceType": "phone"})
}

/// A ring from another app, reporting through HealthKit.
pub fn ring() -> Value {
    json!({"appId": "com.ouraring.oura", "name": "Oura", "deviceName": "Oura Ring",
           "deviceManufacturer": "Oura", "deviceModel": "Gen3", "deviceType": "ring"})
}

/// One iOS quantity record (`kind` without the HealthKit prefix).
pub fn rec(
    kind: &str,
    start: &str,
    end: &str,
    value: f64,
    unit: &str,
    zone: Option<&str>,
    source: &Value,
) -> Value {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    json!({"id": format!("R-{n}"), "type": format!("HKQuantityTypeIdentifier{kind}"),
           "startDate": start, "endDate": end, "zoneOffset": zone, "source": source,
           "value": value, "unit": unit, "parentId": null, "metadata": null})
}

/// A point sample (start = end).
pub fn at(
    kind: &str,
    t: &str,
    value: f64,
    unit: &str,
    zone: Option<&str>,
    source: &Value,
) -> Value {
    rec(kind, t, t, value, unit, zone, source)
}

/// An iOS workout with a duration, energy, distance and heart-rate figures.
#[allow(clippy::too_many_arguments)]
pub fn workout(
    id: &str,
    kind: &str,
    start: &str,
    end: &str,
    kcal: f64,
    meters: f64,
    zone: &str,
    source: &Value,
) -> Value {
    json!({"id": id, "parentId": null, "type": kind, "startDate": start, "endDate": end,
           "zoneOffset": zone, "source": source, "title": null, "notes": null,
           "values": [{"type": "activeEnergyBurned", "value": kcal, "unit": "kcal"},
                      {"type": "distance", "value": meters, "unit": "m"},
                      {"type": "averageHeartRate", "value": 140, "unit": "bpm"},
                      {"type": "maxHeartRate", "value": 170, "unit": "bpm"}],
           "segments": null, "laps": null, "route": null, "samples": null, "metadata": null})
}

/// A half-hour run from 18:00 UTC on 2026-03-`day`, recorded by the watch.
pub fn evening_run(id: &str, day: u32) -> Value {
    let (start, end) =
        (format!("2026-03-{day:02}T18:00:00Z"), format!("2026-03-{day:02}T18:30:00Z"));
    workout(id, "running", &start, &end, 300.0, 5000.0, "+01:00", &watch())
}

/// Sleep stage items of one night: `(stage, start, end)`.
pub fn sleep(items: &[(&str, &str, &str)], zone: &str, source: &Value) -> Vec<Value> {
    items
        .iter()
        .map(|(stage, a, b)| {
            json!({"id": format!("S-{stage}-{a}"), "parentId": null, "stage": stage,
                   "startDate": a, "endDate": b, "zoneOffset": zone, "source": source,
                   "values": null, "metadata": null})
        })
        .collect()
}

pub fn body(records: Vec<Value>, workouts: Vec<Value>, sleep: Vec<Value>) -> String {
    json!({"provider": "apple", "sdkVersion": "0.13.0", "syncTimestamp": "2026-03-20T08:00:00Z",
           "data": {"records": records, "workouts": workouts, "sleep": sleep}})
    .to_string()
}

/// Sends records through the SDK sync and waits until they are stored.
pub async fn push(app: &TestApp, user: &str, key: &Auth, records: Vec<Value>) {
    app.sync_and_wait(user, key, &body(records, vec![], vec![])).await;
}

/// Deletes the first-listed sleep session starting on `day` (the best-ranked copy of the night)
/// and returns the device type of its source.
pub async fn delete_night(app: &TestApp, key: &Auth, user: &str, day: &str) -> String {
    let path = format!("/api/v1/users/{user}/events/sleep?start_date={day}&end_date={day}");
    let night = app.get(&path, key).await;
    let id = night.body["data"][0]["id"].as_str().unwrap_or("").to_string();
    let path = format!("/api/v1/users/{user}/events/sleep/{id}");
    let r = app.call(reqwest::Method::DELETE, &path, key, None).await;
    assert_eq!(r.status, 204, "{}", r.body);
    night.body["data"][0]["source"]["device_type"].as_str().unwrap_or("").to_string()
}
