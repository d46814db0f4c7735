//! Export `Workout` elements (with their `WorkoutStatistics`, `WorkoutEvent`, `MetadataEntry`
//! and route file references) and `ActivitySummary` elements.

use crate::units::{self, Origin};
use chrono::{Duration, NaiveDate, TimeZone, Utc};
use schema::catalogue::series_types::{self, SeriesType};
use schema::catalogue::workout_types;
use schema::data_sources::NewDataSource;
use schema::workouts::{WorkoutFigures, WorkoutRow};
use serde_json::{Map, Value, json};

use super::attrs::{self, Attrs};
use super::reader::RawWorkout;
use super::records::Partial;
use crate::batch::{Sample, Workout};
use crate::time::parse_export_timestamp;

fn attr_map(tag: &[u8]) -> Vec<(&[u8], &[u8])> {
    Attrs::of_tag(tag).collect()
}

fn get<'a>(attrs: &[(&[u8], &'a [u8])], key: &[u8]) -> Option<&'a [u8]> {
    attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

fn text(attrs: &[(&[u8], &[u8])], key: &[u8]) -> Option<String> {
    get(attrs, key).and_then(attrs::text).map(|t| t.into_owned())
}

/// Converts `value` in `unit` into the canonical unit of series `slug`.
fn convert(slug: &str, value: f64, unit: Option<&str>) -> Option<f64> {
    let series: &SeriesType = series_types::by_slug(slug)?;
    let unit = if series.unit == "count" { None } else { unit };
    units::to_canonical(series, unit, value, Origin::AppleExport).ok()
}

/// Records a statistic converted into its series' unit, as the SDK path records it.
fn put(
    stats: &mut Map<String, Value>,
    name: &str,
    slug: &str,
    value: Option<f64>,
    unit: Option<&str>,
) {
    let Some(series) = series_types::by_slug(slug) else { return };
    if let Some(v) = value.and_then(|v| convert(slug, v, unit)) {
        stats.insert(name.to_string(), schema::workouts::statistic(v, series.unit));
    }
}

/// `4123 cm`, `68 degF`, `7.2 kcal/hr·kg`: metadata values carry their unit.
fn quantity(s: &str) -> Option<(f64, Option<&str>)> {
    let mut parts = s.trim().splitn(2, ' ');
    let v = parts.next()?.parse::<f64>().ok()?;
    Some((v, parts.next()))
}

pub(super) fn workout(raw: &RawWorkout, p: &mut Partial) {
    let a = attr_map(&raw.tag);
    let start = get(&a, b"startDate").and_then(parse_export_timestamp);
    let end = get(&a, b"endDate").and_then(parse_export_timestamp);
    let (Some((start, offset)), Some((end, _))) = (start, end) else {
        return p.n.report.drop("workout.invalid_date", text(&a, b"startDate"));
    };
    if end < start {
        return p.n.report.drop("workout.end_before_start", text(&a, b"startDate"));
    }
    let source = p.source(get(&a, b"sourceName"), get(&a, b"device"));

    let mut stats = Map::new();
    // Older exports put totals on the workout itself.
    let unit_of = |key: &[u8]| text(&a, key);
    put(
        &mut stats,
        "distance",
        "distance_walking_running",
        get(&a, b"totalDistance").and_then(attrs::number),
        unit_of(b"totalDistanceUnit").as_deref(),
    );
    put(
        &mut stats,
        "activeEnergyBurned",
        "energy",
        get(&a, b"totalEnergyBurned").and_then(attrs::number),
        unit_of(b"totalEnergyBurnedUnit").as_deref(),
    );

    for st in &raw.statistics {
        let s = attr_map(st);
        let Some(kind) = text(&s, b"type") else { continue };
        let unit = text(&s, b"unit");
        let num = |k: &[u8]| get(&s, k).and_then(attrs::number);
        let short = kind.trim_start_matches("HKQuantityTypeIdentifier");
        match short {
            "ActiveEnergyBurned" => {
                put(&mut stats, "activeEnergyBurned", "energy", num(b"sum"), unit.as_deref())
            }
            "BasalEnergyBurned" => {
                put(&mut stats, "basalEnergyBurned", "energy", num(b"sum"), unit.as_deref())
            }
            "HeartRate" => {
                put(&mut stats, "averageHeartRate", "heart_rate", num(b"average"), unit.as_deref());
                put(&mut stats, "minHeartRate", "heart_rate", num(b"minimum"), unit.as_deref());
                put(&mut stats, "maxHeartRate", "heart_rate", num(b"maximum"), unit.as_deref());
            }
            "StepCount" => put(&mut stats, "stepCount", "steps", num(b"sum"), None),
            "RunningSpeed" | "CyclingSpeed" => {
                put(&mut stats, "averageSpeed", "speed", num(b"average"), unit.as_deref());
                put(&mut stats, "maxSpeed", "speed", num(b"maximum"), unit.as_deref());
            }
            "RunningPower" | "CyclingPower" => {
                put(&mut stats, "averagePower", "power", num(b"average"), unit.as_deref())
            }
            "SwimmingStrokeCount" => {
                put(&mut stats, "swimmingStrokeCount", "steps", num(b"sum"), None)
            }
            s if s.starts_with("Distance") => put(
                &mut stats,
                "distance",
                "distance_walking_running",
                num(b"sum"),
                unit.as_deref(),
            ),
            other => {
                // Kept as exported, for completeness.
                let entry = json!({"sum": num(b"sum"), "average": num(b"average"), "minimum": num(b"minimum"),
                                   "maximum": num(b"maximum"), "unit": unit});
                stats.insert(other.to_string(), entry);
            }
        }
    }
    let mut metadata = Map::new();
    let mut elevation = None;
    for m in &raw.metadata {
        let m = attr_map(m);
        let (Some(key), Some(value)) = (text(&m, b"key"), text(&m, b"value")) else { continue };
        if key == "HKElevationAscended" {
            elevation =
                quantity(&value).and_then(|(v, u)| convert("distance_walking_running", v, u));
        }
        metadata.insert(key, json!(value));
    }
    if !metadata.is_empty() {
        stats.insert("metadata".into(), Value::Object(metadata));
    }
    if !raw.events.is_empty() {
        let mut counts: Map<String, Value> = Map::new();
        for e in &raw.events {
            let e = attr_map(e);
            let kind = text(&e, b"type")
                .unwrap_or_default()
                .trim_start_matches("HKWorkoutEventType")
                .to_string();
            let n = counts.get(&kind).and_then(Value::as_u64).unwrap_or(0);
            counts.insert(kind, json!(n + 1));
        }
        stats.insert("events".into(), Value::Object(counts));
    }
    if !raw.route_files.is_empty() {
        stats.insert("route_files".into(), json!(raw.route_files));
    }
    let stat = |k: &str| schema::workouts::statistic_value(&stats, k);
    let duration = get(&a, b"duration")
        .and_then(attrs::number)
        .and_then(|d| units::duration_seconds(d, text(&a, b"durationUnit").as_deref()))
        .unwrap_or_else(|| (end - start).num_milliseconds() as f64 / 1000.0);
    let row = WorkoutRow {
        data_source_id: uuid::Uuid::nil(),
        external_id: None,
        figures: WorkoutFigures {
            kind: workout_types::unified(text(&a, b"workoutActivityType").as_deref())
                .map(str::to_string),
            start_time: start,
            end_time: end,
            zone_offset: offset,
            duration_seconds: duration.round().clamp(0.0, f64::from(i32::MAX)) as i32,
            calories_kcal: stat("activeEnergyBurned"),
            distance_meters: stat("distance"),
            steps: stat("stepCount").map(|s| s.round() as i32),
            avg_heart_rate_bpm: stat("averageHeartRate"),
            max_heart_rate_bpm: stat("maxHeartRate"),
            min_heart_rate_bpm: stat("minHeartRate"),
            avg_speed_m_per_s: stat("averageSpeed"),
            max_speed_m_per_s: stat("maxSpeed"),
            elevation_gain_meters: elevation,
            notes: None,
        },
        max_altitude_meters: None,
        min_altitude_meters: None,
        statistics: Value::Object(stats),
        // The points come from the archive's `workout-routes/` (by `route_files`), at the end
        // of the import: they may come before or after this workout.
        route: None,
    };
    p.n.note_offset(end, offset);
    p.n.workouts.push(Workout { source, row });
}

/// `ActivitySummary` → the day's totals (`is_daily_total`): active energy, exercise and move
/// minutes. The summary has a date but no time zone: it is placed at local midnight, with the
/// offset of the export's latest dated item.
pub(super) fn activity_summary(tag: &[u8], p: &mut Partial) {
    let a = attr_map(tag);
    let Some(date) =
        text(&a, b"dateComponents").and_then(|d| NaiveDate::parse_from_str(&d, "%Y-%m-%d").ok())
    else {
        return p.n.report.drop("activity_summary.invalid_date", text(&a, b"dateComponents"));
    };
    let offset = p.n.latest_offset.offset();
    let midnight = date.and_hms_opt(0, 0, 0).map(|t| Utc.from_utc_datetime(&t));
    let Some(ts) = midnight.map(|m| m - Duration::minutes(i64::from(offset.unwrap_or(0)))) else {
        return;
    };
    let source = p.n.sources.intern(None, Some("Activity Summary"), || NewDataSource {
        provider: "phonehealth".into(),
        source: Some("Activity Summary".into()),
        original_source_name: Some("Activity Summary".into()),
        ..Default::default()
    });
    let totals: [(&[u8], &[u8], &str); 3] = [
        (b"activeEnergyBurned", b"activeEnergyBurnedUnit", "energy"),
        (b"appleExerciseTime", b"", "exercise_time"),
        (b"appleMoveTime", b"", "move_time"),
    ];
    for (key, unit_key, slug) in totals {
        let Some(v) = get(&a, key).and_then(attrs::number) else { continue };
        let unit = if unit_key.is_empty() { Some("min".to_string()) } else { text(&a, unit_key) };
        let (Some(series), Some(v)) =
            (series_types::by_slug(slug), convert(slug, v, unit.as_deref()))
        else {
            continue;
        };
        p.n.samples.push(Sample {
            source,
            series_type_id: series.id,
            ts,
            value: v,
            zone_offset: offset,
            is_daily_total: Some(true),
        });
    }
}
