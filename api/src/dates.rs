//! The contract's date and time parameter formats, parsed in one place: ISO 8601 with `Z` or an
//! offset, a date alone (midnight UTC), or Unix seconds.

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, TimeZone, Utc};

/// A parsed date/time parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryTime {
    pub at: DateTime<Utc>,
    /// The caller gave a date without a time (`2024-05-01`): some endpoints extend an end bound
    /// given this way to the end of that day.
    pub date_only: bool,
}

/// The exclusive end of a read window. A date-only end covers that whole day
/// (`end_date=2024-05-01` includes May 1); an end with a time is taken exactly.
pub(crate) fn end_bound(t: QueryTime) -> DateTime<Utc> {
    if t.date_only { t.at + chrono::Duration::days(1) } else { t.at }
}

/// The earliest and the latest instant a parameter may name: health data lies well inside, and
/// arithmetic on the bounds (a date-only end plus a day, local days) never overflows.
pub fn range() -> (DateTime<Utc>, DateTime<Utc>) {
    let at = |y| Utc.with_ymd_and_hms(y, 1, 1, 0, 0, 0).single().unwrap_or_default();
    (at(1900), at(2200))
}

/// The message for a value outside [`range`].
pub(crate) fn out_of_range_message() -> &'static str {
    "Value error, dates must lie between 1900-01-01 and 2199-12-31"
}

/// The message for a value that is none of the accepted formats.
pub fn invalid_message(value: &str) -> String {
    format!("Invalid datetime format: '{value}'. Expected ISO 8601 format or Unix timestamp.")
}

/// Parses a date/time parameter. A naive date-time (no offset) is taken as UTC.
pub fn parse(value: &str) -> Option<QueryTime> {
    let v = value.trim();
    if v.is_empty() {
        return None;
    }
    if let Some(at) = parse_unix(v) {
        return Some(QueryTime { at, date_only: false });
    }
    if let Ok(date) = NaiveDate::parse_from_str(v, "%Y-%m-%d") {
        let at = Utc.from_utc_datetime(&date.and_hms_opt(0, 0, 0)?);
        return Some(QueryTime { at, date_only: true });
    }
    // ISO 8601 allows a space for the `T`; Python's isoformat readers accept both.
    let iso = v.replacen(' ', "T", 1);
    if let Ok(at) = DateTime::parse_from_rfc3339(&iso) {
        return Some(QueryTime { at: at.with_timezone(&Utc), date_only: false });
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%dT%H:%M%z"] {
        if let Ok(at) = DateTime::<FixedOffset>::parse_from_str(&iso, fmt) {
            return Some(QueryTime { at: at.with_timezone(&Utc), date_only: false });
        }
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(&iso, fmt) {
            return Some(QueryTime { at: Utc.from_utc_datetime(&naive), date_only: false });
        }
    }
    None
}

/// Unix seconds, possibly fractional (`1700000000`, `1700000000.5`).
fn parse_unix(v: &str) -> Option<DateTime<Utc>> {
    let digits = v.strip_prefix('-').unwrap_or(v);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let seconds: f64 = v.parse().ok()?;
    if !seconds.is_finite() {
        return None;
    }
    let whole = seconds.floor();
    let nanos = ((seconds - whole) * 1e9).round() as u32;
    DateTime::from_timestamp(whole as i64, nanos.min(999_999_999))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|d| d.with_timezone(&Utc)).unwrap_or_default()
    }

    #[test]
    fn accepts_every_contract_format() {
        let cases = [
            ("2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z", false),
            ("2024-05-01T12:00:00+02:00", "2024-05-01T10:00:00Z", false),
            ("2024-05-01T05:30:00-04:30", "2024-05-01T10:00:00Z", false),
            ("2024-05-01 10:00:00+00:00", "2024-05-01T10:00:00Z", false),
            ("2024-05-01T10:00:00.250Z", "2024-05-01T10:00:00.250Z", false),
            ("2024-05-01T10:00:00", "2024-05-01T10:00:00Z", false),
            ("2024-05-01T12:00+0200", "2024-05-01T10:00:00Z", false),
            ("2024-05-01", "2024-05-01T00:00:00Z", true),
            ("1714557600", "2024-05-01T10:00:00Z", false),
            ("1714557600.5", "2024-05-01T10:00:00.500Z", false),
        ];
        for (input, expected, date_only) in cases {
            let parsed = parse(input);
            assert_eq!(parsed, Some(QueryTime { at: at(expected), date_only }), "{input}");
        }
    }

    #[test]
    fn rejects_garbage() {
        for input in ["", "yesterday", "2024-13-01", "2024-05-01T25:00:00Z", "1e10", "NaN", "12:00"]
        {
            assert_eq!(parse(input), None, "{input}");
        }
    }

    #[test]
    fn far_dates_parse_and_lie_outside_the_range() {
        let (earliest, latest) = range();
        assert_eq!(earliest, at("1900-01-01T00:00:00Z"));
        assert_eq!(latest, at("2200-01-01T00:00:00Z"));
        // chrono reads them; adding a day to the last one used to panic.
        let far = parse("+262142-12-31").map(|t| t.at);
        assert!(far.is_some_and(|t| t >= latest), "{far:?}");
    }

    #[test]
    fn message_names_the_value() {
        assert_eq!(
            invalid_message("x"),
            "Invalid datetime format: 'x'. Expected ISO 8601 format or Unix timestamp."
        );
    }
}
