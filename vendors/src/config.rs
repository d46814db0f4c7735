//! Each vendor's app credentials and endpoints, from variables named after it:
//! `<VENDOR>_CLIENT_ID` and `<VENDOR>_CLIENT_SECRET` (a vendor is usable only with both), and
//! optionally `<VENDOR>_AUTHORIZE_URL`, `<VENDOR>_TOKEN_URL`, `<VENDOR>_API_URL` in place of
//! the documented ones (a proxy, or a local server in tests), `<VENDOR>_WEBHOOK_TOKEN`, the
//! verification token given to the vendor with a webhook subscription, `<VENDOR>_WEBHOOK_SECRET`,
//! the key the vendor signs notifications with where it is not the client secret, and the
//! vendor's own further settings ([`crate::Info::settings`]), all required.

use std::collections::BTreeMap;

use crate::{Endpoints, VENDORS, Vendor};

/// The configured vendors' endpoints, by identifier.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VendorConfig {
    configured: BTreeMap<&'static str, Endpoints>,
}

impl VendorConfig {
    /// Reads every vendor's variables through `var` (the process environment, or a map).
    pub fn read(var: impl Fn(&str) -> Option<String>) -> VendorConfig {
        let mut configured = BTreeMap::new();
        for vendor in VENDORS {
            if let Some(ends) = endpoints(*vendor, &var) {
                let slug = vendor.provider().slug;
                if vendor.info().proof == crate::Proof::UrlToken && ends.webhook_token.is_none() {
                    let variable = format!("{}_WEBHOOK_TOKEN", slug.to_ascii_uppercase());
                    tracing::warn!(
                        provider = slug,
                        "{variable} is not set: every notification from {slug} is refused \
                         (it signs nothing); set it and register the notification URL with \
                         ?token=<it>"
                    );
                }
                configured.insert(slug, ends);
            }
        }
        VendorConfig { configured }
    }

    /// The vendor's endpoints, when it is configured.
    pub fn endpoints(&self, slug: &str) -> Option<&Endpoints> {
        self.configured.get(slug)
    }

    pub fn is_configured(&self, slug: &str) -> bool {
        self.configured.contains_key(slug)
    }
}

fn endpoints(vendor: &dyn Vendor, var: &impl Fn(&str) -> Option<String>) -> Option<Endpoints> {
    let prefix = vendor.provider().slug.to_ascii_uppercase();
    let get = |name: &str| var(&format!("{prefix}_{name}")).filter(|v| !v.trim().is_empty());
    let spec = vendor.oauth();
    let mut settings = std::collections::BTreeMap::new();
    for name in vendor.info().settings {
        settings.insert(*name, get(name)?);
    }
    Some(Endpoints {
        client_id: get("CLIENT_ID")?,
        client_secret: get("CLIENT_SECRET")?,
        authorize_url: get("AUTHORIZE_URL").unwrap_or_else(|| spec.authorize_url.into()),
        token_url: get("TOKEN_URL").unwrap_or_else(|| spec.token_url.into()),
        api_url: get("API_URL").unwrap_or_else(|| vendor.api_url().into()),
        webhook_token: get("WEBHOOK_TOKEN"),
        webhook_secret: get("WEBHOOK_SECRET"),
        settings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vendor_is_configured_with_both_credentials_only() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_string())
        };
        let none = VendorConfig::read(env(&[("OURA_CLIENT_ID", "id")]));
        assert!(!none.is_configured("oura"));
        let some = VendorConfig::read(env(&[
            ("OURA_CLIENT_ID", "id"),
            ("OURA_CLIENT_SECRET", "s"),
            ("OURA_TOKEN_URL", "http://127.0.0.1:9/token"),
        ]));
        let ends = some.endpoints("oura").unwrap_or_else(|| panic!("configured"));
        assert_eq!(ends.token_url, "http://127.0.0.1:9/token");
        assert!(ends.authorize_url.starts_with("https://"));
    }
}
