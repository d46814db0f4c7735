//! A connection's access token when a pull needs it: renewed shortly before it expires, one
//! renewal at a time per connection (the row stays locked while the vendor answers: some
//! vendors' refresh tokens work once, and a second concurrent refresh would be refused). A
//! vendor that refuses the refresh token ends the connection: `revoked`, `connection.revoked`
//! with reason `refresh_failed`; the user must connect again.

use chrono::{Duration, Utc};
use schema::Db;
use schema::connections::{ConnectionStatus, Grant, RevokeReason};
use schema::ids::UserId;
use schema::sealed::MasterKeys;

use crate::{Endpoints, OAuthError, Vendor};

/// Renewed when it expires within this.
const MARGIN: i64 = 5 * 60;

/// Why there is no token; the messages are the reference's.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("User not connected to {0}")]
    NotConnected(&'static str),
    #[error("Token expired and no refresh token available for {0}")]
    Expired(&'static str),
    #[error("Refresh token rejected for {0}; reconnection required")]
    Revoked(&'static str),
    /// The vendor could not be reached: try again later.
    #[error("Token refresh for {0} failed: {1}")]
    Unavailable(&'static str, String),
    #[error(transparent)]
    Db(#[from] schema::Error),
}

/// Where the service's OAuth calls name it to the vendor.
pub struct Client<'a> {
    pub db: &'a Db,
    pub keys: &'a MasterKeys,
    pub http: &'a reqwest::Client,
    /// The redirect URI registered at the vendor (some vendors check it on refresh too).
    pub redirect: &'a str,
    /// Write `connection.revoked`.
    pub events: bool,
}

/// A usable access token of (`user_id`, the vendor's) connection.
pub async fn access_token(
    c: &Client<'_>,
    vendor: &dyn Vendor,
    ends: &Endpoints,
    user_id: UserId,
) -> Result<String, TokenError> {
    let slug = vendor.provider().slug;
    let fresh = |t: &schema::connections::Tokens| {
        t.expires_at.is_none_or(|e| e > Utc::now() + Duration::seconds(MARGIN))
    };
    let client = c.db.client().await?;
    match schema::connections::tokens(&client, c.keys, user_id, slug, false).await? {
        Some(t) if t.status == ConnectionStatus::Active && fresh(&t) => {
            return t.access_token.ok_or(TokenError::NotConnected(slug));
        }
        Some(t) if t.status == ConnectionStatus::Active => {}
        _ => return Err(TokenError::NotConnected(slug)),
    }
    drop(client);
    let mut client = c.db.client().await?;
    let tx = client.transaction().await.map_err(schema::Error::from)?;
    let Some(t) = schema::connections::tokens(&tx, c.keys, user_id, slug, true).await? else {
        return Err(TokenError::NotConnected(slug));
    };
    if t.status != ConnectionStatus::Active {
        return Err(TokenError::NotConnected(slug));
    }
    if fresh(&t) {
        // Renewed by someone else meanwhile.
        return t.access_token.ok_or(TokenError::NotConnected(slug));
    }
    let Some(refresh) = t.refresh_token else { return Err(TokenError::Expired(slug)) };
    match crate::oauth::refresh(c.http, vendor.oauth(), ends, c.redirect, &refresh).await {
        Ok(new) => {
            let grant = Grant {
                access_token: &new.access_token,
                refresh_token: new.refresh_token.as_deref(),
                expires_at: new.expires_at,
                scope: new.scope.as_deref(),
                provider_user_id: None,
            };
            schema::connections::renew(&tx, c.keys, user_id, slug, &grant).await?;
            tx.commit().await.map_err(schema::Error::from)?;
            Ok(new.access_token)
        }
        Err(OAuthError::Refused(why)) => {
            drop(tx);
            tracing::warn!(%user_id, provider = slug, why, "the vendor refused the refresh token");
            schema::connections::revoke(c.db, user_id, slug, RevokeReason::RefreshFailed, c.events)
                .await?;
            Err(TokenError::Revoked(slug))
        }
        Err(e) => Err(TokenError::Unavailable(slug, e.to_string())),
    }
}
