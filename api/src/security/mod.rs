//! Credentials: password hashing (on a pool of its own), the login throttle, signed access
//! tokens, and random secrets.

pub mod cookies;
pub mod hash_pool;
pub mod passwords;
pub mod secrets;
pub mod throttle;
pub mod tokens;
