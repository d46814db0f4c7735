//! Makes again, for every active connection of a vendor, the calls it takes at connection (its
//! per-user notification subscriptions: Fitbit, Withings), with the notification URL of now:
//! after `<VENDOR>_WEBHOOK_TOKEN` is set or changed, the subscriptions made before point at a
//! URL whose notifications are refused.

use schema::ids::UserId;

use crate::tokens::{self, Client};
use crate::{Connected, Endpoints, Vendor};

/// What resubscribing a vendor's connections did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Resubscribed {
    /// Connections whose calls were all made.
    pub done: usize,
    /// Connections that could not be, and why.
    pub failed: Vec<(UserId, String)>,
}

/// Resubscribes every active connection to `vendor`, one after the other.
pub async fn run(
    c: &Client<'_>,
    vendor: &dyn Vendor,
    ends: &Endpoints,
    public_url: &str,
) -> Result<Resubscribed, schema::Error> {
    let slug = vendor.provider().slug;
    let hooks = crate::webhook_url(public_url, vendor, ends);
    let mut out = Resubscribed::default();
    for (user_id, vendor_user) in schema::connections::active_of(c.db, slug).await? {
        let token = match tokens::access_token(c, vendor, ends, user_id).await {
            Ok(token) => token,
            Err(tokens::TokenError::Db(e)) => return Err(e),
            Err(e) => {
                out.failed.push((user_id, e.to_string()));
                continue;
            }
        };
        let connected = Connected {
            ends,
            access_token: &token,
            vendor_user: vendor_user.as_deref(),
            user_id,
            webhook_url: &hooks,
        };
        let mut failure = None;
        for call in vendor.on_connect(&connected) {
            if let Err(why) = crate::calls::send(c.http, ends, call).await {
                failure = Some(why);
            }
        }
        match failure {
            Some(why) => out.failed.push((user_id, why)),
            None => out.done += 1,
        }
    }
    Ok(out)
}
