//! Timestamps and zone offsets as clients send them. The SDKs write `2026-03-14T18:46:45Z`
//! (whole seconds, `Z`); a fast path parses exactly that, everything else goes through RFC 3339.

use chrono::{DateTime, FixedOffset, Utc};

/// Parses an RFC 3339 timestamp (`Z` or an offset, optional fraction, `T` or a space).
pub(crate) fn parse_timestamp(s: &str) -> Option<DateTime<Utc>> {
    let b = s.as_bytes();
    if b.len() == 20
        && b[19] == b'Z'
        && let Some(t) = fast_utc(b)
    {
        return Some(t);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    // `2024-01-01 08:00:00 +0100` (Apple Health exports) and `…T08:00:00+0100`.
    for fmt in ["%Y-%m-%d %H:%M:%S %z", "%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%d %H:%M:%S%.f%:z"] {
        if let Ok(t) = DateTime::<FixedOffset>::parse_from_str(s, fmt) {
            return Some(t.with_timezone(&Utc));
        }
    }
    None
}

/// An Apple Health export timestamp, `2024-01-01 08:00:00 +0100`: the instant and its offset
/// in minutes. A fast path for exactly that layout; anything else goes through `parse_timestamp`.
pub(crate) fn parse_export_timestamp(s: &[u8]) -> Option<(DateTime<Utc>, Option<i16>)> {
    if s.len() == 25 && s[10] == b' ' && s[19] == b' ' && (s[20] == b'+' || s[20] == b'-') {
        let mut utc_like = [0u8; 20];
        utc_like[..10].copy_from_slice(&s[..10]);
        utc_like[10] = b'T';
        utc_like[11..19].copy_from_slice(&s[11..19]);
        utc_like[19] = b'Z';
        let local = fast_utc(&utc_like)?;
        let (h, m) = (digits(&s[21..23])?, digits(&s[23..25])?);
        let minutes = i64::from(h * 60 + m);
        let minutes = if s[20] == b'-' { -minutes } else { minutes };
        if minutes.abs() > 18 * 60 {
            return None;
        }
        return Some((local - chrono::Duration::minutes(minutes), Some(minutes as i16)));
    }
    let text = std::str::from_utf8(s).ok()?;
    parse_timestamp(text).map(|t| (t, offset_of_timestamp(text)))
}

/// The offset of a timestamp string, in minutes, when it carries one other than `Z`.
pub(crate) fn offset_of_timestamp(s: &str) -> Option<i16> {
    let b = s.as_bytes();
    if b.last() == Some(&b'Z') {
        return None;
    }
    DateTime::parse_from_rfc3339(s)
        .or_else(|_| DateTime::<FixedOffset>::parse_from_str(s, "%Y-%m-%d %H:%M:%S %z"))
        .ok()
        .and_then(|t| i16::try_from(t.offset().local_minus_utc() / 60).ok())
}

fn digits(b: &[u8]) -> Option<u32> {
    b.iter().try_fold(0u32, |acc, c| c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0')))
}

/// `YYYY-MM-DDTHH:MM:SSZ`.
fn fast_utc(b: &[u8]) -> Option<DateTime<Utc>> {
    if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (digits(&b[0..4])?, digits(&b[5..7])?, digits(&b[8..10])?);
    let (h, mi, s) = (digits(&b[11..13])?, digits(&b[14..16])?, digits(&b[17..19])?);
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 59
    {
        return None;
    }
    let days = days_from_civil(y as i64, mo, d);
    DateTime::from_timestamp(days * 86_400 + i64::from(h * 3600 + mi * 60 + s), 0)
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        2 if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A zone offset in none of the accepted forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InvalidOffset;

/// Parses a zone offset: `Z`, `+HH:MM`, `-HH:MM`, `+HH:MM:SS` (Java writes seconds when it
/// has them), `+HHMM`, `+HH`. Minutes east of UTC; `Err` for anything else.
pub(crate) fn parse_offset(s: &str) -> Result<i16, InvalidOffset> {
    let s = s.trim();
    if s == "Z" || s == "z" {
        return Ok(0);
    }
    let (sign, rest) = match s.as_bytes().first() {
        Some(b'+') => (1i32, &s[1..]),
        Some(b'-') => (-1i32, &s[1..]),
        _ => return Err(InvalidOffset),
    };
    let parts: Vec<&str> = if rest.contains(':') {
        rest.split(':').collect()
    } else if rest.len() == 4 {
        vec![&rest[..2], &rest[2..]]
    } else {
        vec![rest]
    };
    let num = |p: &str| -> Result<i32, InvalidOffset> {
        if p.len() == 2 && p.bytes().all(|c| c.is_ascii_digit()) {
            p.parse().map_err(|_| InvalidOffset)
        } else {
            Err(InvalidOffset)
        }
    };
    let (h, m, sec) = match parts.as_slice() {
        [h] => (num(h)?, 0, 0),
        [h, m] => (num(h)?, num(m)?, 0),
        [h, m, s] => (num(h)?, num(m)?, num(s)?),
        _ => return Err(InvalidOffset),
    };
    if h > 18 || m > 59 || sec > 59 {
        return Err(InvalidOffset);
    }
    let minutes = sign * (h * 60 + m + (sec + 30) / 60);
    i16::try_from(minutes).map_err(|_| InvalidOffset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|d| d.with_timezone(&Utc)).unwrap_or_default()
    }

    #[test]
    fn fast_path_agrees_with_chrono() {
        for s in [
            "2026-03-14T18:46:45Z",
            "2024-02-29T00:00:00Z",
            "1970-01-01T00:00:00Z",
            "2099-12-31T23:59:59Z",
        ] {
            assert_eq!(parse_timestamp(s), Some(utc(s)), "{s}");
        }
        for bad in [
            "2023-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-03-14T24:00:00Z",
            "2026-03-14X18:46:45Z",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }

    #[test]
    fn other_shapes() {
        assert_eq!(parse_timestamp("2026-03-14T19:46:45+01:00"), Some(utc("2026-03-14T18:46:45Z")));
        assert_eq!(
            parse_timestamp("2026-03-14T18:46:45.250Z"),
            Some(utc("2026-03-14T18:46:45.250Z"))
        );
        assert_eq!(parse_timestamp("2024-01-01 08:00:00 +0100"), Some(utc("2024-01-01T07:00:00Z")));
        assert_eq!(parse_timestamp("yesterday"), None);
        assert_eq!(offset_of_timestamp("2024-01-01 08:00:00 +0100"), Some(60));
        assert_eq!(offset_of_timestamp("2026-03-14T19:46:45-03:30"), Some(-210));
        assert_eq!(offset_of_timestamp("2026-03-14T18:46:45Z"), None);
    }

    #[test]
    fn export_timestamps() {
        assert_eq!(
            parse_export_timestamp(b"2024-01-01 08:00:00 +0100"),
            Some((utc("2024-01-01T07:00:00Z"), Some(60)))
        );
        assert_eq!(
            parse_export_timestamp(b"2024-06-30 23:30:00 -0430"),
            Some((utc("2024-07-01T04:00:00Z"), Some(-270)))
        );
        assert_eq!(
            parse_export_timestamp(b"2024-01-01T08:00:00Z"),
            Some((utc("2024-01-01T08:00:00Z"), None))
        );
        assert_eq!(parse_export_timestamp(b"2024-02-30 08:00:00 +0100"), None);
        assert_eq!(parse_export_timestamp(b"garbage"), None);
    }

    #[test]
    fn offsets() {
        assert_eq!(parse_offset("Z"), Ok(0));
        assert_eq!(parse_offset("+00:00"), Ok(0));
        assert_eq!(parse_offset("+01:00"), Ok(60));
        assert_eq!(parse_offset("-03:30"), Ok(-210));
        assert_eq!(parse_offset("+05:45:30"), Ok(346));
        assert_eq!(parse_offset("+0530"), Ok(330));
        assert_eq!(parse_offset("+09"), Ok(540));
        for bad in ["", "01:00", "+1:00", "+25:00", "UTC", "+01:60"] {
            assert_eq!(parse_offset(bad), Err(InvalidOffset), "{bad}");
        }
    }
}
