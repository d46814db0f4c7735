//! The `data` objects of session events, as the contract shapes them. Written to the outbox in
//! the ingest transaction; the webhook sender adds the envelope.

use schema::data_sources::NewDataSource;
use schema::ids::UserId;
use schema::sleep_sessions::SleepRow;
use schema::workouts::WorkoutRow;
use schema::zone;
use serde_json::{Value, json};
use uuid::Uuid;

/// `{provider, device}`: the device model, else the source's name.
pub(crate) fn source(s: &NewDataSource) -> Value {
    json!({ "provider": s.provider, "device": s.device_model.as_deref().or(s.source.as_deref()) })
}

fn offset(z: Option<i16>) -> Option<String> {
    z.map(zone::format)
}

pub(crate) fn workout_created(
    id: Uuid,
    user_id: UserId,
    w: &WorkoutRow,
    src: &NewDataSource,
) -> Value {
    let f = &w.figures;
    let pace = f.avg_speed_m_per_s.filter(|s| *s > 0.0).map(|s| (1000.0 / s).round() as i64);
    json!({
        "id": id,
        "user_id": user_id,
        "type": f.kind.as_deref().unwrap_or("unknown"),
        "start_time": zone::local_time(f.start_time, f.zone_offset),
        "end_time": zone::local_time(f.end_time, f.zone_offset),
        "zone_offset": offset(f.zone_offset),
        "duration_seconds": f.duration_seconds,
        "source": source(src),
        "calories_kcal": f.calories_kcal,
        "distance_meters": f.distance_meters,
        "avg_heart_rate_bpm": f.avg_heart_rate_bpm,
        "max_heart_rate_bpm": f.max_heart_rate_bpm,
        "avg_pace_sec_per_km": pace,
        "elevation_gain_meters": f.elevation_gain_meters,
    })
}

pub(crate) fn sleep_created(id: Uuid, user_id: UserId, s: &SleepRow, src: &NewDataSource) -> Value {
    json!({
        "id": id,
        "user_id": user_id,
        "start_time": zone::local_time(s.start_time, s.zone_offset),
        "end_time": zone::local_time(s.end_time, s.zone_offset),
        "zone_offset": offset(s.zone_offset),
        "duration_seconds": s.duration_seconds,
        "source": source(src),
        "efficiency_percent": s.efficiency_percent,
        "stages": {
            "deep_minutes": s.deep_minutes,
            "rem_minutes": s.rem_minutes,
            "light_minutes": s.light_minutes,
            "awake_minutes": s.awake_minutes,
        },
        "is_nap": s.is_nap,
    })
}

pub(crate) fn menstrual_cycle_created(
    id: Uuid,
    user_id: UserId,
    c: &schema::menstrual_cycles::CycleRow,
    src: &NewDataSource,
) -> Value {
    json!({
        "id": id,
        "user_id": user_id,
        "start_time": zone::local_time(c.start_time, c.zone_offset),
        "end_time": c.end_time.map(|e| zone::local_time(e, c.zone_offset)),
        "zone_offset": offset(c.zone_offset),
        "source": source(src),
        "current_phase_type": null,
        "day_in_cycle": null,
        "cycle_length": c.cycle_length,
        "is_predicted_cycle": false,
        "pregnancy_snapshot": null,
    })
}
