//! Zone offsets, stored as minutes east of UTC and shown as `+HH:MM`.

/// `+01:00`, `-03:30`, `+00:00`.
pub fn format(minutes: i16) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.unsigned_abs();
    format!("{sign}{:02}:{:02}", m / 60, m % 60)
}

/// An instant in local time with its offset (`2026-03-14T09:00:00+02:00`); UTC (`Z`) when the
/// offset is unknown.
pub fn local_time(at: chrono::DateTime<chrono::Utc>, minutes: Option<i16>) -> String {
    match minutes.and_then(|m| chrono::FixedOffset::east_opt(i32::from(m) * 60)) {
        Some(offset) => {
            at.with_timezone(&offset).to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false)
        }
        None => at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
    }
}

/// The calendar day an instant falls on at an offset of `minutes` east of UTC (UTC when
/// unknown). SQL's `local_day` function (migration V10) is the same rule for the statements
/// that read and recount stored samples; `tests/e2e` holds the two together.
pub fn local_day(at: chrono::DateTime<chrono::Utc>, minutes: Option<i16>) -> chrono::NaiveDate {
    let shift = chrono::TimeDelta::minutes(i64::from(minutes.unwrap_or(0)));
    at.naive_utc().checked_add_signed(shift).unwrap_or_else(|| at.naive_utc()).date()
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats() {
        assert_eq!(super::format(60), "+01:00");
        assert_eq!(super::format(-210), "-03:30");
        assert_eq!(super::format(0), "+00:00");
        assert_eq!(super::format(345), "+05:45");
    }

    #[test]
    fn local_times() {
        let at = chrono::DateTime::from_timestamp(1_773_478_800, 0).unwrap_or_default();
        assert_eq!(super::local_time(at, Some(120)), "2026-03-14T11:00:00+02:00");
        assert_eq!(super::local_time(at, None), "2026-03-14T09:00:00Z");
    }

    #[test]
    fn local_days() {
        // 2026-03-14T23:30:00Z
        let at = chrono::DateTime::from_timestamp(1_773_531_000, 0).unwrap_or_default();
        let day = |m| super::local_day(at, m).to_string();
        assert_eq!(day(None), "2026-03-14");
        assert_eq!(day(Some(30)), "2026-03-15");
        assert_eq!(day(Some(29)), "2026-03-14");
        assert_eq!(day(Some(-600)), "2026-03-14");
    }
}
