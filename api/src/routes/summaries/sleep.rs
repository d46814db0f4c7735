//! `GET /summaries/sleep`: one item per local day one woke up on.
//!
//! A night recorded by two sources (a watch and a ring) counts once: of two sessions from
//! different sources overlapping by half of the shorter one, the better-ranked source's is kept,
//! the rule the event lists use. A night from one source and a nap from another both count.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use schema::events::Sleep;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use super::{Ranking, day_paging, page_days, round1, series};
use crate::AppState;
use crate::error::{ApiResult, ErrorBody, ValidationBody};
use crate::extract::{ApiAuth, Query};
use crate::pagination::{CursorPage, PageMetadata};
use crate::routes::existing_user;
use crate::source::{SourceOut, Sources};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(sleep_summary))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StageMinutes {
    pub awake: i64,
    pub light: i64,
    pub deep: i64,
    pub rem: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SessionBrief {
    pub id: Uuid,
    pub start_time: String,
    pub end_time: String,
    pub zone_offset: Option<String>,
    pub duration_minutes: i64,
    pub is_nap: bool,
    pub source: SourceOut,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SleepDay {
    /// The local date of waking up.
    pub date: NaiveDate,
    /// The source of the longest night session.
    pub source: Option<SourceOut>,
    /// First fall asleep and last wake-up of the night (naps aside).
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub zone_offset: Option<String>,
    /// Time asleep at night, naps aside.
    pub duration_minutes: i64,
    /// Time asleep, naps included.
    pub total_duration_minutes: i64,
    pub time_in_bed_minutes: Option<i64>,
    pub efficiency_percent: Option<f64>,
    pub stages: Option<StageMinutes>,
    /// Awake intervals within the night.
    pub interruptions_count: Option<i64>,
    pub nap_count: i64,
    pub nap_duration_minutes: i64,
    pub sessions: Vec<SessionBrief>,
    /// Means of the night's samples, any source.
    pub avg_heart_rate_bpm: Option<f64>,
    pub avg_hrv_sdnn_ms: Option<f64>,
    pub avg_hrv_rmssd_ms: Option<f64>,
    pub avg_respiratory_rate: Option<f64>,
    pub avg_spo2_percent: Option<f64>,
}

/// The local date a session ends on.
pub fn wake_date(s: &Sleep) -> NaiveDate {
    (s.end_time + Duration::minutes(i64::from(s.zone_offset.unwrap_or(0)))).date_naive()
}

fn asleep(s: &Sleep) -> i64 {
    i64::from(s.sleep_seconds.unwrap_or(s.duration_seconds))
}

/// Drops sessions overlapping a better-ranked source's by half of the shorter one.
pub fn resolve(sessions: Vec<Sleep>, ranking: &Ranking) -> Vec<Sleep> {
    let keep: Vec<bool> = sessions
        .iter()
        .map(|e| {
            !sessions.iter().any(|o| {
                let overlap =
                    (o.end_time.min(e.end_time) - o.start_time.max(e.start_time)).num_seconds();
                let shorter =
                    (o.end_time - o.start_time).min(e.end_time - e.start_time).num_seconds();
                o.data_source_id != e.data_source_id
                    && overlap > 0
                    && overlap * 2 >= shorter
                    && (ranking.rank(o.data_source_id), o.id)
                        < (ranking.rank(e.data_source_id), e.id)
            })
        })
        .collect();
    sessions.into_iter().zip(keep).filter_map(|(s, k)| k.then_some(s)).collect()
}

/// The longest night (non-nap) session of a day, the one that stands for the night.
pub fn longest_night(sessions: &[Sleep]) -> Option<&Sleep> {
    sessions.iter().filter(|s| !s.is_nap).max_by_key(|s| (asleep(s), s.end_time))
}

/// The night's and naps' figures of one day (physiology filled in later).
pub fn day(date: NaiveDate, sessions: &[Sleep], sources: &Sources) -> SleepDay {
    let nights: Vec<&Sleep> = sessions.iter().filter(|s| !s.is_nap).collect();
    let naps: Vec<&Sleep> = sessions.iter().filter(|s| s.is_nap).collect();
    let longest = longest_night(sessions);
    let night_sleep: i64 = nights.iter().map(|s| asleep(s)).sum();
    let nap_sleep: i64 = naps.iter().map(|s| asleep(s)).sum();
    let in_bed: Option<i64> = nights.iter().map(|s| s.in_bed_seconds.map(i64::from)).sum();
    let minutes = |f: fn(&Sleep) -> Option<i32>| -> i64 {
        nights.iter().filter_map(|s| f(s)).map(i64::from).sum()
    };
    let has_stages = nights.iter().any(|s| s.deep_minutes.is_some() || s.light_minutes.is_some());
    let interruptions = nights
        .iter()
        .map(|s| {
            s.stages.as_array().map(|a| a.iter().filter(|i| i["stage"] == "awake").count() as i64)
        })
        .sum::<Option<i64>>();
    let start = nights.iter().map(|s| s.start_time).min();
    let end = nights.iter().map(|s| s.end_time).max();
    let offset = longest.and_then(|s| s.zone_offset);
    SleepDay {
        date,
        source: longest.map(|s| sources.get(s.data_source_id)),
        start_time: start.map(|t| schema::zone::local_time(t, offset)),
        end_time: end.map(|t| schema::zone::local_time(t, offset)),
        zone_offset: offset.map(schema::zone::format),
        duration_minutes: night_sleep / 60,
        total_duration_minutes: (night_sleep + nap_sleep) / 60,
        time_in_bed_minutes: in_bed.filter(|_| !nights.is_empty()).map(|s| s / 60),
        efficiency_percent: in_bed
            .filter(|b| *b > 0)
            .map(|b| round1(night_sleep as f64 * 100.0 / b as f64)),
        stages: has_stages.then(|| StageMinutes {
            awake: minutes(|s| s.awake_minutes),
            light: minutes(|s| s.light_minutes),
            deep: minutes(|s| s.deep_minutes),
            rem: minutes(|s| s.rem_minutes),
        }),
        interruptions_count: interruptions.filter(|_| !nights.is_empty()),
        nap_count: naps.len() as i64,
        nap_duration_minutes: nap_sleep / 60,
        sessions: sessions
            .iter()
            .map(|s| SessionBrief {
                id: s.id,
                start_time: schema::zone::local_time(s.start_time, s.zone_offset),
                end_time: schema::zone::local_time(s.end_time, s.zone_offset),
                zone_offset: s.zone_offset.map(schema::zone::format),
                duration_minutes: asleep(s) / 60,
                is_nap: s.is_nap,
                source: sources.get(s.data_source_id),
            })
            .collect(),
        avg_heart_rate_bpm: None,
        avg_hrv_sdnn_ms: None,
        avg_hrv_rmssd_ms: None,
        avg_respiratory_rate: None,
        avg_spo2_percent: None,
    }
}

/// The sessions (duplicates resolved) of each wake-up day in `[first, last]`.
pub async fn nights(
    state: &AppState,
    user_id: Uuid,
    first: NaiveDate,
    last: NaiveDate,
    ranking: &Ranking,
) -> ApiResult<BTreeMap<NaiveDate, Vec<Sleep>>> {
    // Local days lie within 14 hours of UTC days.
    let from = super::midnight(first) - Duration::hours(15);
    let to = super::midnight(last) + Duration::hours(39);
    let sessions = schema::summaries::sleep_ending(&state.db, user_id, from, to).await?;
    let mut out: BTreeMap<NaiveDate, Vec<Sleep>> = BTreeMap::new();
    for s in resolve(sessions, ranking) {
        let d = wake_date(&s);
        if d >= first && d <= last {
            out.entry(d).or_default().push(s);
        }
    }
    Ok(out)
}

/// An interval `[start, end)`.
type Span = (DateTime<Utc>, DateTime<Utc>);

/// The night's span of a day: first start to last end of its non-nap sessions.
pub fn night_span(sessions: &[Sleep]) -> Option<Span> {
    let nights = sessions.iter().filter(|s| !s.is_nap);
    let start = nights.clone().map(|s| s.start_time).min()?;
    let end = nights.map(|s| s.end_time).max()?;
    Some((start, end))
}

/// Sleep per wake-up day in `[start_date, end_date]`, in date order.
#[utoipa::path(get, path = "/users/{user_id}/summaries/sleep", tag = "summaries",
    params(("user_id" = String, Path), ("start_date" = String, Query), ("end_date" = String, Query),
        ("cursor" = Option<String>, Query), ("limit" = Option<i64>, Query, description = "1 to 100, default 50")),
    responses(
        (status = 200, body = CursorPage<SleepDay>), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ValidationBody),
    ),
    security(("api_key" = []), ("bearer" = [])))]
async fn sleep_summary(
    _auth: ApiAuth,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    Query(params): Query,
) -> ApiResult<Json<CursorPage<SleepDay>>> {
    let user_id = existing_user(&state, &user_id).await?;
    let paging = day_paging(params, 100)?;
    let days = paging.days;
    let ranking = Ranking::load(&state, user_id).await?;
    let by_day = nights(&state, user_id, days.first, days.last, &ranking).await?;
    let (page, pagination) = page_days(by_day, &paging);
    let sources = Sources::new(&ranking.sources);
    let mut data: Vec<SleepDay> = page.iter().map(|(d, s)| day(*d, s, &sources)).collect();

    // Physiology during each night, in one query for the page.
    let spans: Vec<(usize, Span)> =
        page.iter().enumerate().filter_map(|(i, (_, s))| Some((i, night_span(s)?))).collect();
    let ids = [
        "heart_rate",
        "heart_rate_variability_sdnn",
        "heart_rate_variability_rmssd",
        "respiratory_rate",
        "oxygen_saturation",
    ]
    .map(series);
    let intervals: Vec<_> = spans.iter().map(|(_, span)| *span).collect();
    let means = schema::summaries::means_over(&state.db, user_id, &ids, &intervals).await?;
    for (n, id, mean) in means {
        let Some((i, _)) = spans.get(n as usize) else { continue };
        let Some(d) = data.get_mut(*i) else { continue };
        let v = Some(round1(mean));
        match ids.iter().position(|x| *x == id) {
            Some(0) => d.avg_heart_rate_bpm = v,
            Some(1) => d.avg_hrv_sdnn_ms = v,
            Some(2) => d.avg_hrv_rmssd_ms = v,
            Some(3) => d.avg_respiratory_rate = v,
            _ => d.avg_spo2_percent = v,
        }
    }
    let metadata = PageMetadata {
        resolution: Some("1day".into()),
        sample_count: data.len() as i64,
        start_time: Some(days.start),
        end_time: Some(days.end),
    };
    Ok(Json(CursorPage { data, pagination, metadata }))
}
