//! Random secrets (API keys, refresh tokens, generated passwords and signing keys), and how
//! they are compared.

/// `n` random bytes as lowercase hex, from the thread's CSPRNG.
pub(crate) fn random_hex(n: usize) -> String {
    let bytes: Vec<u8> = (0..n).map(|_| rand::random::<u8>()).collect();
    hex::encode(bytes)
}

/// Whether two secrets are equal, in time that does not depend on where they differ, so a
/// secret cannot be guessed byte by byte from timings.
pub(crate) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Characters shown of an API key in listings: `sk-` and 8 hex digits.
pub(crate) const KEY_PREFIX_LEN: usize = 11;

/// A new API key (`sk-` + 32 hex digits, 128 bits) and the prefix kept in clear.
pub(crate) fn new_api_key() -> (String, String) {
    let key = format!("sk-{}", random_hex(16));
    let prefix = key[..KEY_PREFIX_LEN].to_string();
    (key, prefix)
}

/// A new SDK refresh token (`rt-` + 32 hex digits).
pub(crate) fn new_refresh_token() -> String {
    format!("rt-{}", random_hex(16))
}

/// A new connect-link token: 24 random bytes as hex (192 bits), the last part of the link's URL.
pub(crate) fn new_connect_token() -> String {
    random_hex(24)
}

/// The characters of invitation codes: capitals and digits without `0 O 1 I`, which read
/// alike. 32 of them, so a random byte picks one without bias.
pub(crate) const INVITATION_ALPHABET: &[u8; 32] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/// A new invitation code: 8 characters of [`INVITATION_ALPHABET`] (40 bits; guessing is
/// bounded by the redeem throttle, by expiry and by single use).
pub(crate) fn new_invitation_code() -> String {
    (0..8)
        .map(|_| char::from(INVITATION_ALPHABET[usize::from(rand::random::<u8>() % 32)]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_their_shape() {
        let (key, prefix) = new_api_key();
        assert_eq!(key.len(), 35);
        assert!(key.starts_with(&prefix) && prefix.starts_with("sk-"));
        assert_ne!(new_api_key().0, key);
        assert!(new_refresh_token().starts_with("rt-"));
        let code = new_invitation_code();
        assert_eq!(code.len(), 8);
        assert!(code.bytes().all(|b| INVITATION_ALPHABET.contains(&b)), "{code}");
        assert!(!INVITATION_ALPHABET.iter().any(|b| b"01IO".contains(b)));
        assert_ne!(new_invitation_code(), code);
    }
}
