//! The provider catalogue: where data comes from.
//!
//! A provider is listed only once wearhouse can take its data: `phonehealth` (Apple Health,
//! pushed by the iOS SDK or imported from an export file), `google` (Health Connect) and
//! `samsung` (Samsung Health), both pushed by the Android SDK. Cloud vendors are not listed
//! here: each brings its own [`Provider`] with its adapter (`vendors::VENDORS`).

/// How a provider's new data reaches us once a user is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveSyncMode {
    Pull,
    Webhook,
}

impl LiveSyncMode {
    pub fn as_str(self) -> &'static str {
        match self {
            LiveSyncMode::Pull => "pull",
            LiveSyncMode::Webhook => "webhook",
        }
    }

    pub fn parse(s: &str) -> Option<LiveSyncMode> {
        [LiveSyncMode::Pull, LiveSyncMode::Webhook].into_iter().find(|m| m.as_str() == s)
    }
}

/// How finely a cloud provider's 24/7 data is stored; `None` in settings: the provider's
/// default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataGranularity {
    Daily,
    Hourly,
    Raw,
}

impl DataGranularity {
    pub fn as_str(self) -> &'static str {
        match self {
            DataGranularity::Daily => "daily",
            DataGranularity::Hourly => "hourly",
            DataGranularity::Raw => "raw",
        }
    }

    pub fn parse(s: &str) -> Option<DataGranularity> {
        [DataGranularity::Daily, DataGranularity::Hourly, DataGranularity::Raw]
            .into_iter()
            .find(|g| g.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Provider {
    /// Lowercase identifier, as used in paths and stored rows.
    pub slug: &'static str,
    pub name: &'static str,
    pub has_cloud_api: bool,
    /// Null for push-only providers.
    pub live_sync_mode: Option<LiveSyncMode>,
    pub live_sync_configurable: bool,
    pub capabilities: Capabilities,
}

/// How a provider can deliver data (the connection's capability flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    pub rest_pull: bool,
    pub webhook_stream: bool,
    pub webhook_ping: bool,
    pub webhook_callback: bool,
    /// How far back a first sync reaches; `None` when the provider sets no limit.
    pub max_historical_days: Option<i32>,
}

impl Provider {
    /// Relative URL of the provider's icon, served by the API.
    pub fn icon_url(&self) -> String {
        format!("/static/provider-icons/{}.svg", self.slug)
    }
}

pub(crate) const PHONEHEALTH: Provider = Provider {
    slug: "phonehealth",
    name: "Apple Health",
    has_cloud_api: false,
    live_sync_mode: None,
    live_sync_configurable: false,
    capabilities: PUSH_ONLY,
};

/// Health Connect on Android, pushed by the Android SDK.
pub(crate) const GOOGLE: Provider = Provider {
    slug: "google",
    name: "Google Health Connect",
    has_cloud_api: false,
    live_sync_mode: None,
    live_sync_configurable: false,
    capabilities: PUSH_ONLY,
};

/// Samsung Health, pushed by the Android SDK.
pub(crate) const SAMSUNG: Provider = Provider {
    slug: "samsung",
    name: "Samsung Health",
    has_cloud_api: false,
    live_sync_mode: None,
    live_sync_configurable: false,
    capabilities: PUSH_ONLY,
};

const PUSH_ONLY: Capabilities = Capabilities {
    rest_pull: false,
    webhook_stream: false,
    webhook_ping: false,
    webhook_callback: false,
    max_historical_days: None,
};

/// The phone providers (pushed by the SDKs or imported), in display order; the cloud vendors'
/// are in `vendors::VENDORS`.
pub const PROVIDERS: &[Provider] = &[PHONEHEALTH, GOOGLE, SAMSUNG];

/// Exact (case-sensitive) lookup: provider names are lowercase everywhere.
pub fn by_slug(slug: &str) -> Option<&'static Provider> {
    PROVIDERS.iter().find(|p| p.slug == slug)
}

/// For a name that is not a provider only because of its case, the lowercase name meant.
pub fn case_hint(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    (lower != name).then(|| by_slug(&lower).map(|p| p.slug)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_is_case_sensitive_with_a_hint() {
        assert_eq!(by_slug("phonehealth"), Some(&PHONEHEALTH));
        assert_eq!(by_slug("PhoneHealth"), None);
        assert_eq!(case_hint("PhoneHealth"), Some("phonehealth"));
        assert_eq!(case_hint("phonehealth"), None);
        assert_eq!(case_hint("fitbit"), None);
    }

    #[test]
    fn slugs_are_lowercase_and_icons_relative() {
        for p in PROVIDERS {
            assert_eq!(p.slug, p.slug.to_ascii_lowercase());
            assert!(p.icon_url().starts_with('/'));
        }
    }
}
