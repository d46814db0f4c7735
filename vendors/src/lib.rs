//! Cloud vendors: one module per vendor behind the [`Vendor`] trait. [`VENDORS`] is the one
//! list a new vendor joins; nothing else names a vendor.

mod calls;
mod config;
pub mod connect;
mod fitbit;
mod garmin;
mod normal;
pub mod oauth;
pub mod oura;
mod polar;
pub mod pulls;
pub mod resubscribe;
mod strava;
mod suunto;
pub mod tokens;
mod ultrahuman;
mod webhook;
mod whoop;
mod withings;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use ingest::Normalised;
use schema::catalogue::providers::Provider;
use schema::ids::UserId;
use serde_json::Value;

pub use calls::{Call, CallAuth};
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
    /// Variables it needs besides the credentials, each read as `<VENDOR>_<NAME>` (Suunto's
    /// API subscription key): a vendor without them is not configured.
    pub settings: &'static [&'static str],
    /// The largest notification it sends (most send a few hundred bytes; Garmin pushes whole
    /// summaries).
    pub notification_bytes: usize,
    /// How a user's history is read.
    pub history: History,
    /// How its notifications prove they are its own.
    pub proof: Proof,
}

/// How a vendor's notifications are told from forgeries and replays. Every notification that
/// costs us work (a pull, a stored page, a token check) is proved one of these ways first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// A signature over a timestamp and the body, the timestamp within ten minutes of now
    /// (Oura, WHOOP).
    TimedSignature,
    /// A signature over the body alone: a replayed body would verify for ever, so a body seen
    /// within [`REPLAY_WINDOW_SECONDS`] is acknowledged and ignored (Fitbit, Suunto, Polar).
    Signature,
    /// The vendor signs nothing: notifications are sent to a URL with `?token=` and
    /// `<VENDOR>_WEBHOOK_TOKEN`, registered so at the vendor; without the setting every
    /// notification is refused (Garmin, Strava, Withings).
    UrlToken,
    /// The vendor sends no notifications (Ultrahuman).
    None,
}

/// How long a signed body without a timestamp is remembered, so that a captured notification
/// replayed costs at most one pull in this time. Short, because vendors send the same bytes
/// again for new data: Fitbit's notice names only the user, the collection and the day, so a
/// second sync of the same day is the same body; one within the window merges into the pull
/// the first queued (or was read by it), one after it is acted on.
pub const REPLAY_WINDOW_SECONDS: u64 = 5 * 60;

/// How a vendor gives a user's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    /// Pulled like any window.
    Pull,
    /// Asked for ([`Vendor::backfill_url`]), then sent by notification.
    Backfill,
}

/// What a notification body of a few hundred bytes is allowed.
pub(crate) const SMALL_NOTIFICATIONS: usize = 64 * 1024;

/// What a connection is, for the calls made at connection and disconnection.
#[derive(Debug, Clone, Copy)]
pub struct Connected<'a> {
    pub ends: &'a Endpoints,
    pub access_token: &'a str,
    /// The vendor's id of the user, when known.
    pub vendor_user: Option<&'a str>,
    pub user_id: UserId,
    /// Where the vendor is to send this deployment's notifications.
    pub webhook_url: &'a str,
}

/// What a vendor's webhook handshake (`GET` on the receiver) is answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Handshake {
    /// 200 with this JSON (a challenge echoed).
    Json(Value),
    /// This status and no body (Fitbit: 204 for its code, 404 for a wrong one).
    Status(u16),
    /// 401: the query does not verify.
    Refused,
}

/// What a notification asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// Pull the vendor user's data over the window.
    Pull(String, Window),
    /// Data sent in the notification itself (Garmin's push): kept as a page of `collection`
    /// and mapped as one.
    Data { user: String, collection: &'static str, page: Value },
    /// The vendor user removed the app (believed once the vendor refuses the token too).
    Deregistered(String),
}

/// An error a vendor reports inside a 2xx page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageError {
    /// Its rate limit: wait this many seconds.
    RateLimited(i64),
    /// It refuses the token (its 401, told in the body).
    TokenRefused,
    /// Anything else, worth a retry later.
    Failed(String),
}

/// What a vendor's notifications are: the handshake of its receiver, the proof a notification
/// carries, and what one asks for. One concern of a [`Vendor`], implemented apart (each vendor's
/// `impl Notifications`), so a reader of its pulls or its mapping does not wade through it.
pub trait Notifications {
    /// The vendor's webhook handshake (`GET` on the receiver).
    fn webhook_challenge(
        &self,
        _ends: &Endpoints,
        _query: &dyn Fn(&str) -> Option<String>,
    ) -> Handshake {
        Handshake::Refused
    }
    /// A notification's body as JSON (most send JSON; Withings a form).
    fn webhook_body(&self, body: &[u8]) -> Option<Value> {
        serde_json::from_slice(body).ok()
    }
    /// Whether a notification is the vendor's (its signature over the raw body).
    fn webhook_verified(
        &self,
        ends: &Endpoints,
        header: &dyn Fn(&str) -> Option<String>,
        body: &[u8],
    ) -> bool;
    /// What a notification asks for.
    fn webhook_notices(&self, body: &Value) -> Vec<Notice>;
}

/// What a vendor says of its users and their connection: who the user is (asked of it or read
/// from its token answer), and the calls made once a user connected or to end the app's access.
/// One concern of a [`Vendor`], implemented apart (each vendor's `impl Account`).
pub trait Account {
    /// Where the vendor says who the user is (none where the token answer names the user), and
    /// the id in its answer.
    fn user_url(&self, _api_url: &str) -> Option<String> {
        None
    }
    fn user_id(&self, _body: &Value) -> Option<String> {
        None
    }
    /// The vendor's id of the user in its token response, for vendors that put it there.
    fn token_user_id(&self, _token: &Value) -> Option<String> {
        None
    }
    /// Calls made once a user connected (registration, notification subscriptions).
    fn on_connect(&self, _c: &Connected<'_>) -> Vec<Call> {
        Vec::new()
    }
    /// Calls that end the app's access at the vendor, where it offers that.
    fn revoke(&self, _c: &Connected<'_>) -> Vec<Call> {
        Vec::new()
    }
}

/// A cloud vendor wearhouse takes data from.
pub trait Vendor: Account + Notifications + Pages + Mapping + Send + Sync {
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
    /// Ends the app's access at the vendor (best effort: a vendor that cannot be reached still
    /// loses the connection here; its token expires on its own). Vendors whose revocation is
    /// more than fixed calls do it their own way.
    fn revoke_at_vendor<'a>(
        &'a self,
        http: &'a reqwest::Client,
        c: Connected<'a>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            for call in self.revoke(&c) {
                if let Err(why) = calls::send(http, c.ends, call).await {
                    let provider = self.provider().slug;
                    tracing::warn!(provider, why, "the vendor did not revoke the token");
                }
            }
        })
    }
}

/// How a vendor's data is read: the pages of each collection over a window, how a request is
/// authenticated, what a page says of errors and limits, and (Garmin) how history is asked for.
/// One concern of a [`Vendor`], implemented apart (each vendor's `impl Pages`).
pub trait Pages {
    /// The longest window one request of `collection` may cover; a pull reads a longer one in
    /// steps of it.
    fn window_step(&self, _collection: &str) -> Option<chrono::Duration> {
        None
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
    fn next_page(&self, page: &Value, current: Option<&str>, window: Window) -> Option<String>;
    /// Authenticates a data request: the user's token as `Bearer`, and what else the vendor
    /// asks for.
    fn authorize(
        &self,
        request: reqwest::RequestBuilder,
        _ends: &Endpoints,
        token: &str,
    ) -> reqwest::RequestBuilder {
        request.bearer_auth(token)
    }
    /// An error the vendor reports in a page it answered with 2xx.
    fn page_error(&self, _page: &Value) -> Option<PageError> {
        None
    }
    /// Seconds to wait after a 429 when the vendor's own rule says (else the headers do).
    fn rate_limit_wait(&self, _headers: &reqwest::header::HeaderMap) -> Option<i64> {
        None
    }
    /// The longest window one backfill request may cover.
    fn backfill_step(&self) -> Option<chrono::Duration> {
        None
    }
    /// For a vendor whose history arrives by notification after it is asked for (Garmin's
    /// backfill): the URL that asks for `collection` over `window`.
    fn backfill_url(&self, _api_url: &str, _collection: &str, _window: Window) -> Option<url::Url> {
        None
    }
}

/// What a vendor's pages become: samples, sessions and scores in canonical units. One concern
/// of a [`Vendor`], implemented apart (each vendor's `impl Mapping`).
pub trait Mapping {
    /// Adds one page of `collection` to the batch.
    fn map_page(&self, collection: &str, page: &Value, out: &mut Normalised);
}

/// Every vendor with an adapter.
pub static VENDORS: &[&dyn Vendor] = &[
    &garmin::Garmin,
    &oura::Oura,
    &whoop::Whoop,
    &polar::Polar,
    &fitbit::Fitbit,
    &strava::Strava,
    &suunto::Suunto,
    &ultrahuman::Ultrahuman,
    &withings::Withings,
];

/// Exact (case-sensitive) lookup.
pub fn by_slug(slug: &str) -> Option<&'static dyn Vendor> {
    VENDORS.iter().copied().find(|v| v.provider().slug == slug)
}

/// Where a vendor sends users back after OAuth (the redirect URI registered at the vendor, and
/// sent again with token calls): `<public_url>/api/v1/oauth/<slug>/callback`.
pub fn callback_url(public_url: &str, slug: &str) -> String {
    format!("{}/api/v1/oauth/{slug}/callback", public_url.trim_end_matches('/'))
}

/// Where a vendor sends notifications: `<public_url>/api/v1/providers/<slug>/webhooks`, with
/// `?token=` where the vendor's notifications carry one.
pub fn webhook_url(public_url: &str, vendor: &dyn Vendor, ends: &Endpoints) -> String {
    let slug = vendor.provider().slug;
    let url = format!("{}/api/v1/providers/{slug}/webhooks", public_url.trim_end_matches('/'));
    match (vendor.info().proof, ends.webhook_token.as_deref()) {
        (Proof::UrlToken, Some(token)) => {
            let query = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("token", token)
                .finish();
            format!("{url}?{query}")
        }
        _ => url,
    }
}

/// Whether a notification's URL carries what the vendor's rule asks (`token` is its query's).
pub fn url_token_holds(vendor: &dyn Vendor, ends: &Endpoints, token: Option<&str>) -> bool {
    let same =
        |expected: &str| token.is_some_and(|t| webhook::same(t.as_bytes(), expected.as_bytes()));
    match (vendor.info().proof, ends.webhook_token.as_deref()) {
        (Proof::UrlToken, Some(expected)) => same(expected),
        (Proof::UrlToken, None) => false,
        _ => true,
    }
}

/// Every provider: the phone providers, then the cloud vendors.
pub fn providers() -> impl Iterator<Item = &'static Provider> {
    schema::catalogue::providers::PROVIDERS.iter().chain(VENDORS.iter().map(|v| v.provider()))
}

/// Any provider, phone or cloud, by its exact identifier.
pub fn provider(slug: &str) -> Option<&'static Provider> {
    schema::catalogue::providers::by_slug(slug).or_else(|| by_slug(slug).map(|v| v.provider()))
}

/// The vendor's id of the user behind `tokens`: from the token response where the vendor puts
/// it there, else asked of the vendor (best effort: `None` when the vendor does not say or
/// cannot be reached; webhooks then cannot name the user).
pub(crate) async fn vendor_user_id(
    http: &reqwest::Client,
    vendor: &dyn Vendor,
    ends: &Endpoints,
    tokens: &Tokens,
) -> Option<String> {
    if let Some(id) = vendor.token_user_id(&tokens.raw) {
        return Some(id);
    }
    let url = vendor.user_url(&ends.api_url)?;
    let request = vendor.authorize(http.get(url), ends, &tokens.access_token);
    let response = request.timeout(std::time::Duration::from_secs(20)).send().await.ok()?;
    let body: Value = response.error_for_status().ok()?.json().await.ok()?;
    if vendor.page_error(&body).is_some() {
        return None;
    }
    vendor.user_id(&body)
}
