//! A generator of realistic SDK sync payloads, in each real client's wire format (see
//! sdk-clients.md): heart rate every few minutes, steps and active energy in intervals, SpO2 and
//! weight now and then, a night of sleep stages and a run with statistics, samples and a route.
//! Deterministic for a seed; used by the tests, the benchmarks and the load script.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Ios,
    HealthConnect,
    Samsung,
}

#[derive(Debug, Clone)]
pub struct Spec {
    pub platform: Platform,
    /// How many `records` items.
    pub records: usize,
    /// Include a night of sleep stages.
    pub sleep: bool,
    /// Include a workout with values, samples and a route.
    pub workout: bool,
    /// The first record's time; records follow each other a minute apart per type.
    pub start: DateTime<Utc>,
    pub seed: u64,
}

impl Spec {
    pub fn new(platform: Platform, records: usize) -> Spec {
        Spec {
            platform,
            records,
            sleep: true,
            workout: true,
            start: DateTime::from_timestamp(1_773_446_400, 0).unwrap_or_default(), // 2026-03-14
            seed: 7,
        }
    }
}

/// xorshift64*: enough randomness for test data, no dependency.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    pub(crate) fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
}

fn ts(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn source(p: Platform) -> Value {
    match p {
        Platform::Ios => {
            json!({"appId": "com.apple.health.81D2C3", "name": "Apple Watch", "deviceId": null,
            "deviceName": "Apple Watch", "deviceManufacturer": "Apple Inc.", "deviceModel": "Watch6,2",
            "deviceType": "watch", "recordingMethod": null, "deviceSoftwareVersion": "10.3",
            "operatingSystemVersion": {"majorVersion": 10, "minorVersion": 3, "patchVersion": 0}})
        }
        Platform::HealthConnect => {
            json!({"appId": "com.google.android.apps.fitness", "deviceId": null,
            "deviceName": null, "deviceManufacturer": "Google", "deviceModel": "Pixel Watch 2",
            "deviceType": "watch", "recordingMethod": "automatic"})
        }
        Platform::Samsung => json!({"appId": null, "deviceId": "d-1", "deviceName": "b0q",
            "deviceManufacturer": "samsung", "deviceModel": "SM-R930", "deviceType": "watch",
            "recordingMethod": null}),
    }
}

/// `(iOS identifier, Android name, unit iOS, unit Android, low, high, share in ‰)`.
const MIX: &[(&str, &str, &str, &str, f64, f64, u32)] = &[
    ("HKQuantityTypeIdentifierHeartRate", "HEART_RATE", "bpm", "bpm", 52.0, 160.0, 500),
    ("HKQuantityTypeIdentifierStepCount", "STEP_COUNT", "count", "count", 0.0, 900.0, 200),
    (
        "HKQuantityTypeIdentifierActiveEnergyBurned",
        "ACTIVE_CALORIES_BURNED",
        "Cal",
        "kcal",
        0.5,
        40.0,
        200,
    ),
    ("HKQuantityTypeIdentifierOxygenSaturation", "OXYGEN_SATURATION", "%", "%", 93.0, 100.0, 50),
    (
        "HKQuantityTypeIdentifierRespiratoryRate",
        "RESPIRATORY_RATE",
        "count/min",
        "breaths/min",
        11.0,
        19.0,
        30,
    ),
    ("HKQuantityTypeIdentifierBodyMass", "WEIGHT", "kg", "kg", 80.0, 82.0, 20),
];

fn record(p: Platform, i: usize, t: DateTime<Utc>, rng: &mut Rng, src: &Value) -> Value {
    let pick = (rng.next() * 1000.0) as u32;
    let mut acc = 0;
    let entry = MIX.iter().find(|m| {
        acc += m.6;
        pick < acc
    });
    let (ios, android, ios_unit, android_unit, lo, hi, _) = *entry.unwrap_or(&MIX[0]);
    let mut value = (rng.range(lo, hi) * 10.0).round() / 10.0;
    let (kind, unit, zone) = match p {
        Platform::Ios => (
            ios.to_string(),
            ios_unit,
            if i.is_multiple_of(3) { json!("+01:00") } else { Value::Null },
        ),
        Platform::HealthConnect => (android.to_string(), android_unit, json!("+01:00")),
        Platform::Samsung => (android.to_string(), android_unit, Value::Null),
    };
    if p == Platform::Samsung && unit == "%" {
        value = f64::from(value as f32); // Samsung widens float32
    }
    let end = if unit == "count" || unit == "Cal" || unit == "kcal" {
        t + Duration::minutes(1)
    } else {
        t
    };
    json!({"id": format!("{:08X}-{i}", i * 7919), "type": kind, "startDate": ts(t), "endDate": ts(end),
        "zoneOffset": zone, "source": src, "value": value, "unit": unit, "parentId": null, "metadata": null})
}

fn sleep(p: Platform, night: DateTime<Utc>, src: &Value) -> Vec<Value> {
    let stages = [
        ("light", 0, 95),
        ("deep", 95, 160),
        ("rem", 160, 215),
        ("awake", 215, 222),
        ("light", 222, 330),
        ("rem", 330, 400),
        ("light", 400, 450),
    ];
    let mut out: Vec<Value> = stages
        .iter()
        .enumerate()
        .map(|(i, (stage, a, b))| {
            let (id, parent) = match p {
                Platform::Ios => (format!("SLEEP-{i}"), Value::Null),
                _ => {
                    let night_id = format!("night-{}", night.format("%Y%m%d"));
                    (format!("{night_id}-s{i}"), json!(night_id))
                }
            };
            json!({"id": id, "parentId": parent, "stage": stage,
                "startDate": ts(night + Duration::minutes(*a)), "endDate": ts(night + Duration::minutes(*b)),
                "zoneOffset": "+01:00", "source": src, "values": null, "metadata": null})
        })
        .collect();
    if p == Platform::Ios {
        // The iPhone's in-bed interval overlaps the watch's stages.
        out.push(json!({"id": "INBED-0", "parentId": null, "stage": "in_bed",
            "startDate": ts(night - Duration::minutes(20)), "endDate": ts(night + Duration::minutes(460)),
            "zoneOffset": "+01:00", "values": null, "metadata": null,
            "source": {"appId": "com.apple.health.P", "name": "iPhone", "deviceModel": "iPhone15,2", "deviceType": "phone"}}));
    }
    out
}

fn workout(p: Platform, start: DateTime<Utc>, src: &Value) -> Value {
    let end = start + Duration::seconds(2185);
    let (kind, duration) = match p {
        Platform::Ios => ("running", json!({"type": "duration", "value": 2185.0, "unit": "s"})),
        Platform::HealthConnect => {
            ("RUNNING", json!({"type": "duration", "value": 2185.0, "unit": "s"}))
        }
        Platform::Samsung => {
            ("RUNNING", json!({"type": "duration", "value": 2_185_000.0, "unit": "ms"}))
        }
    };
    let energy = match p {
        Platform::Ios => json!({"type": "activeEnergyBurned", "value": 412.5, "unit": "kcal"}),
        _ => json!({"type": "calories", "value": 412.5, "unit": "kcal"}),
    };
    let samples: Vec<Value> = (0..36)
        .map(|m| json!({"timestamp": ts(start + Duration::minutes(m)), "type": "heartRate", "value": 120 + m, "unit": "bpm"}))
        .collect();
    let route: Vec<Value> = (0..36)
        .map(|m| json!({"timestamp": ts(start + Duration::minutes(m)), "latitude": 52.23 + m as f64 * 1e-4,
            "longitude": 21.01, "altitudeM": 110.0, "horizontalAccuracyM": 4.0, "verticalAccuracyM": null}))
        .collect();
    json!({"id": "WORKOUT-1", "parentId": null, "type": kind, "startDate": ts(start), "endDate": ts(end),
        "zoneOffset": "+01:00", "source": src, "title": null, "notes": null,
        "values": [duration, energy,
            {"type": "distance", "value": 6446.16, "unit": "m"},
            {"type": "averageHeartRate", "value": 151, "unit": "bpm"},
            {"type": "maxHeartRate", "value": 178, "unit": "bpm"},
            {"type": "elevationAscended", "value": 41.2, "unit": "m"}],
        "segments": null, "laps": null, "route": route, "samples": samples, "metadata": null})
}

/// A sync payload per `spec`.
pub fn payload(spec: &Spec) -> Value {
    let mut rng = Rng(spec.seed.max(1));
    let src = source(spec.platform);
    let records: Vec<Value> = (0..spec.records)
        .map(|i| {
            let t = spec.start + Duration::seconds(i as i64 * 61);
            record(spec.platform, i, t, &mut rng, &src)
        })
        .collect();
    let sleep = if spec.sleep {
        sleep(spec.platform, spec.start - Duration::hours(2), &src)
    } else {
        Vec::new()
    };
    let workouts = if spec.workout {
        vec![workout(spec.platform, spec.start + Duration::hours(9), &src)]
    } else {
        Vec::new()
    };
    let provider = match spec.platform {
        Platform::Ios => "apple",
        Platform::HealthConnect => "google",
        Platform::Samsung => "samsung",
    };
    json!({"provider": provider, "sdkVersion": "0.13.0", "syncTimestamp": ts(spec.start + Duration::days(1)),
        "data": {"records": records, "workouts": workouts, "sleep": sleep}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_normalise_without_drops() {
        for p in [Platform::Ios, Platform::HealthConnect, Platform::Samsung] {
            let body = payload(&Spec::new(p, 500)).to_string().into_bytes();
            let n = crate::sdk::normalise(&body).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(n.report.dropped_count(), 0, "{p:?}: {:?}", n.report.dropped);
            assert_eq!(n.samples.len(), 500 + 36, "{p:?}");
            assert_eq!(n.workouts.len(), 1);
            assert!(!n.sleep.is_empty());
        }
    }
}
