//! Connecting a user to a cloud vendor, the workflow behind the OAuth routes
//! (`api::routes::oauth`): the callback's code exchanged for the vendor's tokens, then the
//! connection made (one user per vendor account, the calls the vendor needs, the connection
//! stored with its tokens sealed, the initial sync queued), from the callback or from the client
//! that finishes a flow it started.

use ingest::jobs::JobQueue;
use schema::Db;
use schema::ids::UserId;
use schema::sealed::MasterKeys;

use crate::oauth::OAuthError;
use crate::{Endpoints, Tokens, Vendor};

/// How far back the sync queued at connection reaches.
const INITIAL_DAYS: i64 = 30;

/// What connecting reaches.
#[derive(Clone, Copy)]
pub struct Connector<'a> {
    pub db: &'a Db,
    pub keys: &'a MasterKeys,
    pub http: &'a reqwest::Client,
    pub queue: &'a JobQueue,
    /// The service's public URL, which the vendor's callback and notification URLs are under.
    pub public_url: &'a str,
    /// Whether connecting writes its outbox events.
    pub outbox: bool,
}

/// Why a code could not be exchanged.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// The vendor refused the authorization, and said this.
    #[error("{vendor} refused the authorization: {why}")]
    Refused { vendor: &'static str, why: String },
    /// The exchange itself failed (network, an answer we cannot read).
    #[error("Token exchange with {vendor} failed: {why}")]
    Failed { vendor: &'static str, why: String },
    /// The user the flow was started for is gone.
    #[error("the user {0} no longer exists")]
    UserGone(UserId),
    #[error(transparent)]
    Db(#[from] schema::Error),
}

/// A vendor's grant for a user, with the vendor's id of them when it says.
#[derive(Debug)]
pub struct Granted {
    pub tokens: Tokens,
    pub vendor_user: Option<String>,
}

/// Why a connection was not made.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The vendor account is active on another user.
    Taken,
    /// The vendor refused a call it needs (Polar's registration), and said this.
    NotAccepted(String),
}

impl Refusal {
    /// What the user is told.
    pub fn message(&self, vendor: &dyn Vendor) -> String {
        let name = vendor.provider().name;
        match self {
            Refusal::Taken => format!("This {name} account is already connected to another user"),
            Refusal::NotAccepted(why) => format!("{name} did not accept the connection: {why}"),
        }
    }
}

/// What a connection is made of.
pub struct Made<'a> {
    pub vendor: &'static dyn Vendor,
    pub ends: &'a Endpoints,
    pub user_id: UserId,
    pub tokens: &'a Tokens,
    /// The vendor's id of the user, when it says.
    pub vendor_user: Option<&'a str>,
}

impl Connector<'_> {
    /// Exchanges the callback's `code` for `user_id`'s tokens at `vendor`, and asks who the
    /// user is there.
    pub async fn exchange(
        &self,
        vendor: &'static dyn Vendor,
        ends: &Endpoints,
        user_id: UserId,
        code: &str,
        verifier: Option<&str>,
    ) -> Result<Granted, ExchangeError> {
        let slug = vendor.provider().slug;
        let callback = crate::callback_url(self.public_url, slug);
        let name = vendor.provider().name;
        let tokens =
            crate::oauth::exchange(self.http, vendor.oauth(), ends, &callback, code, verifier)
                .await
                .map_err(|e| match e {
                    OAuthError::Refused(why) => ExchangeError::Refused { vendor: name, why },
                    other => ExchangeError::Failed { vendor: name, why: other.to_string() },
                })?;
        if !schema::users::exists(self.db, user_id).await? {
            return Err(ExchangeError::UserGone(user_id));
        }
        let vendor_user = crate::vendor_user_id(self.http, vendor, ends, &tokens).await;
        Ok(Granted { tokens, vendor_user })
    }

    /// Makes the connection: refused when the vendor account is another user's or the vendor
    /// refuses a call it needs.
    pub async fn finish(&self, m: Made<'_>) -> Result<Result<(), Refusal>, schema::Error> {
        let slug = m.vendor.provider().slug;
        // One user per vendor account: told before anything is registered at the vendor for it.
        if let Some(account) = m.vendor_user {
            let client = self.db.client().await?;
            if schema::connections::active_elsewhere(&client, slug, account, m.user_id).await? {
                return Ok(Err(Refusal::Taken));
            }
        }
        // What the vendor needs done before it gives data (Polar registers the user), and the
        // notification subscriptions it takes per user.
        let hooks = crate::webhook_url(self.public_url, m.vendor, m.ends);
        let connected = crate::Connected {
            ends: m.ends,
            access_token: &m.tokens.access_token,
            vendor_user: m.vendor_user,
            user_id: m.user_id,
            webhook_url: &hooks,
        };
        for call in m.vendor.on_connect(&connected) {
            let required = call.required;
            if let Err(why) = crate::calls::send(self.http, m.ends, call).await {
                tracing::warn!(user = %m.user_id, provider = slug, why, "a call after connecting failed");
                if required {
                    return Ok(Err(Refusal::NotAccepted(why)));
                }
            }
        }
        let grant = schema::connections::Grant {
            access_token: &m.tokens.access_token,
            refresh_token: m.tokens.refresh_token.as_deref(),
            expires_at: m.tokens.expires_at,
            scope: m.tokens.scope.as_deref(),
            provider_user_id: m.vendor_user,
        };
        let made =
            schema::connections::connect(self.db, self.keys, m.user_id, slug, &grant, self.outbox)
                .await;
        let (connection, new) = match made {
            Ok(made) => made,
            Err(schema::Error::Conflict(schema::Conflict::VendorAccount)) => {
                return Ok(Err(Refusal::Taken));
            }
            Err(e) => return Err(e),
        };
        tracing::info!(user = %m.user_id, provider = slug, connection = %connection.id, new, "connected");
        if new {
            // The initial sync: the last month, queued as a durable pull (or a backfill
            // request, for a vendor that sends history by notification).
            let now = chrono::Utc::now();
            let window = (now - chrono::Duration::days(INITIAL_DAYS), now);
            let kind = crate::pulls::history_kind(m.vendor);
            crate::pulls::enqueue(self.db, self.queue, m.user_id, slug, window, kind).await?;
        }
        Ok(Ok(()))
    }
}
