//! Failed attempts at a secret an anonymous caller presents (a developer's login, an
//! invitation code), counted in Redis per account and per client address over a window: past
//! the limit, attempts on that account (or from that address) are answered 429 with
//! `Retry-After` until the window ends, before any work is done. A success clears the account's
//! count. Redis unreachable: attempts go on unthrottled (the hash pool still bounds a login's
//! cost), with a warning.

use std::net::IpAddr;
use std::time::Duration;

use hmac::{Hmac, Mac};
use queue::{Counted, Guards, Party};
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
pub(crate) struct Attempt {
    /// What is tried: a login's email as typed (compared without case), an invitation code's
    /// prefix.
    pub account: String,
    pub address: Option<IpAddr>,
}

pub(crate) struct FailureThrottle {
    guards: Guards,
    /// What is counted.
    what: Counted,
    limits: FailureLimits,
    /// Keys the hash of account names, so Redis does not tell who tried to log in.
    key: Vec<u8>,
}

impl FailureThrottle {
    /// Counts the failures of `what` in the service's `guards`.
    pub(crate) fn new(
        guards: Guards,
        what: Counted,
        limits: FailureLimits,
        key: &[u8],
    ) -> FailureThrottle {
        FailureThrottle { guards, what, limits, key: key.to_vec() }
    }

    /// Whom an attempt's failures count against, with the limit of each. An account is named by
    /// the keyed hash (HMAC-SHA256) of its name: whatever is typed as a username, a counter
    /// costs Redis the same few bytes, and names cannot be tried against it without the
    /// deployment's secret.
    fn parties(&self, a: &Attempt) -> Vec<(Party, u32)> {
        let name = a.account.trim().to_lowercase();
        let account = match Hmac::<Sha256>::new_from_slice(&self.key) {
            Ok(mac) => hex::encode(mac.chain_update(name.as_bytes()).finalize().into_bytes()),
            // Any key length works for HMAC; kept total all the same.
            Err(_) => hex::encode(Sha256::digest(name.as_bytes())),
        };
        let mut parties = vec![(Party::Account(account), self.limits.per_account)];
        if let Some(ip) = a.address {
            parties.push((Party::Address(ip), self.limits.per_address));
        }
        parties
    }

    /// `Some(seconds)` to wait when the account or the address has used up its failures.
    pub(crate) async fn blocked(&self, a: &Attempt) -> Option<u64> {
        let parties = self.parties(a);
        let counts = match self.guards.failures(self.what, parties.iter().map(|(p, _)| p)).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, what = ?self.what, "throttle unavailable (Redis)");
                return None;
            }
        };
        parties
            .iter()
            .zip(counts)
            .filter(|((_, max), (count, _))| count.is_some_and(|c| c >= *max))
            .map(|(_, (_, ttl))| ttl.max(1) as u64)
            .max()
    }

    /// Counts a failed attempt against the account and the address.
    pub(crate) async fn failed(&self, a: &Attempt) {
        let parties = self.parties(a);
        let who = parties.iter().map(|(p, _)| p);
        if let Err(e) = self.guards.fail(self.what, who, self.limits.window).await {
            tracing::warn!(error = %e, what = ?self.what, "could not count a failure (Redis)");
        }
    }

    /// Clears the account's failures after a success.
    pub(crate) async fn succeeded(&self, a: &Attempt) {
        if let Some((account, _)) = self.parties(a).first() {
            let _ = self.guards.clear_failures(self.what, account).await;
        }
    }
}
