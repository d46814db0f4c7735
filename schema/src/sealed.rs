//! Secrets at rest: the token-signing key, webhook signing secrets and vendor OAuth tokens
//! are stored sealed with XChaCha20-Poly1305 under the
//! deployment's master key (`MASTER_KEY`), never in clear.
//!
//! A sealed value reads `sealed:v1:<key id>:<base64 of nonce and ciphertext>`. The key id (the
//! first 8 hex digits of the key's SHA-256) says which key sealed it, so a key can be rotated:
//! start with the new key as `MASTER_KEY` and the old one as `MASTER_KEY_PREVIOUS`; values
//! sealed under the old key still open and are sealed again under the new one at start-up
//! ([`crate::reseal::reseal_all`]). Each value is bound to where it is stored (its `context`, the associated
//! data), so a sealed secret copied to another row or setting does not open.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chacha20poly1305::aead::{Aead, AeadCore, OsRng, Payload};
use chacha20poly1305::{KeyInit, XChaCha20Poly1305, XNonce};
use sha2::{Digest, Sha256};

const PREFIX: &str = "sealed:v1:";
const NONCE_LEN: usize = 24;

/// Why a master key is refused.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "{0} must be 32 random bytes written as 64 hex digits or as base64 \
         (make one with `openssl rand -hex 32`)"
    )]
    Malformed(&'static str),
    #[error("MASTER_KEY_PREVIOUS is the same key as MASTER_KEY")]
    SameKey,
}

/// Why a stored value does not open.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("the value is stored in clear, not sealed")]
    Clear,
    #[error(
        "the value was sealed under key {0}, which is neither MASTER_KEY nor MASTER_KEY_PREVIOUS"
    )]
    UnknownKey(String),
    #[error("the sealed value is corrupt or belongs elsewhere")]
    Corrupt,
}

struct Key {
    id: String,
    cipher: XChaCha20Poly1305,
}

impl Key {
    fn parse(raw: &str, name: &'static str) -> Result<Key, KeyError> {
        let raw = raw.trim();
        let bytes = if raw.len() == 64 && raw.bytes().all(|b| b.is_ascii_hexdigit()) {
            hex::decode(raw).map_err(|_| KeyError::Malformed(name))?
        } else {
            STANDARD
                .decode(raw)
                .or_else(|_| URL_SAFE_NO_PAD.decode(raw.trim_end_matches('=')))
                .map_err(|_| KeyError::Malformed(name))?
        };
        if bytes.len() != 32 {
            return Err(KeyError::Malformed(name));
        }
        let cipher =
            XChaCha20Poly1305::new_from_slice(&bytes).map_err(|_| KeyError::Malformed(name))?;
        let id = hex::encode(&Sha256::digest(&bytes)[..4]);
        Ok(Key { id, cipher })
    }
}

/// The master key, and the one before it while a rotation is under way.
pub struct MasterKeys {
    current: Key,
    previous: Option<Key>,
}

impl std::fmt::Debug for MasterKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let previous = self.previous.as_ref().map(|k| &k.id);
        write!(f, "MasterKeys {{ current: {}, previous: {previous:?} }}", self.current.id)
    }
}

impl MasterKeys {
    pub fn new(current: &str, previous: Option<&str>) -> Result<MasterKeys, KeyError> {
        let current = Key::parse(current, "MASTER_KEY")?;
        let previous = previous
            .filter(|p| !p.trim().is_empty())
            .map(|p| Key::parse(p, "MASTER_KEY_PREVIOUS"))
            .transpose()?;
        if previous.as_ref().is_some_and(|p| p.id == current.id) {
            return Err(KeyError::SameKey);
        }
        Ok(MasterKeys { current, previous })
    }

    /// The id of the key new values are sealed under.
    pub fn current_id(&self) -> &str {
        &self.current.id
    }

    /// Seals `plain` for the place named by `context` under the current key.
    pub fn seal(&self, context: &str, plain: &str) -> String {
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let payload = Payload { msg: plain.as_bytes(), aad: context.as_bytes() };
        // Encryption fails only past 2^38 bytes; a secret is a few dozen.
        let sealed = self.current.cipher.encrypt(&nonce, payload).unwrap_or_default();
        let mut blob = nonce.to_vec();
        blob.extend_from_slice(&sealed);
        format!("{PREFIX}{}:{}", self.current.id, URL_SAFE_NO_PAD.encode(blob))
    }

    /// Opens a value sealed for `context` under the current or the previous key.
    pub fn open(&self, context: &str, stored: &str) -> Result<String, OpenError> {
        let rest = stored.strip_prefix(PREFIX).ok_or(OpenError::Clear)?;
        let (id, blob) = rest.split_once(':').ok_or(OpenError::Corrupt)?;
        let key = [Some(&self.current), self.previous.as_ref()]
            .into_iter()
            .flatten()
            .find(|k| k.id == id)
            .ok_or_else(|| OpenError::UnknownKey(id.to_string()))?;
        let blob = URL_SAFE_NO_PAD.decode(blob).map_err(|_| OpenError::Corrupt)?;
        if blob.len() < NONCE_LEN {
            return Err(OpenError::Corrupt);
        }
        let (nonce, sealed) = blob.split_at(NONCE_LEN);
        let nonce: [u8; NONCE_LEN] = nonce.try_into().map_err(|_| OpenError::Corrupt)?;
        let payload = Payload { msg: sealed, aad: context.as_bytes() };
        let plain =
            key.cipher.decrypt(&XNonce::from(nonce), payload).map_err(|_| OpenError::Corrupt)?;
        String::from_utf8(plain).map_err(|_| OpenError::Corrupt)
    }

    /// Whether a stored value is to be sealed (again): it is in clear, or under an older key.
    pub(crate) fn needs_sealing(&self, stored: &str) -> bool {
        match stored.strip_prefix(PREFIX).and_then(|r| r.split_once(':')) {
            Some((id, _)) => id != self.current.id,
            None => true,
        }
    }

    /// The value sealed under the current key: `stored` itself when it already is, else opened
    /// (or taken as clear) and sealed again.
    pub fn reseal(&self, context: &str, stored: &str) -> Result<String, OpenError> {
        if !self.needs_sealing(stored) {
            return Ok(stored.to_string());
        }
        let plain = match self.open(context, stored) {
            Ok(plain) => plain,
            Err(OpenError::Clear) => stored.to_string(),
            Err(e) => return Err(e),
        };
        Ok(self.seal(context, &plain))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    const B: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";

    fn keys(current: &str, previous: Option<&str>) -> MasterKeys {
        MasterKeys::new(current, previous).expect("valid keys")
    }

    #[test]
    fn sealed_values_open_only_in_their_place_and_never_read_in_clear() {
        let k = keys(A, None);
        let sealed = k.seal("settings:jwt_secret", "s3cret");
        assert!(sealed.starts_with("sealed:v1:") && !sealed.contains("s3cret"));
        assert_ne!(sealed, k.seal("settings:jwt_secret", "s3cret"), "a fresh nonce each time");
        assert_eq!(k.open("settings:jwt_secret", &sealed), Ok("s3cret".into()));
        assert_eq!(k.open("webhook_endpoint:1", &sealed), Err(OpenError::Corrupt));
        assert_eq!(k.open("settings:jwt_secret", "s3cret"), Err(OpenError::Clear));
        let mut tampered = sealed.clone();
        tampered.pop();
        tampered.push(if sealed.ends_with('A') { 'B' } else { 'A' });
        assert_eq!(k.open("settings:jwt_secret", &tampered), Err(OpenError::Corrupt));
    }

    #[test]
    fn a_rotation_opens_old_values_and_reseals_them_under_the_new_key() {
        let old = keys(A, None);
        let sealed = old.seal("c", "v");
        let rotated = keys(B, Some(A));
        assert!(rotated.needs_sealing(&sealed));
        assert_eq!(rotated.open("c", &sealed), Ok("v".into()));
        let resealed = rotated.reseal("c", &sealed).expect("reseal");
        assert!(!rotated.needs_sealing(&resealed));
        assert_eq!(keys(B, None).open("c", &resealed), Ok("v".into()));
        // Without the old key its values are named, not guessed at.
        assert!(matches!(keys(B, None).open("c", &sealed), Err(OpenError::UnknownKey(_))));
        // A clear legacy value is sealed as it is.
        let from_clear = rotated.reseal("c", "legacy").expect("seal clear");
        assert_eq!(rotated.open("c", &from_clear), Ok("legacy".into()));
    }

    #[test]
    fn malformed_and_repeated_keys_are_refused() {
        assert!(MasterKeys::new("short", None).is_err());
        assert!(MasterKeys::new(&A[..62], None).is_err());
        assert!(matches!(MasterKeys::new(A, Some(A)), Err(KeyError::SameKey)));
        assert!(MasterKeys::new(A, Some("")).is_ok());
    }
}
