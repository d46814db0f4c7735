//! `/api/v1/users/{user_id}/summaries/*`: per-day views of a user's data. Days are the user's
//! local days (each sample's own zone offset), sleep belongs to the day one wakes up on, and
//! where several sources report the same thing, one source-priority rule picks one per metric
//! and day, and says which.

mod activity;
mod body;
mod data;
mod recovery;
mod sleep;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use rules::{Ranking, midnight};
use schema::ids::UserId;
use schema::summaries::DataDays;
use utoipa_axum::router::OpenApiRouter;
use uuid::Uuid;

use crate::AppState;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::pagination::{Cursor, CursorPagination, paginate};
use crate::validate::Params;

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(activity::router())
        .merge(sleep::router())
        .merge(body::router())
        .merge(recovery::router())
        .merge(data::router())
        .route_layer(axum::middleware::from_fn(crate::read_routing::route))
}

/// The local days of a `start_date`/`end_date` window, both inclusive: a date-only end
/// includes its day; an end with a time includes the day it falls in unless it is midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Days {
    pub first: NaiveDate,
    pub last: NaiveDate,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

impl Days {
    pub(crate) fn from_window((start, end): (DateTime<Utc>, DateTime<Utc>)) -> Days {
        let last = (end - Duration::microseconds(1)).date_naive();
        Days { first: start.date_naive(), last: last.max(start.date_naive()), start, end }
    }
}

/// The common parameters of the day-paged summaries: window, limit, cursor.
pub(crate) struct DayPaging {
    pub days: Days,
    pub limit: usize,
    pub cursor: Option<Cursor>,
}

/// The longest window of a day-paged summary. A page reads only its own days
/// ([`page_dates`]), but `total_count` and the day lookup span the window.
pub(crate) const MAX_DAYS: i64 = 366;

pub(crate) fn day_paging(mut params: Params, max_limit: i64) -> ApiResult<DayPaging> {
    let mut window = params.window("start_date", "end_date", true);
    if let Some((start, end)) = window
        && end - start > Duration::days(MAX_DAYS)
    {
        let msg = format!("Value error, the window may span at most {MAX_DAYS} days");
        let input = serde_json::json!(params.raw("end_date"));
        params.push(FieldError::new(Params::loc("end_date"), "value_error", msg, input));
        window = None;
    }
    let limit = params.limit(50, max_limit);
    let raw = params.string("cursor");
    params.finish()?;
    let window = window.ok_or_else(|| ApiError::bad_request("Invalid date window"))?;
    let cursor = raw.as_deref().map(Cursor::decode).transpose()?;
    Ok(DayPaging { days: Days::from_window(window), limit: limit as usize, cursor })
}

impl DayPaging {
    pub(crate) fn backward(&self) -> bool {
        self.cursor.as_ref().is_some_and(|c| c.backward)
    }

    /// The days of the window past the cursor's day (before it, going back).
    pub(crate) fn rest(&self) -> Option<(NaiveDate, NaiveDate)> {
        let (mut first, mut last) = (self.days.first, self.days.last);
        if let Some(c) = &self.cursor {
            let at = c.at.date_naive();
            if c.backward {
                last = last.min(at.pred_opt()?);
            } else {
                first = first.max(at.succ_opt()?);
            }
        }
        (first <= last).then_some((first, last))
    }
}

/// Where a summary's days are looked up: local days `[first, last]` and the session ends that
/// can fall on them.
pub(crate) fn scope(
    first: NaiveDate,
    last: NaiveDate,
    sources: &(Vec<Uuid>, Vec<i32>),
) -> schema::summaries::DayScope<'_> {
    let (ends_from, ends_to) = rules::sleep::read_window(first, last);
    schema::summaries::DayScope { first, last, ends_from, ends_to, sources }
}

/// The days one page lists, in date order: the first `limit + 1` days with data past the
/// cursor (the extra one tells whether there is more). A summary reads only these days, so a
/// page costs what `limit` says whatever the window.
pub(crate) async fn page_dates(
    state: &AppState,
    user_id: UserId,
    which: DataDays<'_>,
    paging: &DayPaging,
    ranking: &Ranking,
) -> ApiResult<Vec<NaiveDate>> {
    let Some((first, last)) = paging.rest() else { return Ok(Vec::new()) };
    let sources = ranking.arrays();
    let n = paging.limit as i64 + 1;
    let mut dates = schema::summaries::data_days(
        &state.db,
        user_id,
        which,
        &scope(first, last, &sources),
        paging.backward(),
        n,
    )
    .await?;
    dates.sort_unstable();
    Ok(dates)
}

/// How many days with data the whole window holds (`total_count`).
pub(crate) async fn count_dates(
    state: &AppState,
    user_id: UserId,
    which: DataDays<'_>,
    days: &Days,
    ranking: &Ranking,
) -> ApiResult<i64> {
    let sources = ranking.arrays();
    let scope = scope(days.first, days.last, &sources);
    Ok(schema::summaries::count_data_days(&state.db, user_id, which, &scope).await?)
}

/// The first and last of a page's dates (sorted), if any.
pub(crate) fn span(dates: &[NaiveDate]) -> Option<(NaiveDate, NaiveDate)> {
    Some((*dates.first()?, *dates.last()?))
}

/// Pages per-day items (in date order) from the cursor on.
pub(crate) fn page_days<T>(
    items: BTreeMap<NaiveDate, T>,
    paging: &DayPaging,
) -> (Vec<(NaiveDate, T)>, CursorPagination) {
    let after = paging.cursor.as_ref().map(|c| c.at.date_naive());
    let backward = paging.cursor.as_ref().is_some_and(|c| c.backward);
    let rows: Vec<(NaiveDate, T)> = if backward {
        items
            .into_iter()
            .rev()
            .filter(|(d, _)| after.is_none_or(|a| *d < a))
            .take(paging.limit + 1)
            .collect()
    } else {
        items
            .into_iter()
            .filter(|(d, _)| after.is_none_or(|a| *d > a))
            .take(paging.limit + 1)
            .collect()
    };
    paginate(rows, paging.limit, paging.cursor.as_ref(), |(d, _)| (midnight(*d), "day".into()))
}

/// The resolved nights of each wake-up day in `[first, last]`.
pub(crate) async fn nights(
    state: &AppState,
    user_id: UserId,
    first: NaiveDate,
    last: NaiveDate,
    ranking: &Ranking,
) -> ApiResult<BTreeMap<NaiveDate, Vec<schema::sessions::Sleep>>> {
    let (from, to) = rules::sleep::read_window(first, last);
    let sessions =
        schema::summaries::sleep_ending(&state.db, user_id, from, to, &ranking.arrays()).await?;
    Ok(rules::sleep::nights(sessions, Some((first, last))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|d| d.with_timezone(&Utc)).unwrap_or_default()
    }

    #[test]
    fn day_windows() {
        let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap_or_default();
        let w = Days::from_window((at("2026-03-01T00:00:00Z"), at("2026-03-08T00:00:00Z")));
        assert_eq!((w.first, w.last), (d("2026-03-01"), d("2026-03-07")));
        let w = Days::from_window((at("2026-03-01T00:00:00Z"), at("2026-03-08T10:00:00Z")));
        assert_eq!(w.last, d("2026-03-08"));
    }
}
