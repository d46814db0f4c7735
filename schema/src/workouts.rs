//! Workout sessions.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use postgres_types::ToSql;
use serde_json::{Map, Value, json};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::Result;
use crate::ids::UserId;

/// A workout statistic as `statistics` keeps it, whichever client sent it:
/// `{"value": …, "unit": …}`, in its series' canonical unit.
pub fn statistic(value: f64, unit: &str) -> Value {
    json!({ "value": value, "unit": unit })
}

/// The value of a statistic kept by [`statistic`].
pub fn statistic_value(statistics: &Map<String, Value>, name: &str) -> Option<f64> {
    statistics.get(name).and_then(|s| s["value"].as_f64())
}

/// What a workout is, as stored and as read: its kind, span and figures, in canonical units.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkoutFigures {
    /// The unified workout type; `None` when the client sent none.
    pub kind: Option<String>,
    pub start_time: DateTime<Utc>,
    pub end_time: DateTime<Utc>,
    pub zone_offset: Option<i16>,
    pub duration_seconds: i32,
    pub calories_kcal: Option<f64>,
    pub distance_meters: Option<f64>,
    pub steps: Option<i32>,
    pub avg_heart_rate_bpm: Option<f64>,
    pub max_heart_rate_bpm: Option<f64>,
    pub min_heart_rate_bpm: Option<f64>,
    pub avg_speed_m_per_s: Option<f64>,
    pub max_speed_m_per_s: Option<f64>,
    pub elevation_gain_meters: Option<f64>,
    pub notes: Option<String>,
}

impl WorkoutFigures {
    /// The figures of a row of `workouts` (or of a sealed month, which keeps its columns).
    pub(crate) fn from_row(r: &Row) -> Result<WorkoutFigures> {
        Ok(WorkoutFigures {
            kind: r.try_get("type")?,
            start_time: r.try_get("start_time")?,
            end_time: r.try_get("end_time")?,
            zone_offset: r.try_get("zone_offset")?,
            duration_seconds: r.try_get("duration_seconds")?,
            calories_kcal: r.try_get("calories_kcal")?,
            distance_meters: r.try_get("distance_meters")?,
            steps: r.try_get("steps")?,
            avg_heart_rate_bpm: r.try_get("avg_heart_rate_bpm")?,
            max_heart_rate_bpm: r.try_get("max_heart_rate_bpm")?,
            min_heart_rate_bpm: r.try_get("min_heart_rate_bpm")?,
            avg_speed_m_per_s: r.try_get("avg_speed_m_per_s")?,
            max_speed_m_per_s: r.try_get("max_speed_m_per_s")?,
            elevation_gain_meters: r.try_get("elevation_gain_meters")?,
            notes: r.try_get("notes")?,
        })
    }
}

/// A workout to store: its figures, where it came from, and what only storing keeps.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkoutRow {
    pub data_source_id: Uuid,
    pub external_id: Option<String>,
    pub figures: WorkoutFigures,
    pub max_altitude_meters: Option<f64>,
    pub min_altitude_meters: Option<f64>,
    /// Every statistic as sent, converted, by name.
    pub statistics: Value,
    pub route: Option<Value>,
}

/// A workout's figures, in the order the statements below name their columns (`type` to
/// `route`).
fn figures(w: &WorkoutRow) -> [&(dyn ToSql + Sync); 19] {
    let f = &w.figures;
    [
        &f.kind,
        &f.start_time,
        &f.end_time,
        &f.zone_offset,
        &f.duration_seconds,
        &f.calories_kcal,
        &f.distance_meters,
        &f.steps,
        &f.avg_heart_rate_bpm,
        &f.max_heart_rate_bpm,
        &f.min_heart_rate_bpm,
        &f.avg_speed_m_per_s,
        &f.max_speed_m_per_s,
        &f.elevation_gain_meters,
        &w.max_altitude_meters,
        &w.min_altitude_meters,
        &f.notes,
        &w.statistics,
        &w.route,
    ]
}

/// Brings a stored workout with the same source and external id up to date with `w`, when any
/// of its figures differ (a vendor re-sends a workout it has scored or corrected since); returns
/// whether one changed. A change that would make it the twin of another stored workout (same
/// source, start and end) is not made.
pub async fn update_known(
    client: &impl GenericClient,
    batch_id: Uuid,
    w: &WorkoutRow,
) -> Result<bool> {
    if w.external_id.is_none() {
        return Ok(false);
    }
    let n = client
        .execute(
            &client
                .prepare_cached(
                    "update workouts o set (type, start_time, end_time, zone_offset, duration_seconds,
                         calories_kcal, distance_meters, steps, avg_heart_rate_bpm, max_heart_rate_bpm,
                         min_heart_rate_bpm, avg_speed_m_per_s, max_speed_m_per_s,
                         elevation_gain_meters, max_altitude_meters, min_altitude_meters, notes,
                         statistics, route, batch_id)
                       = ($3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
                          $19, $20, $21, $22)
                     where o.data_source_id = $1 and o.external_id = $2
                       and (o.type, o.start_time, o.end_time, o.zone_offset, o.duration_seconds,
                            o.calories_kcal, o.distance_meters, o.steps, o.avg_heart_rate_bpm,
                            o.max_heart_rate_bpm, o.min_heart_rate_bpm, o.avg_speed_m_per_s,
                            o.max_speed_m_per_s, o.elevation_gain_meters, o.max_altitude_meters,
                            o.min_altitude_meters, o.notes, o.statistics, o.route)
                           is distinct from ($3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
                                             $15, $16, $17, $18, $19, $20::jsonb, $21::jsonb)
                       and not exists (select 1 from workouts t
                                       where t.data_source_id = $1 and t.start_time = $4
                                         and t.end_time = $5 and t.id <> o.id)",
                )
                .await?,
            &[&[&w.data_source_id as &(dyn ToSql + Sync), &w.external_id][..], &figures(w), &[&batch_id]]
                .concat(),
        )
        .await?;
    Ok(n > 0)
}

/// Inserts a workout unless the same one is stored (same source and external id, or same source,
/// start and end). Returns the new id, or `None` for a duplicate.
pub async fn insert_new(
    client: &impl GenericClient,
    user_id: UserId,
    batch_id: Uuid,
    w: &WorkoutRow,
) -> Result<Option<Uuid>> {
    let row = client.query_opt(&client.prepare_cached("insert into workouts (id, user_id, data_source_id, external_id, type, start_time,
                 end_time, zone_offset, duration_seconds, calories_kcal, distance_meters, steps,
                 avg_heart_rate_bpm, max_heart_rate_bpm, min_heart_rate_bpm, avg_speed_m_per_s,
                 max_speed_m_per_s, elevation_gain_meters, max_altitude_meters,
                 min_altitude_meters, notes, statistics, route, batch_id)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                     $18, $19, $20, $21, $22, $23, $24)
             on conflict do nothing
             returning id").await?,
            &[
                &[&Uuid::now_v7() as &(dyn ToSql + Sync), &user_id, &w.data_source_id, &w.external_id][..],
                &figures(w),
                &[&batch_id],
            ]
            .concat(),
        )
        .await?;
    row.map(|r| r.try_get(0)).transpose().map_err(Into::into)
}

/// Deletes the workouts `batches` stored for a user (before a reprocess writes them again),
/// sealed ones included: the user's sealed sessions are rows again first (the sealer seals them
/// again). The caller holds the user's exclusive writer lock (`samples::delete_batches` takes
/// it).
pub(crate) async fn delete_batches(
    tx: &deadpool_postgres::Transaction<'_>,
    user_id: UserId,
    batches: &[Uuid],
) -> Result<u64> {
    if batches.is_empty() {
        return Ok(0);
    }
    crate::session_blocks::unseal_user(tx, user_id).await?;
    Ok(tx
        .execute(
            "delete from workouts where user_id = $1 and batch_id = any($2)",
            &[&user_id, &batches],
        )
        .await?)
}

/// A point of a workout's route, as `route` keeps it whichever way it came (an SDK's
/// `route`, an export's GPX file): `[{timestamp, latitude, longitude, altitude_m,
/// horizontal_accuracy_m}]`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RoutePoint {
    pub timestamp: Option<String>,
    pub latitude: f64,
    pub longitude: f64,
    pub altitude_m: Option<f64>,
    pub horizontal_accuracy_m: Option<f64>,
}

impl RoutePoint {
    /// A point with a readable position; `None` when latitude or longitude is out of range.
    pub fn new(
        timestamp: Option<String>,
        latitude: f64,
        longitude: f64,
        altitude_m: Option<f64>,
        horizontal_accuracy_m: Option<f64>,
    ) -> Option<RoutePoint> {
        let readable = (-90.0..=90.0).contains(&latitude) && (-180.0..=180.0).contains(&longitude);
        readable.then_some(RoutePoint {
            timestamp,
            latitude,
            longitude,
            altitude_m: altitude_m.filter(|a| a.is_finite()),
            horizontal_accuracy_m: horizontal_accuracy_m.filter(|a| a.is_finite() && *a >= 0.0),
        })
    }
}

/// `route` as stored: `None` when there are no points.
pub fn route(points: &[RoutePoint]) -> Option<Value> {
    if points.is_empty() {
        return None;
    }
    serde_json::to_value(points).ok()
}

/// The user's workouts that name route files (an export's `FileReference`s, kept in
/// `statistics.route_files`) and have no route yet: `(id, files)`.
pub async fn awaiting_routes(
    client: &impl GenericClient,
    user_id: UserId,
) -> Result<Vec<(Uuid, Vec<String>)>> {
    let statement = client
        .prepare_cached(
            "select id, statistics -> 'route_files' from workouts
             where user_id = $1 and route is null
               and jsonb_typeof(statistics -> 'route_files') = 'array'",
        )
        .await?;
    let rows = client.query(&statement, &[&user_id]).await?;
    rows.iter()
        .map(|r| {
            let files: Value = r.try_get(1)?;
            let files = serde_json::from_value(files)
                .map_err(|source| crate::Error::Payload { what: "route files", source })?;
            Ok((r.try_get(0)?, files))
        })
        .collect()
}

/// Gives workouts that have none their route (`(id, points as JSON)`); returns how many got one.
pub async fn set_routes(client: &impl GenericClient, routes: &[(Uuid, String)]) -> Result<u64> {
    if routes.is_empty() {
        return Ok(0);
    }
    let (ids, points): (Vec<Uuid>, Vec<&str>) =
        routes.iter().map(|(id, json)| (*id, json.as_str())).unzip();
    let statement = client
        .prepare_cached(
            "update workouts w set route = u.points::jsonb
             from unnest($1::uuid[], $2::text[]) as u(id, points)
             where w.id = u.id and w.route is null",
        )
        .await?;
    Ok(client.execute(&statement, &[&ids, &points]).await?)
}

/// A user's workout's route points (`[]` when it has none); `None` when the user has no such
/// workout.
pub async fn route_of(
    client: &impl GenericClient,
    user_id: UserId,
    workout_id: Uuid,
) -> Result<Option<Vec<RoutePoint>>> {
    // A sealed workout has no route (one with a route stays a row).
    let statement = client
        .prepare_cached(
            "select route from workouts where user_id = $1 and id = $2
             union all
             select null from workout_blocks b
             where b.user_id = $1 and exists (select 1 from unnest(b.sessions) r where r.id = $2)
             limit 1",
        )
        .await?;
    let Some(row) = client.query_opt(&statement, &[&user_id, &workout_id]).await? else {
        return Ok(None);
    };
    let route: Option<Value> = row.try_get(0)?;
    let points = route
        .map(serde_json::from_value::<Vec<RoutePoint>>)
        .transpose()
        .map_err(|source| crate::Error::Payload { what: "workout route", source })?;
    Ok(Some(points.unwrap_or_default()))
}
