//! The end of a connection, once a vendor's tokens are in hand (from the callback, or handed
//! back to the client that finishes it): one user per vendor account, the calls the vendor
//! needs made, the connection stored, the initial sync queued.

use vendors::{Endpoints, Tokens, Vendor};

use crate::AppState;
use crate::error::ApiResult;

/// How far back the sync queued at connection reaches.
const INITIAL_DAYS: i64 = 30;

/// Why a connection was not made.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// The vendor account is active on another user.
    Taken,
    /// The vendor refused a call it needs (Polar's registration), and said this.
    NotAccepted(String),
}

impl Refusal {
    pub(super) fn message(&self, vendor: &dyn Vendor) -> String {
        let name = vendor.provider().name;
        match self {
            Refusal::Taken => format!("This {name} account is already connected to another user"),
            Refusal::NotAccepted(why) => format!("{name} did not accept the connection: {why}"),
        }
    }
}

/// What a connection is made of.
pub(super) struct Made<'a> {
    pub vendor: &'static dyn Vendor,
    pub ends: &'a Endpoints,
    pub user_id: uuid::Uuid,
    pub tokens: &'a Tokens,
    /// The vendor's id of the user, when it says.
    pub vendor_user: Option<&'a str>,
}

/// Makes the connection.
pub(super) async fn finish(state: &AppState, m: Made<'_>) -> ApiResult<Result<(), Refusal>> {
    let slug = m.vendor.provider().slug;
    // One user per vendor account: told before anything is registered at the vendor for it.
    if let Some(account) = m.vendor_user {
        let client = state.db.client().await?;
        if schema::connections::active_elsewhere(&client, slug, account, m.user_id).await? {
            return Ok(Err(Refusal::Taken));
        }
    }
    // What the vendor needs done before it gives data (Polar registers the user), and the
    // notification subscriptions it takes per user.
    let hooks = vendors::webhook_url(&state.config.public_url, m.vendor, m.ends);
    let connected = vendors::Connected {
        ends: m.ends,
        access_token: &m.tokens.access_token,
        vendor_user: m.vendor_user,
        user_id: m.user_id,
        webhook_url: &hooks,
    };
    for call in m.vendor.on_connect(&connected) {
        let required = call.required;
        if let Err(why) = vendors::calls::send(&state.vendor_http, m.ends, call).await {
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
    let made = schema::connections::connect(
        &state.db,
        &state.keys,
        m.user_id,
        slug,
        &grant,
        state.config.outbox,
    )
    .await;
    let (connection, new) = match made {
        Ok(made) => made,
        Err(schema::Error::Conflict(schema::Conflict::VendorAccount)) => {
            return Ok(Err(Refusal::Taken));
        }
        Err(e) => return Err(e.into()),
    };
    tracing::info!(user = %m.user_id, provider = slug, connection = %connection.id, new, "connected");
    if new {
        // The initial sync: the last month, queued as a durable pull (or a backfill request,
        // for a vendor that sends history by notification).
        let now = chrono::Utc::now();
        let window = (now - chrono::Duration::days(INITIAL_DAYS), now);
        let kind = vendors::pulls::history_kind(m.vendor);
        vendors::pulls::enqueue(&state.db, &state.queue, m.user_id, slug, window, kind).await?;
    }
    Ok(Ok(()))
}
