//! `/api/v1/users/{user_id}/events/{workouts,sleep,menstrual-cycles}`: a user's sessions in
//! cursor pages, newest first, and their deletion.
//!
//! Workouts and sleep sessions recorded by two sources at once (a watch and a ring on the same
//! night) are shown once, from the better-ranked source; `filter_by_priority=false` shows both.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use schema::sessions::{Cycle, Event, EventQuery, Kind, Sleep, Workout};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query, path_user, path_uuid};
use crate::pagination::{Cursor, CursorPage, PageMetadata, paginate};
use crate::read_routing::ReadState;
use crate::routes::{existing_user, user_ranking};
use crate::validate::Params;
use rules::{SourceOut, Sources};

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_workouts))
        .routes(routes!(list_sleep))
        .routes(routes!(list_cycles))
        .routes(routes!(delete_workout))
        .routes(routes!(get_workout_route))
        .routes(routes!(delete_sleep))
        .routes(routes!(delete_cycle))
        // Reads go to a replica when one is close enough behind; deletes stay on the primary.
        .route_layer(axum::middleware::from_fn(crate::read_routing::route))
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WorkoutOut {
    pub id: Uuid,
    /// The workout type (`running`, `cycling`, …), `unknown` when the source gave none.
    #[serde(rename = "type")]
    pub kind: String,
    /// The title or notes the source gave.
    pub name: Option<String>,
    /// Local time with its offset (UTC, `Z`, when unknown).
    pub start_time: String,
    pub end_time: String,
    pub zone_offset: Option<String>,
    pub duration_seconds: i32,
    pub source: SourceOut,
    pub calories_kcal: Option<f64>,
    pub distance_meters: Option<f64>,
    pub steps: Option<i32>,
    /// The source's figure, else the mean of the source's heart rate during the workout.
    pub avg_heart_rate_bpm: Option<i64>,
    pub max_heart_rate_bpm: Option<i64>,
    pub min_heart_rate_bpm: Option<i64>,
    /// Duration over distance, when there is a distance.
    pub avg_pace_sec_per_km: Option<f64>,
    pub avg_speed_m_per_s: Option<f64>,
    pub max_speed_m_per_s: Option<f64>,
    pub elevation_gain_meters: Option<f64>,
    /// Whether the workout has a route (`GET …/events/workouts/{workout_id}/route`).
    pub has_route: bool,
}

/// A point of a workout's route, whichever way it came (an SDK's `route`, an Apple Health
/// export's `workout-routes/*.gpx`).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RoutePointOut {
    /// As the source gave it (ISO 8601).
    pub timestamp: Option<String>,
    pub latitude: f64,
    pub longitude: f64,
    pub altitude_m: Option<f64>,
    pub horizontal_accuracy_m: Option<f64>,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"workout_id": "0196a5c2-7a4e-7d11-9c1e-2f5b3d4c6a70", "points": [
    {"timestamp": "2026-03-14T07:00:05Z", "latitude": 52.2297, "longitude": 21.0122,
     "altitude_m": 110.5, "horizontal_accuracy_m": 3.1}]}))]
pub(crate) struct RouteOut {
    pub workout_id: Uuid,
    /// In the order recorded; empty when the workout has no route.
    pub points: Vec<RoutePointOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SleepStagesOut {
    pub awake_minutes: i32,
    pub light_minutes: i32,
    pub deep_minutes: i32,
    pub rem_minutes: i32,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SleepOut {
    pub id: Uuid,
    pub start_time: String,
    pub end_time: String,
    pub zone_offset: Option<String>,
    pub source: SourceOut,
    /// From the first stage to the last.
    pub duration_seconds: i32,
    /// Time asleep (light, deep, REM or unspecified sleep).
    pub sleep_duration_seconds: Option<i32>,
    pub time_in_bed_seconds: Option<i32>,
    pub efficiency_percent: Option<f64>,
    pub stages: SleepStagesOut,
    /// `[{stage, start_time, end_time}]`.
    #[schema(value_type = Option<Vec<Object>>)]
    pub sleep_stage_intervals: Value,
    pub is_nap: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CycleOut {
    pub id: Uuid,
    pub start_time: String,
    pub end_time: Option<String>,
    pub zone_offset: Option<String>,
    pub source: SourceOut,
    pub current_phase_type: Option<String>,
    pub day_in_cycle: Option<i32>,
    pub cycle_length: Option<i32>,
    pub period_length: Option<i32>,
    pub is_predicted_cycle: bool,
    /// What the source said about the cycle beyond the fields above (flow, symptoms, …).
    #[schema(value_type = Object)]
    pub details: Value,
}

/// Zero from a source means "not measured".
fn positive(v: Option<f64>) -> Option<f64> {
    v.filter(|x| *x > 0.0)
}

fn bpm(v: Option<f64>) -> Option<i64> {
    v.map(|x| x.round() as i64)
}

fn zone(offset: Option<i16>) -> Option<String> {
    offset.map(schema::zone::format)
}

pub(crate) fn workout(w: Workout, sources: &Sources) -> WorkoutOut {
    let Workout { id, data_source_id, figures: f, has_route } = w;
    let distance = positive(f.distance_meters);
    WorkoutOut {
        id,
        kind: f.kind.unwrap_or_else(|| "unknown".into()),
        name: f.notes,
        start_time: schema::zone::local_time(f.start_time, f.zone_offset),
        end_time: schema::zone::local_time(f.end_time, f.zone_offset),
        zone_offset: zone(f.zone_offset),
        duration_seconds: f.duration_seconds,
        source: sources.get(data_source_id),
        calories_kcal: positive(f.calories_kcal),
        distance_meters: distance,
        steps: f.steps,
        avg_heart_rate_bpm: bpm(f.avg_heart_rate_bpm),
        max_heart_rate_bpm: bpm(f.max_heart_rate_bpm),
        min_heart_rate_bpm: bpm(f.min_heart_rate_bpm),
        avg_pace_sec_per_km: distance
            .filter(|_| f.duration_seconds > 0)
            .map(|d| (f64::from(f.duration_seconds) / (d / 1000.0) * 10.0).round() / 10.0),
        avg_speed_m_per_s: f.avg_speed_m_per_s,
        max_speed_m_per_s: f.max_speed_m_per_s,
        elevation_gain_meters: positive(f.elevation_gain_meters),
        has_route,
    }
}

pub(crate) fn sleep(s: Sleep, sources: &Sources) -> SleepOut {
    SleepOut {
        id: s.id,
        start_time: schema::zone::local_time(s.start_time, s.zone_offset),
        end_time: schema::zone::local_time(s.end_time, s.zone_offset),
        zone_offset: zone(s.zone_offset),
        source: sources.get(s.data_source_id),
        duration_seconds: s.duration_seconds,
        sleep_duration_seconds: s.sleep_seconds,
        time_in_bed_seconds: s.in_bed_seconds,
        efficiency_percent: positive(s.efficiency_percent),
        stages: SleepStagesOut {
            awake_minutes: s.awake_minutes.unwrap_or(0),
            light_minutes: s.light_minutes.unwrap_or(0),
            deep_minutes: s.deep_minutes.unwrap_or(0),
            rem_minutes: s.rem_minutes.unwrap_or(0),
        },
        sleep_stage_intervals: s.stages,
        is_nap: s.is_nap,
    }
}

pub(crate) fn cycle(c: Cycle, sources: &Sources) -> CycleOut {
    CycleOut {
        id: c.id,
        start_time: schema::zone::local_time(c.start_time, c.zone_offset),
        end_time: c.end_time.map(|e| schema::zone::local_time(e, c.zone_offset)),
        zone_offset: zone(c.zone_offset),
        source: sources.get(c.data_source_id),
        current_phase_type: c.current_phase_type,
        day_in_cycle: c.day_in_cycle,
        cycle_length: c.cycle_length,
        period_length: c.period_length,
        is_predicted_cycle: c.is_predicted_cycle,
        details: c.details,
    }
}

/// Reads the common list parameters and one page of rows.
async fn list<E: Event, T>(
    state: &AppState,
    user_id: &str,
    mut params: Params,
    shape: fn(E, &Sources) -> T,
) -> ApiResult<Json<CursorPage<T>>> {
    let (user_id, ranking) = user_ranking(state, user_id).await?;
    let window = params.window("start_date", "end_date", true);
    let limit = params.limit(50, 100);
    let resolve = params.bool("filter_by_priority", true);
    let raw_cursor = params.string("cursor");
    params.finish()?;
    // `finish` has reported a missing or bad bound; this only satisfies the type.
    let (start, end) = window.ok_or_else(|| ApiError::bad_request("Invalid time window"))?;
    let cursor = raw_cursor.as_deref().map(Cursor::decode).transpose()?;
    let after = match (&cursor, raw_cursor.as_deref()) {
        (Some(c), Some(raw)) => Some((c.at, c.id(raw)?)),
        _ => None,
    };
    let sources = Sources::new(&ranking.sources);
    let query = EventQuery {
        user_id,
        start,
        end,
        after,
        backward: cursor.as_ref().is_some_and(|c| c.backward),
        fetch: limit + 1,
        resolve,
        sources: ranking.arrays(),
    };
    let (rows, total) = tokio::try_join!(
        schema::sessions::page::<E>(&state.db, &query),
        schema::sessions::count(&state.db, E::KIND, &query)
    )?;
    let (rows, mut pagination) = paginate(rows, limit as usize, cursor.as_ref(), |e| {
        let (at, id) = e.position();
        (at, id.to_string())
    });
    pagination.total_count = Some(total);
    let data: Vec<T> = rows.into_iter().map(|e| shape(e, &sources)).collect();
    let metadata = PageMetadata {
        resolution: None,
        sample_count: data.len() as i64,
        start_time: Some(start),
        end_time: Some(end),
    };
    Ok(Json(CursorPage { data, pagination, metadata }))
}

/// A user's workouts that start in `[start_date, end_date)`, newest first. A date-only
/// `end_date` includes that day.
#[utoipa::path(get, path = "/users/{user_id}/events/workouts", tag = "data",
    params(
        ("user_id" = String, Path), ("start_date" = String, Query), ("end_date" = String, Query),
        ("filter_by_priority" = Option<bool>, Query, description = "Default true: one of two overlapping workouts from different sources"),
        ("cursor" = Option<String>, Query), ("limit" = Option<i64>, Query, description = "1 to 100, default 50"),
    ),
    responses(
        (status = 200, body = CursorPage<WorkoutOut>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn list_workouts(
    _auth: ApiAuth,
    ReadState(state): ReadState,
    Path(user_id): Path<String>,
    Query(params): Query,
) -> ApiResult<Json<CursorPage<WorkoutOut>>> {
    list(&state, &user_id, params, workout).await
}

/// A user's sleep sessions that start in `[start_date, end_date)`, newest first.
#[utoipa::path(get, path = "/users/{user_id}/events/sleep", tag = "data",
    params(
        ("user_id" = String, Path), ("start_date" = String, Query), ("end_date" = String, Query),
        ("filter_by_priority" = Option<bool>, Query, description = "Default true: one of two overlapping sessions from different sources"),
        ("cursor" = Option<String>, Query), ("limit" = Option<i64>, Query, description = "1 to 100, default 50"),
    ),
    responses(
        (status = 200, body = CursorPage<SleepOut>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn list_sleep(
    _auth: ApiAuth,
    ReadState(state): ReadState,
    Path(user_id): Path<String>,
    Query(params): Query,
) -> ApiResult<Json<CursorPage<SleepOut>>> {
    list(&state, &user_id, params, sleep).await
}

/// A user's menstrual cycles that start in `[start_date, end_date)`, newest first.
#[utoipa::path(get, path = "/users/{user_id}/events/menstrual-cycles", tag = "data",
    params(
        ("user_id" = String, Path), ("start_date" = String, Query), ("end_date" = String, Query),
        ("cursor" = Option<String>, Query), ("limit" = Option<i64>, Query, description = "1 to 100, default 50"),
    ),
    responses(
        (status = 200, body = CursorPage<CycleOut>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn list_cycles(
    _auth: ApiAuth,
    ReadState(state): ReadState,
    Path(user_id): Path<String>,
    Query(params): Query,
) -> ApiResult<Json<CursorPage<CycleOut>>> {
    list(&state, &user_id, params, cycle).await
}

async fn delete(
    state: &AppState,
    user_id: &str,
    id: &str,
    kind: Kind,
    missing: &str,
) -> ApiResult<StatusCode> {
    let user_id = path_user(user_id)?;
    let id = path_uuid(id)?;
    if schema::sessions::delete(&state.db, kind, user_id, id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(missing))
    }
}

/// Deletes a workout (204); 404 when the user has no such workout.
#[utoipa::path(delete, path = "/users/{user_id}/events/workouts/{workout_id}", tag = "data",
    params(("user_id" = String, Path), ("workout_id" = String, Path)),
    responses((status = 204), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn delete_workout(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path((user_id, id)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    delete(&state, &user_id, &id, Kind::Workout, "Workout not found").await
}

/// Deletes a sleep session (204); 404 when the user has no such session.
#[utoipa::path(delete, path = "/users/{user_id}/events/sleep/{sleep_id}", tag = "data",
    params(("user_id" = String, Path), ("sleep_id" = String, Path)),
    responses((status = 204), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn delete_sleep(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path((user_id, id)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    delete(&state, &user_id, &id, Kind::Sleep, "Sleep session not found").await
}

/// Deletes a menstrual cycle record (204); 404 when the user has no such record.
#[utoipa::path(delete, path = "/users/{user_id}/events/menstrual-cycles/{cycle_id}", tag = "data",
    params(("user_id" = String, Path), ("cycle_id" = String, Path)),
    responses((status = 204), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("api_key" = []), ("bearer" = [])))]
async fn delete_cycle(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path((user_id, id)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    delete(&state, &user_id, &id, Kind::MenstrualCycle, "Menstrual cycle record not found").await
}

/// A workout's route: its points in the order recorded (empty when it has none); 404 when the
/// user has no such workout.
#[utoipa::path(get, path = "/users/{user_id}/events/workouts/{workout_id}/route", tag = "data",
    params(("user_id" = String, Path), ("workout_id" = String, Path)),
    responses(
        (status = 200, body = RouteOut), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn get_workout_route(
    _auth: ApiAuth,
    ReadState(state): ReadState,
    Path((user_id, id)): Path<(String, String)>,
) -> ApiResult<Json<RouteOut>> {
    let user_id = existing_user(&state, &user_id).await?;
    let workout_id = path_uuid(&id)?;
    let client = state.db.client().await?;
    let points = schema::workouts::route_of(&client, user_id, workout_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Workout not found"))?;
    Ok(Json(route(workout_id, points)))
}

/// A workout's route as answered.
pub(crate) fn route(workout_id: Uuid, points: Vec<schema::workouts::RoutePoint>) -> RouteOut {
    let points = points
        .into_iter()
        .map(|p| RoutePointOut {
            timestamp: p.timestamp,
            latitude: p.latitude,
            longitude: p.longitude,
            altitude_m: p.altitude_m,
            horizontal_accuracy_m: p.horizontal_accuracy_m,
        })
        .collect();
    RouteOut { workout_id, points }
}
