//! Which webhook URLs are accepted: `https` only (plain `http` only to loopback, behind a
//! development flag), and no private, loopback or link-local targets unless allowed, so that
//! an endpoint cannot be pointed at the service's own network. Hosts given by name are checked
//! by the sender when it resolves them (`webhooks::guard`).

use url::{Host, Url};
use webhooks::guard::host_is_internal;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TargetRules {
    pub allow_http_loopback: bool,
    pub allow_private: bool,
}

fn is_loopback_host(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => ip.is_loopback(),
    }
}

/// Checks a webhook URL; the error says what is wrong.
pub fn check(raw: &str, rules: TargetRules) -> Result<Url, String> {
    let url = Url::parse(raw.trim()).map_err(|e| format!("Invalid URL: {e}"))?;
    let host = url.host().ok_or("The URL needs a host")?;
    match url.scheme() {
        "https" => {}
        "http" if rules.allow_http_loopback && is_loopback_host(&host) => {}
        "http" => return Err("Webhook URLs must use https".into()),
        other => return Err(format!("Unsupported URL scheme '{other}': use https")),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("Webhook URLs must not carry credentials".into());
    }
    if host_is_internal(&host) && !rules.allow_private {
        return Err(
            "Webhook URLs must not point at private, loopback or link-local addresses".into()
        );
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRICT: TargetRules = TargetRules { allow_http_loopback: false, allow_private: false };
    const DEV: TargetRules = TargetRules { allow_http_loopback: true, allow_private: true };

    #[test]
    fn https_public_only_by_default() {
        assert!(check("https://hooks.example.com/in", STRICT).is_ok());
        for bad in [
            "http://hooks.example.com/in",
            "ftp://hooks.example.com/",
            "https://127.0.0.1/in",
            "https://10.1.2.3/in",
            "https://192.168.0.10/",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]/",
            "https://[fd00::1]/",
            "https://[::ffff:10.0.0.1]/",
            "https://localhost/",
            "https://user:pw@hooks.example.com/",
            "not a url",
        ] {
            assert!(check(bad, STRICT).is_err(), "{bad}");
        }
    }

    #[test]
    fn development_flags() {
        assert!(check("http://127.0.0.1:9000/in", DEV).is_ok());
        assert!(check("http://localhost:9000/in", DEV).is_ok());
        // Plain http stays refused off loopback.
        assert!(check("http://hooks.example.com/in", DEV).is_err());
        let private_only = TargetRules { allow_http_loopback: false, allow_private: true };
        assert!(check("https://10.0.0.5/in", private_only).is_ok());
        assert!(check("http://127.0.0.1/in", private_only).is_err());
    }
}
