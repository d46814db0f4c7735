//! `data.workouts` items → workout sessions, their statistics, their in-workout samples (series
//! of the workout's source) and their route.

use crate::units::{self, Origin};
use schema::catalogue::series_types::{self, SeriesType};
use schema::catalogue::workout_types;
use schema::workouts::{RoutePoint, WorkoutFigures, WorkoutRow};
use serde_json::{Map, Value, json};

use super::fields::{self, Field};
use super::sources;
use super::wire::{List, Obj, RoutePointIn, WorkoutIn};
use crate::batch::{Normalised, Sample, Workout};

/// A workout statistic's name → the series whose canonical unit it is measured in.
fn stat_series(name: &str) -> Option<&'static str> {
    Some(match name {
        "activeEnergyBurned" | "basalEnergyBurned" | "calories" | "totalCalories"
        | "totalEnergyBurned" => "energy",
        "distance" | "totalDistance" | "elevationAscended" | "elevationDescended"
        | "altitudeGain" | "altitudeLoss" | "maxAltitude" | "minAltitude" | "lapLength" => {
            "distance_walking_running"
        }
        "minHeartRate" | "averageHeartRate" | "meanHeartRate" | "maxHeartRate" => "heart_rate",
        "averageSpeed" | "meanSpeed" | "averageRunningSpeed" | "maxSpeed" => "speed",
        "averageRunningPower" | "averagePower" | "maxPower" => "power",
        "meanCadence" | "maxCadence" | "averageCadence" => "cadence",
        "averageRunningStrideLength" => "running_stride_length",
        "averageVerticalOscillation" => "running_vertical_oscillation",
        "averageGroundContactTime" => "running_ground_contact_time",
        "averageMETs" => "average_met",
        "vo2Max" => "vo2_max",
        "weatherTemperature" => "weather_temperature",
        "weatherHumidity" => "weather_humidity",
        "stepCount" | "totalSteps" | "swimmingStrokeCount" => "steps",
        _ => return None,
    })
}

/// In-workout sample types → series.
fn sample_series(kind: &str) -> Option<&'static SeriesType> {
    series_types::by_slug(match kind {
        "heartRate" | "heart_rate" => "heart_rate",
        "cadence" => "cadence",
        "speed" => "speed",
        "power" => "power",
        _ => return None,
    })
}

pub(super) fn workout(item: &Obj<WorkoutIn<'_>>, origin: Origin, out: &mut Normalised) {
    let Some(w) = fields::object(item, &fields::WORKOUT, &mut out.report) else { return };
    let Some((start, end)) =
        fields::span(&w.start_date, &w.end_date, &fields::WORKOUT, &mut out.report)
    else {
        return;
    };
    let zone_offset = fields::offset(&w.zone_offset, &fields::WORKOUT, &mut out.report);
    out.note_offset(end, zone_offset);
    let source = sources::intern(&mut out.sources, out.provider, &w.source);

    let mut stats: Map<String, Value> = Map::new();
    let mut duration = None;
    for v in w.values.items() {
        let Some(v) = v.value() else {
            out.report.warn("workout.invalid_statistic", None);
            continue;
        };
        let (Some(name), Some(value)) = (v.kind.str(), v.value.number()) else {
            out.report.warn("workout.invalid_statistic", v.kind.example());
            continue;
        };
        let unit = v.unit.str();
        if matches!(name, "duration" | "totalDuration") {
            match units::duration_seconds(value, unit) {
                Some(s) => duration = Some(s),
                None => out.report.warn(
                    "workout.unknown_unit",
                    Some(format!("{name} in '{}'", unit.unwrap_or(""))),
                ),
            }
            continue;
        }
        let Some(series) = stat_series(name).and_then(series_types::by_slug) else {
            // Kept as sent: enums and flags (`swimmingLocationType`, `indoorWorkout`, …).
            stats.insert(name.to_string(), json!({ "value": value, "unit": unit }));
            continue;
        };
        let unit = if series.unit == "count" { None } else { unit };
        match units::to_canonical(series, unit, value, origin) {
            Ok(v) => {
                stats.insert(name.to_string(), schema::workouts::statistic(v, series.unit));
            }
            Err(_) => out
                .report
                .warn("workout.unknown_unit", Some(format!("{name} in '{}'", unit.unwrap_or("")))),
        }
    }
    let stat = |name: &str| schema::workouts::statistic_value(&stats, name);
    let first = |names: &[&str]| names.iter().find_map(|n| stat(n));

    // Active energy where the client reports it; otherwise total minus basal, or total.
    let active = first(&["activeEnergyBurned", "calories"]);
    let total = first(&["totalCalories", "totalEnergyBurned"]);
    let calories = active.or_else(|| match (total, stat("basalEnergyBurned")) {
        (Some(t), Some(b)) if t >= b => Some(t - b),
        (t, _) => t,
    });

    let duration_seconds =
        duration.unwrap_or_else(|| (end - start).num_milliseconds() as f64 / 1000.0);
    // In-workout samples become series of the workout's source.
    for s in w.samples.items() {
        let Some(s) = s.value() else {
            out.report.warn("workout.invalid_sample", None);
            continue;
        };
        let series = s.kind.str().and_then(sample_series);
        let ts = match fields::timestamp(&s.timestamp) {
            Field::Ok(t) => Some(t),
            _ => None,
        };
        let (Some(series), Some(ts), Some(value)) = (series, ts, s.value.number()) else {
            out.report.warn("workout.invalid_sample", s.kind.example());
            continue;
        };
        match units::to_canonical(series, s.unit.str(), value, origin) {
            Ok(value) => out.samples.push(Sample::new(source, series, ts, value, zone_offset)),
            Err(_) => out.report.warn("workout.invalid_sample", s.kind.example()),
        }
    }
    // VO2 max measured in a workout is a reading of its own.
    if let (Some(v), Some(series)) = (stat("vo2Max"), series_types::by_slug("vo2_max")) {
        out.samples.push(Sample::new(source, series, end, v, zone_offset));
    }

    let row = WorkoutRow {
        data_source_id: uuid::Uuid::nil(),
        external_id: w.id.str().map(str::to_string),
        figures: WorkoutFigures {
            kind: workout_types::unified(w.kind.str()).map(str::to_string),
            start_time: start,
            end_time: end,
            zone_offset,
            duration_seconds: duration_seconds.round().clamp(0.0, f64::from(i32::MAX)) as i32,
            calories_kcal: calories,
            distance_meters: first(&["distance", "totalDistance"]),
            steps: first(&["stepCount", "totalSteps"]).map(|s| s.round() as i32),
            avg_heart_rate_bpm: first(&["averageHeartRate", "meanHeartRate"]),
            max_heart_rate_bpm: stat("maxHeartRate"),
            min_heart_rate_bpm: stat("minHeartRate"),
            avg_speed_m_per_s: first(&["averageSpeed", "meanSpeed", "averageRunningSpeed"]),
            max_speed_m_per_s: stat("maxSpeed"),
            elevation_gain_meters: first(&["elevationAscended", "altitudeGain"]),
            notes: w.notes.str().map(str::to_string),
        },
        max_altitude_meters: stat("maxAltitude"),
        min_altitude_meters: stat("minAltitude"),
        statistics: Value::Object(stats),
        route: route(&w.route),
    };
    out.workouts.push(Workout { source, row });
}

/// Route points with a readable position, in the shape every route is kept in
/// ([`schema::workouts::RoutePoint`]); `None` when there are none.
fn route(points: &List<Obj<RoutePointIn<'_>>>) -> Option<Value> {
    let points: Vec<RoutePoint> = points
        .items()
        .iter()
        .filter_map(|p| {
            let p = p.value()?;
            RoutePoint::new(
                p.timestamp.str().map(str::to_string),
                p.latitude.number()?,
                p.longitude.number()?,
                p.altitude_m.number(),
                p.horizontal_accuracy_m.number(),
            )
        })
        .collect();
    schema::workouts::route(&points)
}
