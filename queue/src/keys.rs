//! Every Redis key the service uses, under the deployment's prefix (`REDIS_KEY_PREFIX`): named
//! here only, so no two parts can collide and an operator reads in one place what lives in
//! Redis. None of them is a record: PostgreSQL is (streams announce its rows; the rest are
//! short-lived guards and counters that expire).

use std::fmt::Display;
use std::net::IpAddr;

/// A stream of tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// SDK batches to process (`<prefix>:jobs`).
    Batches,
    /// Export imports to run and users' record exports to make (`<prefix>:imports`).
    Imports,
    /// Cloud vendor pulls to make (`<prefix>:pulls`).
    Pulls,
    /// Webhook deliveries to attempt (`<prefix>:webhooks`).
    Webhooks,
}

/// An OAuth flow's entries, each under the flow's state (the user's list under the user).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// The flow itself, from `authorize` to `callback`.
    State,
    /// The hash of the cookie that binds the flow to the browser that opened its link.
    Browser,
    /// A user's flows pending, by when each expires.
    User,
    /// What a finished flow hands back, under the hash of its completion code.
    Handed,
}

/// What failures are counted of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// Developer logins.
    Login,
    /// Invitation codes redeemed.
    InvitationCode,
    /// Connect-link tokens that match no link.
    ConnectLink,
}

/// Whom failures are counted against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Party {
    /// An account, by the keyed hash of its name (hex).
    Account(String),
    /// A client address.
    Address(IpAddr),
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
    pub(crate) fn sync_channel(&self, user: impl Display) -> String {
        format!("{}:sync:{user}", self.prefix)
    }

    /// The pattern of every user's sync channel.
    pub(crate) fn sync_channel_pattern(&self) -> String {
        format!("{}:sync:*", self.prefix)
    }

    /// An OAuth flow's short-lived entry, under what it is found by.
    pub fn oauth(&self, entry: Flow, id: impl Display) -> String {
        let what = match entry {
            Flow::State => "state",
            Flow::Browser => "browser",
            Flow::User => "user",
            Flow::Handed => "handed",
        };
        format!("{}:oauth_{what}:{id}", self.prefix)
    }

    /// A vendor notification seen recently (its body's digest), so a replay is refused.
    pub fn vendor_notice(&self, vendor: &str, digest: &str) -> String {
        format!("{}:vendor_notice:{vendor}:{digest}", self.prefix)
    }

    /// The actions counted on one connect link.
    pub(crate) fn connect_actions(&self, link: impl Display) -> String {
        format!("{}:connect-actions:{link}", self.prefix)
    }

    /// The failures of `what` counted against one account or address.
    pub fn failures(&self, what: Counted, party: &Party) -> String {
        let what = match what {
            Counted::Login => "login",
            Counted::InvitationCode => "invitation-code",
            Counted::ConnectLink => "connect-link",
        };
        let (scope, who) = match party {
            Party::Account(hash) => ("account", hash.to_string()),
            Party::Address(ip) => ("address", ip.to_string()),
        };
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
        assert_eq!(k.oauth(Flow::State, "ab"), "wh:oauth_state:ab");
        assert_eq!(k.oauth(Flow::Browser, "ab"), "wh:oauth_browser:ab");
        assert_eq!(k.oauth(Flow::User, "u1"), "wh:oauth_user:u1");
        assert_eq!(k.oauth(Flow::Handed, "cd"), "wh:oauth_handed:cd");
        assert_eq!(k.vendor_notice("garmin", "cd"), "wh:vendor_notice:garmin:cd");
        assert_eq!(k.connect_actions("l1"), "wh:connect-actions:l1");
        let account = Party::Account("ef".into());
        assert_eq!(k.failures(Counted::Login, &account), "wh:login-failures:account:ef");
        let address = Party::Address([1, 2, 3, 4].into());
        assert_eq!(k.failures(Counted::Login, &address), "wh:login-failures:address:1.2.3.4");
        let code = k.failures(Counted::InvitationCode, &address);
        assert_eq!(code, "wh:invitation-code-failures:address:1.2.3.4");
        let link = k.failures(Counted::ConnectLink, &address);
        assert_eq!(link, "wh:connect-link-failures:address:1.2.3.4");
    }
}
