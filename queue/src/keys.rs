//! Every Redis key the service uses, under the deployment's prefix (`REDIS_KEY_PREFIX`): named
//! here only, so no two parts can collide and an operator reads in one place what lives in
//! Redis. None of them is a record: PostgreSQL is (streams announce its rows; the rest are
//! short-lived guards and counters that expire).

use std::fmt::Display;

/// A stream of tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// SDK batches to process (`<prefix>:jobs`).
    Batches,
    /// Export imports to run (`<prefix>:imports`).
    Imports,
    /// Cloud vendor pulls to make (`<prefix>:pulls`).
    Pulls,
    /// Webhook deliveries to attempt (`<prefix>:webhooks`).
    Webhooks,
}

/// The keys of one deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    prefix: String,
}

impl Keys {
    pub fn new(prefix: &str) -> Keys {
        Keys { prefix: prefix.to_string() }
    }

    /// A stream's key.
    pub fn stream(&self, stream: Stream) -> String {
        let name = match stream {
            Stream::Batches => "jobs",
            Stream::Imports => "imports",
            Stream::Pulls => "pulls",
            Stream::Webhooks => "webhooks",
        };
        format!("{}:{name}", self.prefix)
    }

    /// The pub/sub channel of one user's sync status events.
    pub fn sync_channel(&self, user: impl Display) -> String {
        format!("{}:sync:{user}", self.prefix)
    }

    /// The pattern of every user's sync channel.
    pub fn sync_channel_pattern(&self) -> String {
        format!("{}:sync:*", self.prefix)
    }

    /// An OAuth flow's short-lived entry: `what` is `state`, `binding` or `handed`, `id` the
    /// hash of the secret it is found by.
    pub fn oauth(&self, what: &str, id: &str) -> String {
        format!("{}:oauth_{what}:{id}", self.prefix)
    }

    /// A vendor notification seen recently (its body's digest), so a replay is refused.
    pub fn vendor_notice(&self, vendor: &str, digest: &str) -> String {
        format!("{}:vendor_notice:{vendor}:{digest}", self.prefix)
    }

    /// The actions counted on one connect link.
    pub fn connect_actions(&self, link: impl Display) -> String {
        format!("{}:connect-actions:{link}", self.prefix)
    }

    /// The failures of `what` (login, invitation-code, connect-link) counted per account or
    /// address: `scope` is `account` or `address`, `who` its keyed hash or the address.
    pub fn failures(&self, what: &str, scope: &str, who: impl Display) -> String {
        format!("{}:{what}-failures:{scope}:{who}", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names are those of earlier versions: a deployment upgraded in place keeps its
    /// streams and counters.
    #[test]
    fn keys_keep_their_names() {
        let k = Keys::new("wh");
        assert_eq!(k.stream(Stream::Batches), "wh:jobs");
        assert_eq!(k.stream(Stream::Imports), "wh:imports");
        assert_eq!(k.stream(Stream::Pulls), "wh:pulls");
        assert_eq!(k.stream(Stream::Webhooks), "wh:webhooks");
        assert_eq!(k.sync_channel("u1"), "wh:sync:u1");
        assert_eq!(k.sync_channel_pattern(), "wh:sync:*");
        assert_eq!(k.oauth("state", "ab"), "wh:oauth_state:ab");
        assert_eq!(k.vendor_notice("garmin", "cd"), "wh:vendor_notice:garmin:cd");
        assert_eq!(k.connect_actions("l1"), "wh:connect-actions:l1");
        assert_eq!(k.failures("login", "account", "ef"), "wh:login-failures:account:ef");
        assert_eq!(k.failures("login", "address", "1.2.3.4"), "wh:login-failures:address:1.2.3.4");
    }
}
