//! Developer passwords, hashed with Argon2id (PHC string format).

use argon2::Argon2;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use std::sync::LazyLock;

use super::hash_pool::{Busy, HashPool};

pub(crate) fn hash(password: &str) -> Result<String, argon2::password_hash::Error> {
    let salt = SaltString::generate(&mut OsRng);
    Ok(Argon2::default().hash_password(password.as_bytes(), &salt)?.to_string())
}

/// True when `password` matches `hash`; false for a wrong password or an unreadable hash.
pub(crate) fn verify(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
        .unwrap_or(false)
}

/// `verify` on the hash pool (Argon2 deliberately takes tens of milliseconds). With no stored
/// hash (unknown email) a dummy hash is checked, so that the answer takes as long whether or
/// not the account exists.
pub(crate) async fn verify_on(
    pool: &HashPool,
    password: String,
    hash: Option<String>,
) -> Result<bool, Busy> {
    pool.run(move || match hash {
        Some(hash) => verify(&password, &hash),
        None => {
            let _ = verify(&password, &DUMMY_HASH);
            false
        }
    })
    .await
}

/// A hash with the default parameters, checked when there is no account to check against.
static DUMMY_HASH: LazyLock<String> =
    LazyLock::new(|| hash(&super::secrets::random_hex(16)).unwrap_or_default());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_and_differ() {
        let a = hash("correct horse").unwrap_or_default();
        let b = hash("correct horse").unwrap_or_default();
        assert_ne!(a, b, "salted");
        assert!(verify("correct horse", &a));
        assert!(!verify("wrong horse", &a));
        assert!(!verify("correct horse", "not a hash"));
    }
}
