//! Zone offsets, stored as minutes east of UTC and shown as `+HH:MM`.

/// `+01:00`, `-03:30`, `+00:00`.
pub fn format(minutes: i16) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.unsigned_abs();
    format!("{sign}{:02}:{:02}", m / 60, m % 60)
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
}
