//! What happened to the webhooks: the attempts of an endpoint and the messages sent, in the
//! Svix shapes (`{data, done, iterator, prevIterator}`, newest first), a test event, and
//! beyond the contract, resending one message and recovering every failed one since a time.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use schema::ids::{EndpointId, MessageId, UserId};
use schema::webhook_deliveries::{AttemptFilter, AttemptRow, DeliveryStatus};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::webhook_endpoints::{enabled, not_found};
use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, FieldError, ValidationBody};
use crate::extract::{ApiJson, DeveloperAuth, Query};
use crate::validate::{Params, body_loc};

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_attempts))
        .routes(routes!(list_messages))
        .routes(routes!(list_endpoint_messages))
        .routes(routes!(send_test))
        .routes(routes!(resend))
        .routes(routes!(recover))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageOut {
    pub id: String,
    pub event_type: String,
    pub event_id: String,
    pub timestamp: DateTime<Utc>,
    /// `user.<id>` for a user's events.
    pub channels: Vec<String>,
    pub tags: Vec<String>,
    #[schema(value_type = Option<Object>)]
    pub payload: Option<Value>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AttemptOut {
    pub id: String,
    pub endpoint_id: String,
    pub msg_id: String,
    pub url: String,
    pub response: String,
    pub response_status_code: i32,
    pub response_duration_ms: i32,
    /// 0 success, 1 pending, 2 failed, 3 sending.
    pub status: i16,
    pub status_text: &'static str,
    /// 0 scheduled, 1 manual.
    pub trigger_type: i16,
    pub timestamp: DateTime<Utc>,
    pub msg: MessageOut,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListOut<T> {
    pub data: Vec<T>,
    pub done: bool,
    pub iterator: Option<String>,
    pub prev_iterator: Option<String>,
}

impl MessageOut {
    /// A message as answered: `user.<id>` its channel for a user's events.
    fn new(
        id: String,
        event_type: String,
        event_id: String,
        timestamp: DateTime<Utc>,
        user: Option<UserId>,
        payload: Option<Value>,
    ) -> MessageOut {
        let channels = user.map(|u| vec![format!("user.{u}")]).unwrap_or_default();
        MessageOut { id, event_type, event_id, timestamp, channels, tags: Vec::new(), payload }
    }
}

fn attempt_out(a: AttemptRow) -> AttemptOut {
    AttemptOut {
        id: a.id,
        endpoint_id: a.endpoint_id,
        msg_id: a.message_id.clone(),
        url: a.url,
        response: a.response,
        response_status_code: a.status_code,
        response_duration_ms: a.duration_ms,
        status: a.status.code(),
        status_text: a.status.as_str(),
        trigger_type: a.trigger_type.code(),
        timestamp: a.created_at,
        msg: MessageOut::new(
            a.message_id,
            a.event_type,
            a.event_id,
            a.message_created_at,
            a.user_id,
            Some(a.payload),
        ),
    }
}

/// The common list parameters: page size, cursor, time bounds, event types.
struct ListParams {
    limit: i64,
    cursor: Option<String>,
    newer: bool,
    before: Option<DateTime<Utc>>,
    after: Option<DateTime<Utc>>,
    event_types: Option<Vec<String>>,
}

fn list_params(params: &mut Params) -> ListParams {
    let limit = params.limit(50, 250);
    let raw = params.string("iterator").filter(|s| !s.is_empty());
    let newer = raw.as_deref().is_some_and(|s| s.starts_with('-'));
    let cursor = raw.map(|s| s.trim_start_matches('-').to_string());
    let before = params.time("before", false).map(|t| t.at);
    let after = params.time("after", false).map(|t| t.at);
    let types: Vec<String> =
        params.all("event_types").iter().flat_map(|v| v.split(',')).map(str::to_string).collect();
    let event_types = (!types.is_empty()).then_some(types);
    ListParams { limit, cursor, newer, before, after, event_types }
}

/// Cuts a `limit + 1` page, names the cursors around it, and makes each row an answer.
fn page<T, U>(
    mut rows: Vec<T>,
    p: &ListParams,
    id: impl Fn(&T) -> String,
    out: impl FnMut(T) -> U,
) -> ListOut<U> {
    let more = rows.len() as i64 > p.limit;
    if more {
        if p.newer {
            rows.remove(0);
        } else {
            rows.truncate(p.limit as usize);
        }
    }
    let iterator = rows.last().map(&id);
    let prev_iterator = rows.first().map(|r| format!("-{}", id(r)));
    // Going forward, done means nothing older; going back, nothing newer.
    ListOut { data: rows.into_iter().map(out).collect(), done: !more, iterator, prev_iterator }
}

/// The list parameters of an endpoint's attempts or messages, with the delivery status.
fn endpoint_filter(params: &mut Params) -> (ListParams, AttemptFilter) {
    let p = list_params(params);
    // Every number 0..=3 names a state (the range is checked first).
    let status = params
        .raw("status")
        .is_some()
        .then(|| DeliveryStatus::from_code(params.int("status", 0, 0, 3) as i16))
        .flatten();
    let filter = AttemptFilter {
        before: p.before,
        after: p.after,
        status,
        event_types: p.event_types.clone(),
        cursor: p.cursor.clone(),
        newer: p.newer,
    };
    (p, filter)
}

async fn endpoint_exists(state: &AppState, id: &str) -> ApiResult<()> {
    schema::webhook_endpoints::get(&state.db, id).await?.map(|_| ()).ok_or_else(|| not_found(id))
}

#[utoipa::path(get, path = "/webhooks/endpoints/{endpoint_id}/attempts", tag = "webhooks",
    params(("endpoint_id" = String, Path), ("limit" = Option<i64>, Query, description = "1 to 250, default 50"),
        ("iterator" = Option<String>, Query), ("before" = Option<String>, Query), ("after" = Option<String>, Query),
        ("status" = Option<i64>, Query, description = "0 success, 1 pending, 2 failed, 3 sending"),
        ("event_types" = Option<Vec<String>>, Query)),
    responses((status = 200, body = ListOut<AttemptOut>), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ValidationBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn list_attempts(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(mut params): Query,
) -> ApiResult<Json<ListOut<AttemptOut>>> {
    enabled(&state)?;
    let (p, filter) = endpoint_filter(&mut params);
    params.finish()?;
    endpoint_exists(&state, &id).await?;
    let rows =
        schema::webhook_deliveries::attempts(&state.db, &EndpointId(id), &filter, p.limit).await?;
    Ok(Json(page(rows, &p, |a| a.id.clone(), attempt_out)))
}

/// A message as one endpoint got it: the message with its payload, and its delivery there.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndpointMessageOut {
    #[serde(flatten)]
    pub msg: MessageOut,
    /// The delivery's: 0 success, 1 pending, 2 failed, 3 sending.
    pub status: i16,
    pub status_text: &'static str,
    /// Attempts made for this endpoint.
    pub attempts: i32,
    /// When the next attempt is due, while pending.
    pub next_attempt: Option<DateTime<Utc>>,
}

/// The messages sent to one endpoint, newest first, each with its payload and its delivery's
/// status there (Svix's "attempted messages" of an endpoint). `status` filters by delivery
/// status; `before` and `after` bound the messages' times.
#[utoipa::path(get, path = "/webhooks/endpoints/{endpoint_id}/messages", tag = "webhooks",
    params(("endpoint_id" = String, Path), ("limit" = Option<i64>, Query, description = "1 to 250, default 50"),
        ("iterator" = Option<String>, Query), ("before" = Option<String>, Query), ("after" = Option<String>, Query),
        ("status" = Option<i64>, Query, description = "0 success, 1 pending, 2 failed, 3 sending"),
        ("event_types" = Option<Vec<String>>, Query)),
    responses((status = 200, body = ListOut<EndpointMessageOut>), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 422, body = ValidationBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn list_endpoint_messages(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(mut params): Query,
) -> ApiResult<Json<ListOut<EndpointMessageOut>>> {
    enabled(&state)?;
    let (p, filter) = endpoint_filter(&mut params);
    params.finish()?;
    endpoint_exists(&state, &id).await?;
    let rows =
        schema::endpoint_messages::list(&state.db, &EndpointId(id), &filter, p.limit).await?;
    Ok(Json(page(
        rows,
        &p,
        |m| m.id.clone(),
        |m| EndpointMessageOut {
            msg: MessageOut::new(
                m.id,
                m.event_type,
                m.event_id,
                m.created_at,
                m.user_id,
                Some(m.payload),
            ),
            status: m.status.code(),
            status_text: m.status.as_str(),
            attempts: m.attempts,
            next_attempt: m.next_attempt_at,
        },
    )))
}

/// Every message sent, newest first (payloads are in each attempt's `msg`).
#[utoipa::path(get, path = "/webhooks/messages", tag = "webhooks",
    params(("limit" = Option<i64>, Query, description = "1 to 250, default 50"),
        ("iterator" = Option<String>, Query), ("before" = Option<String>, Query), ("after" = Option<String>, Query),
        ("event_types" = Option<Vec<String>>, Query)),
    responses((status = 200, body = ListOut<MessageOut>), (status = 401, body = ErrorBody),
        (status = 422, body = ValidationBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn list_messages(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Query(mut params): Query,
) -> ApiResult<Json<ListOut<MessageOut>>> {
    enabled(&state)?;
    let p = list_params(&mut params);
    params.finish()?;
    let client = state.db.client().await?;
    let rows = schema::webhook_messages::list(
        &client,
        p.before,
        p.after,
        p.event_types.clone(),
        p.cursor.clone(),
        p.newer,
        p.limit,
    )
    .await?;
    Ok(Json(page(
        rows,
        &p,
        |m| m.id.clone(),
        |m| MessageOut::new(m.id, m.event_type, m.event_id, m.created_at, m.user_id, None),
    )))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub(crate) struct TestIn {
    /// Default `workout.created`.
    #[serde(default)]
    pub event_type: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TestOut {
    pub message: String,
    pub message_id: String,
}

/// An example `data` object of an event type.
fn example(event_type: &str) -> Value {
    match event_type {
        "workout.created" => json!({
            "id": "00000000-0000-4000-8000-000000000001", "user_id": "00000000-0000-4000-8000-000000000000",
            "type": "running", "start_time": "2026-03-10T18:00:00+01:00", "end_time": "2026-03-10T18:45:00+01:00",
            "zone_offset": "+01:00", "duration_seconds": 2700,
            "source": {"provider": "phonehealth", "device": "Watch7,1"}, "calories_kcal": 512.0,
            "distance_meters": 8200.0, "avg_heart_rate_bpm": 151.0, "max_heart_rate_bpm": 178.0,
            "avg_pace_sec_per_km": 329, "elevation_gain_meters": 42.0}),
        _ => json!({"user_id": "00000000-0000-4000-8000-000000000000", "example": true}),
    }
}

/// Sends an example event to this endpoint only (not filtered by its types or user).
#[utoipa::path(post, path = "/webhooks/endpoints/{endpoint_id}/test", tag = "webhooks",
    params(("endpoint_id" = String, Path)), request_body = Option<TestIn>,
    responses((status = 200, body = TestOut), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn send_test(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<TestOut>> {
    enabled(&state)?;
    // The body may be omitted.
    let body: TestIn = if body.iter().all(u8::is_ascii_whitespace) {
        TestIn::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| {
            ApiError::validation(FieldError::new(
                vec![json!("body")],
                "json_invalid",
                format!("Invalid JSON: {e}"),
                Value::Null,
            ))
        })?
    };
    let event_type = body.event_type.unwrap_or_else(|| "workout.created".to_string());
    let known = schema::catalogue::event_types::all().iter().any(|e| e.name == event_type);
    if !known {
        let msg = format!("Unknown event type '{event_type}'");
        return Err(ApiError::validation(FieldError::new(
            body_loc("event_type"),
            "enum",
            msg,
            json!(event_type),
        )));
    }
    endpoint_exists(&state, &id).await?;
    let payload = json!({ "type": event_type, "data": example(&event_type) });
    let event_id = format!("test:{}", uuid::Uuid::now_v7().simple());
    let client = state.db.client().await?;
    let message_id =
        schema::webhook_messages::insert_message(&client, &event_type, &event_id, None, &payload)
            .await?
            .ok_or_else(|| ApiError::client(StatusCode::CONFLICT, "Test event already sent"))?;
    let (message, endpoint) = (MessageId(message_id.clone()), EndpointId(id));
    schema::webhook_deliveries::insert_pending(&client, &message, &[endpoint]).await?;
    Ok(Json(TestOut { message: "Test event sent successfully.".into(), message_id }))
}

/// Sends one message to this endpoint again, with a fresh retry schedule (beyond the contract).
#[utoipa::path(post, path = "/webhooks/endpoints/{endpoint_id}/messages/{message_id}/resend", tag = "webhooks",
    params(("endpoint_id" = String, Path), ("message_id" = String, Path)),
    responses((status = 202), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn resend(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Path((id, message_id)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    enabled(&state)?;
    let (endpoint, message) = (EndpointId(id.clone()), MessageId(message_id.clone()));
    if schema::webhook_deliveries::resend(&state.db, &endpoint, &message).await? {
        Ok(StatusCode::ACCEPTED)
    } else {
        Err(ApiError::not_found(format!("Message {message_id} was not sent to endpoint {id}.")))
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct RecoverIn {
    /// Messages created at or after this time.
    pub since: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RecoverOut {
    /// How many failed messages are sent again.
    pub recovered: u64,
}

/// Sends again every message that failed for good to this endpoint since a time (beyond the
/// contract), e.g. after the receiver was down for longer than the retry schedule.
#[utoipa::path(post, path = "/webhooks/endpoints/{endpoint_id}/recover", tag = "webhooks",
    params(("endpoint_id" = String, Path)), request_body = RecoverIn,
    responses((status = 202, body = RecoverOut), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
async fn recover(
    _auth: DeveloperAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<RecoverIn>,
) -> ApiResult<(StatusCode, Json<RecoverOut>)> {
    enabled(&state)?;
    endpoint_exists(&state, &id).await?;
    let recovered =
        schema::webhook_deliveries::recover(&state.db, &EndpointId(id), body.since).await?;
    Ok((StatusCode::ACCEPTED, Json(RecoverOut { recovered })))
}
