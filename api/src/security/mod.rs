//! Credentials: password hashing, signed access tokens, and random secrets.

pub mod passwords;
pub mod secrets;
pub mod tokens;
