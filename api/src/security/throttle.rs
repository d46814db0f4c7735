//! Failed attempts at a secret an anonymous caller presents (a developer's login, an
//! invitation code), counted in Redis per account and per client address over a window: past
//! the limit, attempts on that account (or from that address) are answered 429 with
//! `Retry-After` until the window ends, before any work is done. A success clears the account's
//! count. Redis unreachable: attempts go on unthrottled (the hash pool still bounds a login's
//! cost), with a warning.

use std::net::IpAddr;
use std::time::Duration;

use hmac::{Hmac, Mac};
use queue::Keys;
use redis::aio::ConnectionManager;
use sha2::{Digest, Sha256};

/// A throttle's settings.
#[derive(Debug, Clone)]
pub struct FailureLimits {
    pub per_account: u32,
    pub per_address: u32,
    pub window: Duration,
}

/// Who is trying.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// What is tried: a login's email as typed (compared without case), an invitation code's
    /// prefix.
    pub account: String,
    pub address: Option<IpAddr>,
}

pub struct FailureThrottle {
    redis: ConnectionManager,
    keys: Keys,
    /// What is counted: `login`, `invitation-code`, `connect-link`.
    what: String,
    limits: FailureLimits,
    /// Keys the hash of account names, so Redis does not tell who tried to log in.
    key: Vec<u8>,
}

impl FailureThrottle {
    /// Counts the failures of `what` (e.g. `login`) under the service's Redis `keys`.
    pub fn new(
        redis: ConnectionManager,
        keys: &Keys,
        what: &str,
        limits: FailureLimits,
        key: &[u8],
    ) -> FailureThrottle {
        FailureThrottle { redis, keys: keys.clone(), what: what.into(), limits, key: key.to_vec() }
    }

    /// The counters of an attempt, with the limit of each. An account's key is the keyed hash
    /// (HMAC-SHA256) of its name: whatever is typed as a username, a key costs Redis the same
    /// few bytes, and names cannot be tried against it without the deployment's secret.
    fn keys(&self, a: &Attempt) -> Vec<(String, u32)> {
        let name = a.account.trim().to_lowercase();
        let account = match Hmac::<Sha256>::new_from_slice(&self.key) {
            Ok(mac) => hex::encode(mac.chain_update(name.as_bytes()).finalize().into_bytes()),
            // Any key length works for HMAC; kept total all the same.
            Err(_) => hex::encode(Sha256::digest(name.as_bytes())),
        };
        let mut keys =
            vec![(self.keys.failures(&self.what, "account", account), self.limits.per_account)];
        if let Some(ip) = a.address {
            keys.push((self.keys.failures(&self.what, "address", ip), self.limits.per_address));
        }
        keys
    }

    /// `Some(seconds)` to wait when the account or the address has used up its failures.
    pub async fn blocked(&self, a: &Attempt) -> Option<u64> {
        let keys = self.keys(a);
        let mut pipe = redis::pipe();
        for (key, _) in &keys {
            pipe.get(key).ttl(key);
        }
        let mut conn = self.redis.clone();
        let replies: Vec<(Option<u32>, i64)> = match pipe.query_async(&mut conn).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, what = %self.what, "throttle unavailable (Redis)");
                return None;
            }
        };
        keys.iter()
            .zip(replies)
            .filter(|((_, max), (count, _))| count.is_some_and(|c| c >= *max))
            .map(|(_, (_, ttl))| ttl.max(1) as u64)
            .max()
    }

    /// Counts a failed attempt against the account and the address.
    pub async fn failed(&self, a: &Attempt) {
        let window = self.limits.window.as_secs().max(1) as i64;
        let mut pipe = redis::pipe();
        for (key, _) in self.keys(a) {
            // The window starts at the first failure.
            pipe.incr(&key, 1).ignore().cmd("EXPIRE").arg(&key).arg(window).arg("NX").ignore();
        }
        let mut conn = self.redis.clone();
        if let Err(e) = pipe.query_async::<()>(&mut conn).await {
            tracing::warn!(error = %e, what = %self.what, "could not count a failure (Redis)");
        }
    }

    /// Clears the account's failures after a success.
    pub async fn succeeded(&self, a: &Attempt) {
        let Some((key, _)) = self.keys(a).into_iter().next() else { return };
        let mut conn = self.redis.clone();
        let _ = redis::cmd("DEL").arg(key).query_async::<()>(&mut conn).await;
    }
}
