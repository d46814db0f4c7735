//! Oura (ring): cloud API v2. Facts and their sources: `docs/vendors/oura.md`.

pub mod map;

use chrono::{DateTime, Duration, Utc};
use ingest::Normalised;
use schema::catalogue::providers::{Capabilities, LiveSyncMode, Provider};
use serde_json::Value;

use crate::{Account, Mapping, Notifications, Pages};
use crate::{ClientAuth, Info, OAuthSpec, Vendor};
use map::Collection;

const COLLECTIONS: [Collection; 6] = [
    Collection::Sleep,
    Collection::Workout,
    Collection::DailyActivity,
    Collection::HeartRate,
    Collection::DailyReadiness,
    Collection::DailySpo2,
];

/// The collections' paths, in the order read: from `Collection::path`, not written again.
static PATHS: [&str; 6] = [
    COLLECTIONS[0].path(),
    COLLECTIONS[1].path(),
    COLLECTIONS[2].path(),
    COLLECTIONS[3].path(),
    COLLECTIONS[4].path(),
    COLLECTIONS[5].path(),
];

fn collection(path: &str) -> Option<Collection> {
    COLLECTIONS.into_iter().find(|c| c.path() == path)
}

pub(crate) struct Oura;

static INFO: Info = Info {
    provider: Provider {
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
    },
    oauth: OAuthSpec::standard(
        // What the mapping needs; `email` and `tag` are not asked for. The OpenAPI document says
        // `spo2Daily` (some pages say `spo2`): docs/vendors/oura.md.
        "https://cloud.ouraring.com/oauth/authorize",
        "https://api.ouraring.com/oauth/token",
        &["personal", "daily", "heartrate", "workout", "session", "spo2Daily"],
        false,
        ClientAuth::Body,
    ),
    api_url: "https://api.ouraring.com",
    collections: &PATHS,
    settings: &[],
    notification_bytes: crate::SMALL_NOTIFICATIONS,
    history: crate::History::Pull,
    proof: crate::Proof::TimedSignature,
};

impl Vendor for Oura {
    fn info(&self) -> &'static Info {
        &INFO
    }
}

impl Pages for Oura {
    /// Daily collections take dates, read in the user's own zone, and a date-only end leaves
    /// that day out: a day either side, so the window is covered whatever the zone (a re-read
    /// day stores nothing twice). Heart rate takes instants.
    fn page_url(
        &self,
        api_url: &str,
        collection: &str,
        (start, end): (DateTime<Utc>, DateTime<Utc>),
        next: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        let base = format!("{}/v2/usercollection/{collection}", api_url.trim_end_matches('/'));
        let mut url = url::Url::parse(&base)?;
        {
            let mut q = url.query_pairs_mut();
            if collection == Collection::HeartRate.path() {
                q.append_pair("start_datetime", &start.to_rfc3339());
                q.append_pair("end_datetime", &end.to_rfc3339());
            } else {
                let day = |t: DateTime<Utc>| t.date_naive().format("%Y-%m-%d").to_string();
                q.append_pair("start_date", &day(start - Duration::days(1)));
                q.append_pair("end_date", &day(end + Duration::days(1)));
            }
            if let Some(token) = next {
                q.append_pair("next_token", token);
            }
        }
        Ok(url)
    }

    fn next_page(&self, page: &Value, _: Option<&str>, _: crate::Window) -> Option<String> {
        page.get("next_token").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string)
    }
}

impl Mapping for Oura {
    fn map_page(&self, path: &str, page: &Value, out: &mut Normalised) {
        if let Some(c) = collection(path) {
            map::page(c, page, out);
        }
    }
}

impl Account for Oura {
    /// `personal_info` answers with any token, whatever the scopes.
    fn user_url(&self, api_url: &str) -> Option<String> {
        Some(format!("{}/v2/usercollection/personal_info", api_url.trim_end_matches('/')))
    }

    fn user_id(&self, body: &Value) -> Option<String> {
        body.get("id").and_then(Value::as_str).map(str::to_string)
    }

    /// `POST /oauth/revoke?access_token=…` beside the token endpoint.
    fn revoke(&self, c: &crate::Connected<'_>) -> Vec<crate::Call> {
        let Some(base) = c.ends.token_url.strip_suffix("/oauth/token") else { return Vec::new() };
        let Ok(mut url) = url::Url::parse(&format!("{base}/oauth/revoke")) else {
            return Vec::new();
        };
        url.query_pairs_mut().append_pair("access_token", c.access_token);
        vec![crate::Call::new(reqwest::Method::POST, url, crate::CallAuth::None)]
    }
}

impl Notifications for Oura {
    /// `GET ?verification_token=…&challenge=…` when a subscription is made: the token given
    /// with it, echoed; the answer `{"challenge": …}`.
    fn webhook_challenge(
        &self,
        ends: &crate::Endpoints,
        query: &dyn Fn(&str) -> Option<String>,
    ) -> crate::Handshake {
        crate::webhook::echo(
            ends.webhook_token.as_deref(),
            query("verification_token"),
            query("challenge"),
            "challenge",
        )
    }

    /// `x-oura-signature`: HMAC-SHA256 with the client secret over `x-oura-timestamp` and the
    /// raw body, hex (compared whatever its case).
    fn webhook_verified(
        &self,
        ends: &crate::Endpoints,
        header: &dyn Fn(&str) -> Option<String>,
        body: &[u8],
    ) -> bool {
        let names = ("x-oura-signature", "x-oura-timestamp");
        crate::webhook::timestamped(
            header,
            names,
            crate::webhook::Encoding::Hex,
            &ends.client_secret,
            body,
        )
    }

    /// `{event_type, data_type, object_id, event_time, user_id}`: the user's data around the
    /// event is pulled (a day either side), which reads the object whatever its type.
    fn webhook_notices(&self, body: &Value) -> Vec<crate::Notice> {
        let user = body.get("user_id").and_then(Value::as_str);
        let at = body
            .get("event_time")
            .and_then(Value::as_str)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&Utc));
        match (user, at) {
            (Some(user), Some(at)) => at
                .checked_sub_signed(Duration::days(1))
                .zip(at.checked_add_signed(Duration::days(1)))
                .map(|window| vec![crate::Notice::Pull(user.to_string(), window)])
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}
