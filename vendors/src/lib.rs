//! Cloud vendors: one module per vendor behind the [`Vendor`] trait. [`VENDORS`] is the one
//! list a new vendor joins; nothing else names a vendor.

pub mod config;
mod normal;
pub mod oauth;
pub mod oura;
pub mod pulls;
mod strava;
pub mod tokens;
mod webhook;
mod whoop;

use chrono::{DateTime, Utc};
use ingest::Normalised;
use schema::catalogue::providers::Provider;
use serde_json::Value;

pub use config::VendorConfig;
pub use oauth::{ClientAuth, Endpoints, OAuthError, OAuthSpec, Started, Tokens};

/// A time window, `[start, end)`.
pub type Window = (DateTime<Utc>, DateTime<Utc>);

/// What a vendor is, as data.
#[derive(Debug)]
pub struct Info {
    /// Its catalogue entry: identifier, name, how its data arrives.
    pub provider: Provider,
    /// How its OAuth works.
    pub oauth: OAuthSpec,
    /// Its data API's documented base URL.
    pub api_url: &'static str,
    /// The collections a pull reads, in order.
    pub collections: &'static [&'static str],
}

/// A cloud vendor wearhouse takes data from.
pub trait Vendor: Send + Sync {
    fn info(&self) -> &'static Info;
    fn provider(&self) -> &'static Provider {
        &self.info().provider
    }
    fn oauth(&self) -> &'static OAuthSpec {
        &self.info().oauth
    }
    fn api_url(&self) -> &'static str {
        self.info().api_url
    }
    fn collections(&self) -> &'static [&'static str] {
        self.info().collections
    }
    /// One page of `collection` over `window`, after the page token `next`.
    fn page_url(
        &self,
        api_url: &str,
        collection: &str,
        window: Window,
        next: Option<&str>,
    ) -> Result<url::Url, url::ParseError>;
    /// The token of the page after this one (read with `current`), if any.
    fn next_page(&self, page: &Value, current: Option<&str>) -> Option<String>;
    /// Adds one page of `collection` to the batch.
    fn map_page(&self, collection: &str, page: &Value, out: &mut Normalised);
    /// Where the vendor says who the user is (read once at connection), and the id in it.
    fn user_url(&self, api_url: &str) -> Option<String>;
    fn user_id(&self, body: &Value) -> Option<String>;
    /// The vendor's webhook handshake (`GET` on the receiver): the answer's JSON, or `None`
    /// when the query does not verify.
    fn webhook_challenge(
        &self,
        ends: &Endpoints,
        query: &dyn Fn(&str) -> Option<String>,
    ) -> Option<Value>;
    /// Whether a notification is the vendor's (its signature over the raw body).
    fn webhook_verified(
        &self,
        ends: &Endpoints,
        header: &dyn Fn(&str) -> Option<String>,
        body: &[u8],
    ) -> bool;
    /// What a notification asks to pull: the vendor's user id and a window.
    fn webhook_pulls(&self, body: &Value) -> Vec<(String, Window)>;
    /// The vendor's user that a notification says removed the app (deregistration), if any.
    fn webhook_deregistered(&self, _body: &Value) -> Option<String> {
        None
    }
    /// Seconds to wait after a 429 when the vendor's own rule says (else the headers do).
    fn rate_limit_wait(&self, _headers: &reqwest::header::HeaderMap) -> Option<i64> {
        None
    }
    /// How to revoke `access_token` at the vendor, if it offers that.
    fn revoke(&self, ends: &Endpoints, access_token: &str) -> Option<Revoke>;
}

/// A revocation call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revoke {
    pub method: reqwest::Method,
    pub url: url::Url,
    /// Sent with the token as `Authorization: Bearer` (else the URL carries it).
    pub bearer: bool,
}

/// Revokes a token at the vendor (best effort: a vendor that cannot be reached still loses
/// the connection here; its token expires on its own).
pub async fn revoke_at_vendor(
    http: &reqwest::Client,
    vendor: &dyn Vendor,
    ends: &Endpoints,
    access_token: &str,
) {
    let Some(call) = vendor.revoke(ends, access_token) else { return };
    let mut request =
        http.request(call.method, call.url).timeout(std::time::Duration::from_secs(10));
    if call.bearer {
        request = request.bearer_auth(access_token);
    }
    let sent = request.send().await;
    match sent.map(|r| r.status()) {
        Ok(s) if s.is_success() => {}
        Ok(s) => {
            tracing::warn!(provider = vendor.provider().slug, status = %s, "the vendor did not revoke the token")
        }
        Err(e) => {
            tracing::warn!(provider = vendor.provider().slug, error = %e, "revoking at the vendor failed")
        }
    }
}

/// Every vendor with an adapter.
pub static VENDORS: &[&dyn Vendor] = &[&oura::Oura, &whoop::Whoop, &strava::Strava];

/// Exact (case-sensitive) lookup.
pub fn by_slug(slug: &str) -> Option<&'static dyn Vendor> {
    VENDORS.iter().copied().find(|v| v.provider().slug == slug)
}

/// Where a vendor sends users back after OAuth (the redirect URI registered at the vendor, and
/// sent again with token calls): `<public_url>/api/v1/oauth/<slug>/callback`.
pub fn callback_url(public_url: &str, slug: &str) -> String {
    format!("{}/api/v1/oauth/{slug}/callback", public_url.trim_end_matches('/'))
}

/// Any provider, phone or cloud, by its exact identifier.
pub fn provider(slug: &str) -> Option<&'static Provider> {
    schema::catalogue::providers::by_slug(slug).or_else(|| by_slug(slug).map(|v| v.provider()))
}

/// The vendor's id of the user behind `access_token` (best effort: `None` when the vendor does
/// not say or cannot be reached; webhooks then cannot name the user).
pub async fn vendor_user_id(
    http: &reqwest::Client,
    vendor: &dyn Vendor,
    ends: &Endpoints,
    access_token: &str,
) -> Option<String> {
    let url = vendor.user_url(&ends.api_url)?;
    let response = http
        .get(url)
        .bearer_auth(access_token)
        .timeout(std::time::Duration::from_secs(20))
        .send()
        .await
        .ok()?;
    let body: Value = response.error_for_status().ok()?.json().await.ok()?;
    vendor.user_id(&body)
}
