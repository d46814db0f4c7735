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
) -> Option<serde_json::Value> {
    let (expected, given, challenge) = (expected?, given?, challenge?);
    same(expected.as_bytes(), given.as_bytes()).then(|| serde_json::json!({ key: challenge }))
}

/// Whether a signed notification's timestamp (Unix seconds or milliseconds) is within ten
/// minutes of now: a captured request cannot be replayed later. A timestamp in another form
/// is left to the signature alone.
pub(crate) fn recent(timestamp: &str) -> bool {
    let Ok(n) = timestamp.trim().parse::<i64>() else { return true };
    let seconds = if n > 100_000_000_000 { n / 1000 } else { n };
    (chrono::Utc::now().timestamp() - seconds).abs() <= 600
}

/// Whether `signature` (hex, any case) is the HMAC-SHA256 with `key` over the `parts` in order.
pub(crate) fn hmac_sha256_hex(key: &str, parts: &[&[u8]], signature: &str) -> bool {
    let Ok(expected) = hex::decode(signature.trim().to_ascii_lowercase()) else { return false };
    verify(key, parts, &expected)
}

/// The same, the signature in base64.
pub(crate) fn hmac_sha256_base64(key: &str, parts: &[&[u8]], signature: &str) -> bool {
    use base64::Engine;
    let Ok(expected) = base64::engine::general_purpose::STANDARD.decode(signature.trim()) else {
        return false;
    };
    verify(key, parts, &expected)
}

fn verify(key: &str, parts: &[&[u8]], expected: &[u8]) -> bool {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key.as_bytes()) else { return false };
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
        assert!(hmac_sha256_hex("key", msg, sig));
        assert!(hmac_sha256_hex("key", msg, &sig.to_ascii_uppercase()));
        assert!(!hmac_sha256_hex("other", msg, sig));
        assert!(!hmac_sha256_hex("key", &[b"The quick brown fox"], sig));
        assert!(!hmac_sha256_hex("key", msg, "zz"));
        assert!(same(b"abc", b"abc") && !same(b"abc", b"abd") && !same(b"abc", b"ab"));
        let now = chrono::Utc::now().timestamp();
        assert!(recent(&now.to_string()) && recent(&(now * 1000).to_string()));
        assert!(!recent(&(now - 3600).to_string()) && !recent(&((now - 3600) * 1000).to_string()));
        assert!(recent("2026-03-10T07:30:00Z"), "another form: the signature decides");
    }
}
