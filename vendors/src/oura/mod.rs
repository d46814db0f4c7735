//! Oura (ring): cloud API v2. Facts and their sources: `docs/vendors/oura.md`.

pub mod map;

use schema::catalogue::providers::{Capabilities, LiveSyncMode, Provider};

use crate::{ClientAuth, OAuthSpec, Vendor};

pub(crate) struct Oura;

static PROVIDER: Provider = Provider {
    slug: "oura",
    name: "Oura",
    has_cloud_api: true,
    live_sync_mode: Some(LiveSyncMode::Pull),
    live_sync_configurable: true,
    capabilities: Capabilities {
        rest_pull: true,
        webhook_stream: true,
        webhook_ping: false,
        webhook_callback: false,
        max_historical_days: None,
    },
};

static OAUTH: OAuthSpec = OAuthSpec {
    authorize_url: "https://cloud.ouraring.com/oauth/authorize",
    token_url: "https://api.ouraring.com/oauth/token",
    // What the mapping needs; `email` and `tag` are not asked for. The OpenAPI document says
    // `spo2Daily` (some pages say `spo2`): docs/vendors/oura.md.
    scopes: &["personal", "daily", "heartrate", "workout", "session", "spo2Daily"],
    pkce: false,
    client_auth: ClientAuth::Body,
};

impl Vendor for Oura {
    fn provider(&self) -> &'static Provider {
        &PROVIDER
    }

    fn oauth(&self) -> &'static OAuthSpec {
        &OAUTH
    }

    fn api_url(&self) -> &'static str {
        "https://api.ouraring.com"
    }
}
