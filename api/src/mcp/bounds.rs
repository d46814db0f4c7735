//! How much one tool answer may hold, and the resolution a timeseries is read at: an assistant's
//! context is small, so an answer is a few hundred points or days, never a 100 k-row dump, and a
//! question too large for one answer is refused with how to narrow it.

use chrono::{DateTime, Utc};

use super::caller::ToolError;
use crate::dates;
use crate::routes::timeseries::RESOLUTIONS;

/// Days of daily summaries in one answer.
pub(crate) const SUMMARY_DAYS: i64 = 92;
/// The longest window of sessions or scores.
pub(crate) const LIST_DAYS: i64 = 366;
/// Items of a list (workouts, sleep sessions, scores, users) in one answer.
pub(crate) const LIST_ITEMS: usize = 200;
/// Timeseries points: the default, and the most one may ask for.
pub(crate) const POINTS_DEFAULT: u32 = 500;
pub(crate) const POINTS_MAX: u32 = 2000;
/// Series types in one timeseries answer.
pub(crate) const TYPES_MAX: usize = 8;

/// A read window `[start, end)` as the API takes it (a date-only end includes its day).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

impl Window {
    /// `start` and `end` as the API reads them, no longer than `max_days`.
    pub(crate) fn parse(start: &str, end: &str, max_days: i64) -> Result<Window, ToolError> {
        let at = |name: &str, v: &str| {
            dates::parse(v).ok_or_else(|| {
                ToolError::Invalid(format!(
                    "{name} '{v}' is not a date (YYYY-MM-DD) or an ISO 8601 time"
                ))
            })
        };
        let start = at("the start", start)?.at;
        let end = dates::end_bound(at("the end", end)?);
        if end <= start {
            return Err(ToolError::Invalid("the end must come after the start".into()));
        }
        let days = (end - start).num_seconds() as f64 / 86_400.0;
        if days > max_days as f64 {
            return Err(ToolError::TooLarge(format!(
                "The window is {days:.0} days; one answer covers at most {max_days} days. Ask \
                 for a shorter window (e.g. a month at a time) and combine the answers."
            )));
        }
        Ok(Window { start, end })
    }

    pub(crate) fn seconds(&self) -> i64 {
        (self.end - self.start).num_seconds()
    }
}

/// The resolution a timeseries is read at: the one asked for, or (`auto`, none) the finest
/// whose buckets of `types` series over the window fit in `max_points`. A window whose days
/// alone do not fit is refused with how to narrow it.
pub(crate) fn resolution(
    asked: Option<&str>,
    window: Window,
    types: usize,
    max_points: u32,
) -> Result<&'static str, ToolError> {
    match asked.map(str::trim).filter(|a| !a.is_empty() && *a != "auto") {
        Some(name) => RESOLUTIONS.iter().map(|(n, _)| *n).find(|n| *n == name).ok_or_else(|| {
            ToolError::Invalid(format!(
                "resolution '{name}' is none of auto, raw, 1min, 5min, 15min, 1hour, 1day"
            ))
        }),
        None => {
            let fits = |bucket: i64| {
                let buckets = (window.seconds() + bucket - 1) / bucket;
                buckets.saturating_mul(types.max(1) as i64) <= i64::from(max_points)
            };
            RESOLUTIONS
                .iter()
                .filter_map(|(n, b)| b.map(|b| (*n, b)))
                .find(|(_, b)| fits(*b))
                .map(|(n, _)| n)
                .ok_or_else(|| {
                    ToolError::TooLarge(format!(
                        "{types} series over {} days at one point a day is more than \
                         max_points ({max_points}): ask for fewer types or a shorter window",
                        window.seconds() / 86_400
                    ))
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(start: &str, end: &str) -> Window {
        Window::parse(start, end, LIST_DAYS).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn windows_are_read_as_the_api_reads_them_and_bounded() {
        let w = window("2026-03-01", "2026-03-01");
        assert_eq!(w.seconds(), 86_400, "a date-only end includes its day");
        let w = window("2026-03-01T06:00:00+01:00", "2026-03-01T07:00:00+01:00");
        assert_eq!(w.seconds(), 3600);
        assert!(matches!(
            Window::parse("2026-01-01", "2026-12-31", SUMMARY_DAYS),
            Err(ToolError::TooLarge(_))
        ));
        assert!(Window::parse("2026-01-01", "2026-04-01", SUMMARY_DAYS).is_ok());
        assert!(matches!(Window::parse("yesterday", "2026-01-01", 9), Err(ToolError::Invalid(_))));
        assert!(matches!(
            Window::parse("2026-02-01", "2026-01-01", 90),
            Err(ToolError::Invalid(_))
        ));
    }

    #[test]
    fn auto_takes_the_finest_resolution_that_fits() {
        let hour = window("2026-03-01T06:00:00Z", "2026-03-01T07:00:00Z");
        assert_eq!(resolution(None, hour, 1, 500).ok(), Some("1min"));
        assert_eq!(resolution(Some("auto"), hour, 10, 500).ok(), Some("5min"));
        let day = window("2026-03-01", "2026-03-01");
        assert_eq!(resolution(None, day, 1, 500).ok(), Some("5min"));
        assert_eq!(resolution(None, day, 2, 100).ok(), Some("1hour"));
        let week = window("2026-03-01", "2026-03-07");
        assert_eq!(resolution(None, week, 1, 500).ok(), Some("1hour"));
        let year = window("2026-01-01", "2026-12-31");
        assert_eq!(resolution(None, year, 1, 500).ok(), Some("1day"));
        assert!(matches!(resolution(None, year, 2, 500), Err(ToolError::TooLarge(_))));
        // Asked for, taken as asked (the answer is cut at max_points instead).
        assert_eq!(resolution(Some("raw"), year, 2, 500).ok(), Some("raw"));
        assert!(matches!(resolution(Some("2min"), day, 1, 500), Err(ToolError::Invalid(_))));
    }
}
