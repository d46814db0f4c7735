//! Authorizations in progress, kept in Redis between `authorize`, `start` and `callback`.
//!
//! A flow is bound to the browser that opens its link first: `authorize` hands out a link to
//! `start`, which works once, within [`START_SECONDS`], and sets a cookie whose hash the flow
//! keeps; `callback` takes the flow (once) and wants that cookie back. A user has at most
//! [`PER_USER`] flows pending: starting another forgets the oldest.

use std::time::Duration;

use schema::ids::UserId;
use serde::{Deserialize, Serialize};
use sha2::Digest;

use crate::AppState;
use crate::error::ApiResult;

/// How long a started authorization may take, from `authorize` to `callback`.
pub(super) const STATE_SECONDS: u64 = 15 * 60;
/// How long the link `authorize` hands out may wait to be opened.
pub(super) const START_SECONDS: i64 = 5 * 60;
/// Authorizations one user may have pending at once.
pub(super) const PER_USER: usize = 5;
/// The cookie that binds flow `oauth_state` to its browser: `wearhouse_oauth_` and a short
/// hash of the state.
pub(super) fn cookie_name(oauth_state: &str) -> String {
    format!("wearhouse_oauth_{}", &digest(oauth_state)[..16])
}

/// What `authorize` keeps for `start` and `callback`, under the state.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Pending {
    pub user_id: UserId,
    pub provider: String,
    pub redirect_uri: Option<String>,
    pub verifier: Option<String>,
    /// The vendor's authorization URL, where `start` sends the browser.
    pub vendor_url: String,
    /// When `authorize` made it (Unix seconds).
    pub created: i64,
    /// Who finishes the connection.
    #[serde(default)]
    pub completion: Completion,
    /// A connect page's flow: the page the browser returns to, whatever the outcome.
    #[serde(default)]
    pub page: Option<String>,
}

/// Who finishes a connection once the vendor sends the browser back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Completion {
    /// The callback stores the connection.
    #[default]
    Auto,
    /// The client that called `authorize` does, with the code the callback hands back.
    Client,
}

pub(super) fn digest(secret: &str) -> String {
    hex::encode(sha2::Sha256::digest(secret.as_bytes()))
}

/// Keeps a new flow under `oauth_state`; the user's oldest pending flows past [`PER_USER`] are
/// forgotten.
pub(super) async fn keep(state: &AppState, oauth_state: &str, pending: &Pending) -> ApiResult<()> {
    let ttl = Duration::from_secs(STATE_SECONDS);
    Ok(state.guards.keep_flow(oauth_state, pending.user_id, pending, ttl, PER_USER).await?)
}

/// Why a flow's link does not work.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Unbound {
    /// Unknown, expired, for another provider, or not opened in time.
    Expired,
    /// Opened already (in this browser or another).
    Used,
}

/// Binds the flow to a browser the first time its link is opened: the cookie value to set and
/// where to send the browser.
pub(super) async fn bind(
    state: &AppState,
    oauth_state: &str,
    provider: &str,
) -> ApiResult<Result<(String, String), Unbound>> {
    let Some(pending) = state.guards.flow::<Pending>(oauth_state).await? else {
        return Ok(Err(Unbound::Expired));
    };
    let age = chrono::Utc::now().timestamp() - pending.created;
    if pending.provider != provider || !(0..=START_SECONDS).contains(&age) {
        return Ok(Err(Unbound::Expired));
    }
    let secret = crate::security::secrets::random_hex(32);
    let ttl = Duration::from_secs(STATE_SECONDS);
    let bound = state.guards.bind_flow(oauth_state, &digest(&secret), ttl).await?;
    Ok(if bound { Ok((secret, pending.vendor_url)) } else { Err(Unbound::Used) })
}

/// Why a callback's flow is refused.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refused {
    /// Unknown, expired, taken already, or for another provider.
    Invalid,
    /// The browser that came back is not the one that opened the link; the flow's connect
    /// page, if it is a page's.
    OtherBrowser(Option<String>),
}

/// Takes the flow out of Redis, whoever asks (it works once): the flow, and the hash of the
/// cookie its link set, if opened. The user's list of pending flows forgets it.
async fn take_any(
    state: &AppState,
    oauth_state: &str,
) -> ApiResult<(Option<Pending>, Option<String>)> {
    Ok(state.guards.take_flow(oauth_state, |p: &Pending| p.user_id).await?)
}

/// Takes the flow (it works once) if `cookie` is the one its link set.
pub(super) async fn take(
    state: &AppState,
    oauth_state: &str,
    provider: &str,
    cookie: Option<&str>,
) -> ApiResult<Result<Pending, Refused>> {
    let (pending, bound) = take_any(state, oauth_state).await?;
    let Some(pending) = pending.filter(|p| p.provider == provider) else {
        return Ok(Err(Refused::Invalid));
    };
    let same = match (bound, cookie) {
        (Some(bound), Some(cookie)) => crate::security::secrets::same(&bound, &digest(cookie)),
        _ => false,
    };
    Ok(if same { Ok(pending) } else { Err(Refused::OtherBrowser(pending.page)) })
}

/// A connect page's flow the vendor ended with an error (`?error=`), taken: its page and
/// provider, whichever browser came back (nothing is connected). Another flow is left as it is,
/// and so is everything when Redis cannot be asked: the caller then answers as for any flow.
pub(super) async fn abandon_page_flow(
    state: &AppState,
    oauth_state: &str,
    provider: &str,
) -> Option<(String, String)> {
    let flow = state.guards.flow::<Pending>(oauth_state).await.ok()??;
    let page = flow.page.filter(|_| flow.provider == provider)?;
    take_any(state, oauth_state).await.ok()?;
    Some((page, flow.provider))
}

/// The value of cookie `name` in a request's `Cookie` headers.
pub(crate) fn cookie<'h>(headers: &'h axum::http::HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_is_found_among_others() {
        let mut headers = axum::http::HeaderMap::new();
        let name = cookie_name("some-state");
        assert_eq!(name.len(), "wearhouse_oauth_".len() + 16);
        let sent = format!("a=1; {name}=abc ; b=2");
        headers.append("cookie", sent.parse().expect("header"));
        assert_eq!(cookie(&headers, &name), Some("abc"));
        assert_eq!(cookie(&headers, &cookie_name("another-state")), None);
        assert_eq!(cookie(&headers, "b"), Some("2"));
        assert_eq!(cookie(&headers, "wearhouse"), None);
        headers.append("cookie", "c=3".parse().expect("header"));
        assert_eq!(cookie(&headers, "c"), Some("3"));
    }
}
