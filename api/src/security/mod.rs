//! Credentials: password hashing (on a pool of its own), the login throttle, signed access
//! tokens, and random secrets.

pub(crate) mod cookies;
pub(crate) mod hash_pool;
pub(crate) mod passwords;
pub(crate) mod secrets;
pub(crate) mod throttle;
pub(crate) mod tokens;
