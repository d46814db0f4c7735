//! Standard Webhooks signatures: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed
//! with the base64-decoded secret after its `whsec_` prefix. During a rotation the old secret
//! signs alongside the new one, space-separated in one header, so a receiver holding either
//! verifies.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SecretError {
    #[error("a webhook secret starts with whsec_")]
    Prefix,
    #[error("a webhook secret is base64 after whsec_")]
    Base64,
    #[error("a webhook secret holds at least 24 bytes")]
    TooShort,
}

/// The key bytes of a `whsec_…` secret.
pub fn key(secret: &str) -> Result<Vec<u8>, SecretError> {
    let b64 = secret.strip_prefix("whsec_").ok_or(SecretError::Prefix)?;
    let bytes = STANDARD.decode(b64).map_err(|_| SecretError::Base64)?;
    if bytes.len() < 24 {
        return Err(SecretError::TooShort);
    }
    Ok(bytes)
}

/// One `v1,<base64>` signature.
pub fn signature(key: &[u8], msg_id: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC takes keys of any length: `new_from_slice` cannot fail for it.
    let mut mac = match Hmac::<Sha256>::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => return String::new(),
    };
    mac.update(msg_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The `webhook-signature` header value: one signature per secret, space-separated.
pub fn header(
    secrets: &[&str],
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, SecretError> {
    let sigs = secrets
        .iter()
        .map(|s| key(s).map(|k| signature(&k, msg_id, timestamp, body)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(sigs.join(" "))
}

/// A new secret: `whsec_` + base64 of 32 random bytes.
pub fn new_secret() -> String {
    let bytes: [u8; 32] = rand::random();
    format!("whsec_{}", STANDARD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_webhooks_test_vector() {
        // From the Standard Webhooks specification's reference libraries.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        let sig = header(&[secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body);
        assert_eq!(sig, Ok("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=".to_string()));
    }

    #[test]
    fn rotation_signs_with_both_and_bad_secrets_are_refused() {
        let (a, b) = (new_secret(), new_secret());
        let both = header(&[&a, &b], "msg_1", 1, b"{}").unwrap_or_default();
        let parts: Vec<&str> = both.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert!(parts.iter().all(|p| p.starts_with("v1,")));
        assert_ne!(parts[0], parts[1]);
        assert_eq!(key("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), Err(SecretError::Prefix));
        assert_eq!(key("whsec_not*base64"), Err(SecretError::Base64));
        assert_eq!(key("whsec_c2hvcnQ="), Err(SecretError::TooShort));
        assert_eq!(key(&new_secret()).map(|k| k.len()), Ok(32));
    }
}
