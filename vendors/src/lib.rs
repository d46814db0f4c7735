//! Cloud vendors: one module per vendor behind the [`Vendor`] trait. [`VENDORS`] is the one
//! list a new vendor joins; nothing else names a vendor.

pub mod config;
pub mod oauth;
pub mod oura;
pub mod pulls;
pub mod tokens;

use chrono::{DateTime, Utc};
use ingest::Normalised;
use schema::catalogue::providers::Provider;
use serde_json::Value;

pub use config::VendorConfig;
pub use oauth::{ClientAuth, Endpoints, OAuthError, OAuthSpec, Started, Tokens};

/// A cloud vendor wearhouse takes data from.
pub trait Vendor: Send + Sync {
    /// Its catalogue entry: identifier, name, how its data arrives.
    fn provider(&self) -> &'static Provider;
    /// How its OAuth works.
    fn oauth(&self) -> &'static OAuthSpec;
    /// Its data API's documented base URL.
    fn api_url(&self) -> &'static str;
    /// The collections a pull reads, in order.
    fn collections(&self) -> &'static [&'static str];
    /// One page of `collection` over `window`, after the page token `next`.
    fn page_url(
        &self,
        api_url: &str,
        collection: &str,
        window: (DateTime<Utc>, DateTime<Utc>),
        next: Option<&str>,
    ) -> Result<url::Url, url::ParseError>;
    /// The token of the page after this one, if any.
    fn next_page(&self, page: &Value) -> Option<String>;
    /// Adds one page of `collection` to the batch.
    fn map_page(&self, collection: &str, page: &Value, out: &mut Normalised);
}

/// Every vendor with an adapter.
pub static VENDORS: &[&dyn Vendor] = &[&oura::Oura];

/// Exact (case-sensitive) lookup.
pub fn by_slug(slug: &str) -> Option<&'static dyn Vendor> {
    VENDORS.iter().copied().find(|v| v.provider().slug == slug)
}

/// Any provider, phone or cloud, by its exact identifier.
pub fn provider(slug: &str) -> Option<&'static Provider> {
    schema::catalogue::providers::by_slug(slug).or_else(|| by_slug(slug).map(|v| v.provider()))
}
