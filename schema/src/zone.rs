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
}
