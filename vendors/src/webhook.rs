//! What vendors' webhook schemes share: constant-time comparison and HMAC signatures.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Whether two secrets are equal, in time that does not depend on where they differ.
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A subscription handshake: when `given` is the token we gave the vendor, the answer that
/// echoes its `challenge` under `key`.
pub(crate) fn echo(
    expected: Option<&str>,
    given: Option<String>,
    challenge: Option<String>,
    key: &str,
) -> crate::Handshake {
    match (expected, given, challenge) {
        (Some(expected), Some(given), Some(challenge))
            if same(expected.as_bytes(), given.as_bytes()) =>
        {
            crate::Handshake::Json(serde_json::json!({ key: challenge }))
        }
        _ => crate::Handshake::Refused,
    }
}

/// Whether a signed notification's timestamp (Unix seconds or milliseconds, or an RFC 3339
/// date-time) is within ten minutes of now: a captured request cannot be replayed later. A
/// timestamp that reads as neither is not recent: the signature alone would let it be
/// replayed for ever.
pub(crate) fn recent(timestamp: &str) -> bool {
    let timestamp = timestamp.trim();
    let seconds = match timestamp.parse::<i64>() {
        Ok(n) if n > 100_000_000_000 => n / 1000,
        Ok(n) => n,
        Err(_) => match chrono::DateTime::parse_from_rfc3339(timestamp) {
            Ok(at) => at.timestamp(),
            Err(_) => return false,
        },
    };
    chrono::Utc::now().timestamp().abs_diff(seconds) <= 600
}

/// How a vendor writes its signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// Hex, in either case.
    Hex,
    Base64,
}

/// A notification signed as Oura and WHOOP sign theirs: the `signature` header is the
/// HMAC-SHA256 with `key` over the `timestamp` header's value then the raw body, and the
/// timestamp is recent.
pub(crate) fn timestamped(
    header: &dyn Fn(&str) -> Option<String>,
    (signature, timestamp): (&str, &str),
    encoding: Encoding,
    key: &str,
    body: &[u8],
) -> bool {
    let (Some(signature), Some(timestamp)) = (header(signature), header(timestamp)) else {
        return false;
    };
    recent(&timestamp) && hmac_sha256(key, &[timestamp.as_bytes(), body], &signature, encoding)
}

/// Whether `signature` is the HMAC-SHA256 with `key` over the `parts` in order.
pub(crate) fn hmac_sha256(key: &str, parts: &[&[u8]], signature: &str, encoding: Encoding) -> bool {
    decode(signature, encoding).is_some_and(|e| verify::<Hmac<Sha256>>(key, parts, &e))
}

/// Whether `signature` is the HMAC-SHA1 with `key` over the `parts` in order (Fitbit's).
pub(crate) fn hmac_sha1(key: &str, parts: &[&[u8]], signature: &str, encoding: Encoding) -> bool {
    decode(signature, encoding).is_some_and(|e| verify::<Hmac<sha1::Sha1>>(key, parts, &e))
}

fn decode(signature: &str, encoding: Encoding) -> Option<Vec<u8>> {
    use base64::Engine;
    match encoding {
        Encoding::Hex => hex::decode(signature.trim().to_ascii_lowercase()).ok(),
        Encoding::Base64 => base64::engine::general_purpose::STANDARD.decode(signature.trim()).ok(),
    }
}

fn verify<M: Mac + hmac::digest::KeyInit>(key: &str, parts: &[&[u8]], expected: &[u8]) -> bool {
    let Ok(mut mac) = <M as hmac::digest::KeyInit>::new_from_slice(key.as_bytes()) else {
        return false;
    };
    for part in parts {
        mac.update(part);
    }
    mac.verify_slice(expected).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_verify_in_either_case_and_not_when_changed() {
        // HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog"), RFC 4231 style.
        let sig = "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8";
        let msg: &[&[u8]] = &[b"The quick brown fox ", b"jumps over the lazy dog"];
        assert!(hmac_sha256("key", msg, sig, Encoding::Hex));
        assert!(hmac_sha256("key", msg, &sig.to_ascii_uppercase(), Encoding::Hex));
        assert!(!hmac_sha256("other", msg, sig, Encoding::Hex));
        assert!(!hmac_sha256("key", &[b"The quick brown fox"], sig, Encoding::Hex));
        assert!(!hmac_sha256("key", msg, "zz", Encoding::Hex));
        assert!(same(b"abc", b"abc") && !same(b"abc", b"abd") && !same(b"abc", b"ab"));
        let now = chrono::Utc::now().timestamp();
        assert!(recent(&now.to_string()) && recent(&(now * 1000).to_string()));
        assert!(!recent(&(now - 3600).to_string()) && !recent(&((now - 3600) * 1000).to_string()));
        let iso = |at: chrono::DateTime<chrono::Utc>| at.to_rfc3339();
        assert!(recent(&iso(chrono::Utc::now())), "an RFC 3339 date-time is read too");
        assert!(!recent(&iso(chrono::Utc::now() - chrono::Duration::hours(1))));
        for other in ["2026-03-10T07:30:00Z", "soon", "", "1e12", "NaN"] {
            assert!(!recent(other), "{other:?} is not a recent timestamp");
        }
    }
}
