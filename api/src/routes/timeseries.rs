//! `GET /api/v1/users/{user_id}/timeseries`: a user's samples in a time window, in cursor pages,
//! raw or downsampled, optionally with cross-source duplicates resolved by source priority.

use axum::Json;
use axum::extract::Path;
use schema::catalogue::series_types;
use schema::timeseries::{Position, SeriesPoint, SeriesQuery};
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, FieldError, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::pagination::{Cursor, CursorPage, PageMetadata, paginate};
use crate::read_routing::ReadState;
use crate::routes::user_ranking;
use rules::{SourceOut, Sources};
use schema::ids::SeriesId;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(timeseries))
        .route_layer(axum::middleware::from_fn(crate::read_routing::route))
}

/// Resolutions and their UTC bucket widths in seconds (`raw`: none), finest first.
pub(crate) const RESOLUTIONS: &[(&str, Option<i64>)] = &[
    ("raw", None),
    ("1min", Some(60)),
    ("5min", Some(300)),
    ("15min", Some(900)),
    ("1hour", Some(3600)),
    ("1day", Some(86_400)),
];

/// One sample, or one bucket of samples of one series from one source.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"timestamp": "2026-03-14T11:00:00+01:00", "zone_offset": "+01:00",
    "type": "heart_rate", "value": 72.0, "unit": "bpm",
    "source": {"provider": "phonehealth", "source": "Apple Watch", "device": "Watch6,2",
               "device_type": "watch", "device_name": "Apple Watch"},
    "is_daily_total": null}))]
pub(crate) struct SampleOut {
    /// The sample's instant in its local time (`+02:00`), or in UTC (`Z`) when its offset is
    /// unknown. A bucket's start, in UTC buckets.
    pub timestamp: String,
    pub zone_offset: Option<String>,
    /// The series type slug (`heart_rate`, `steps`).
    #[serde(rename = "type")]
    pub kind: String,
    pub value: f64,
    pub unit: String,
    pub source: SourceOut,
    /// For additive series: whether the value is a day's total rather than an interval's.
    /// Null for levels.
    pub is_daily_total: Option<bool>,
}

pub(crate) fn sample(p: &SeriesPoint, sources: &Sources) -> SampleOut {
    let series = series_types::by_id(p.series_type_id);
    SampleOut {
        timestamp: schema::zone::local_time(p.ts, p.zone_offset),
        zone_offset: p.zone_offset.map(schema::zone::format),
        kind: series.map(|t| t.slug).unwrap_or("unknown").to_string(),
        value: p.value,
        unit: series.map(|t| t.unit).unwrap_or("").to_string(),
        source: sources.get(p.data_source_id),
        is_daily_total: p.is_daily_total,
    }
}

/// The series type ids named by `types` (repeated, or comma-separated); a 422 item for each
/// unknown name.
fn series_ids(names: Vec<String>) -> (Vec<SeriesId>, Vec<FieldError>) {
    let mut ids = Vec::new();
    let mut errors = Vec::new();
    for name in names.iter().flat_map(|n| n.split(',')).map(str::trim).filter(|n| !n.is_empty()) {
        match series_types::by_slug(name) {
            Some(t) if !ids.contains(&t.id) => ids.push(t.id),
            Some(_) => {}
            None => errors.push(
                FieldError::new(
                    vec![json!("query"), json!("types")],
                    "enum",
                    format!("Input should be a known series type, not '{name}'"),
                    json!(name),
                )
                .with_ctx(
                    json!({ "expected": "a series type slug, e.g. 'heart_rate' or 'steps'" }),
                ),
            ),
        }
    }
    (ids, errors)
}

/// Samples of a user in `[start_time, end_time)`, ordered by time, then series type, then
/// source. A date-only `end_time` includes that whole day. `resolution` other than `raw`
/// downsamples into UTC buckets per series and source: additive series are summed, levels
/// averaged. `filter_by_priority=true` keeps, per series and hour (or bucket), only the
/// best-ranked source that has samples there (see the source-priority rule).
#[utoipa::path(get, path = "/users/{user_id}/timeseries", tag = "data",
    params(
        ("user_id" = String, Path, description = "The user's UUID"),
        ("start_time" = String, Query, description = "ISO 8601, date, or Unix seconds"),
        ("end_time" = String, Query, description = "Exclusive; a date alone includes that day"),
        ("types" = Option<Vec<String>>, Query, description = "Series type slugs; all when absent"),
        ("resolution" = Option<String>, Query, description = "raw, 1min, 5min, 15min, 1hour, 1day"),
        ("filter_by_priority" = Option<bool>, Query, description = "Resolve cross-source duplicates"),
        ("cursor" = Option<String>, Query), ("limit" = Option<i64>, Query, description = "1 to 100, default 50"),
    ),
    responses(
        (status = 200, body = CursorPage<SampleOut>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn timeseries(
    _auth: ApiAuth,
    ReadState(state): ReadState,
    Path(user_id): Path<String>,
    Query(mut params): Query,
) -> ApiResult<Json<CursorPage<SampleOut>>> {
    let (user_id, ranking) = user_ranking(&state, &user_id).await?;
    let window = params.window("start_time", "end_time", true);
    let limit = params.limit(50, 100);
    let names: Vec<&str> = RESOLUTIONS.iter().map(|(n, _)| *n).collect();
    let resolution = params.choice("resolution", &names, "raw");
    let resolve = params.bool("filter_by_priority", false);
    let (types, type_errors) = series_ids(params.all("types"));
    type_errors.into_iter().for_each(|e| params.push(e));
    let raw_cursor = params.string("cursor");
    params.finish()?;
    // `finish` has reported a missing or bad bound; this only satisfies the type.
    let (start, end) = window.ok_or_else(|| ApiError::bad_request("Invalid time window"))?;
    let cursor = raw_cursor.as_deref().map(Cursor::decode).transpose()?;
    let after = match (&cursor, raw_cursor.as_deref()) {
        (Some(c), Some(raw)) => {
            let (series_type_id, data_source_id) = c.series_key(raw)?;
            Some(Position { ts: c.at, series_type_id, data_source_id })
        }
        _ => None,
    };
    let bucket_seconds = RESOLUTIONS.iter().find(|(n, _)| *n == resolution).and_then(|(_, b)| *b);
    let sources = Sources::new(&ranking.sources);
    let query = SeriesQuery {
        user_id,
        types,
        start,
        end,
        after,
        backward: cursor.as_ref().is_some_and(|c| c.backward),
        fetch: limit + 1,
        bucket_seconds,
        sources: ranking.arrays(),
        resolve,
    };
    let rows = schema::timeseries::page(&state.db, &query).await?;
    let (rows, pagination) = paginate(rows, limit as usize, cursor.as_ref(), |p| {
        (p.ts, format!("{}:{}", p.series_type_id, p.data_source_id))
    });
    let data: Vec<SampleOut> = rows.iter().map(|p| sample(p, &sources)).collect();
    let metadata = PageMetadata {
        resolution: Some(resolution.to_string()),
        sample_count: data.len() as i64,
        start_time: Some(start),
        end_time: Some(end),
    };
    Ok(Json(CursorPage { data, pagination, metadata }))
}
