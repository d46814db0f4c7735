//! Where the sender may connect: never to private, loopback or link-local addresses unless
//! the deployment allows them. Host names are checked after resolution (so a public name that
//! resolves to an internal address is refused), IP literals before connecting.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether an address is loopback, private, link-local or otherwise not on the public internet.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => internal_v4(v4),
            None => internal_v6(v6),
        },
    }
}

fn internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_documentation()
        || a == 0
        // Carrier-grade NAT, 100.64.0.0/10.
        || (a == 100 && (64..128).contains(&b))
}

fn internal_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        // Unique local fc00::/7 and link-local fe80::/10.
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
}

/// A resolver that drops internal addresses (unless allowed) and fails when none is left.
#[derive(Debug, Clone, Copy)]
pub struct GuardedResolver {
    pub allow_private: bool,
}

/// The usable addresses of a lookup.
pub fn usable(addrs: impl Iterator<Item = SocketAddr>, allow_private: bool) -> Vec<SocketAddr> {
    addrs.filter(|a| allow_private || !is_internal(a.ip())).collect()
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let addrs = usable(found, allow);
            if addrs.is_empty() {
                let msg =
                    format!("{host} resolves only to private, loopback or link-local addresses");
                return Err(msg.into());
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Whether a URL's host names the inside before any lookup: an internal IP literal, or
/// `localhost`. Other names are judged where they resolve ([`GuardedResolver`]). The one host
/// rule for endpoint URLs (checked when saved) and for the sender (checked again when sending).
pub fn host_is_internal(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost") || d.ends_with(".localhost"),
        url::Host::Ipv4(ip) => is_internal(IpAddr::V4(*ip)),
        url::Host::Ipv6(ip) => is_internal(IpAddr::V6(*ip)),
    }
}

/// Whether a URL's host, as written, may be connected to.
pub fn literal_allowed(url: &str, allow_private: bool) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else { return false };
    parsed.host().is_some_and(|h| allow_private || !host_is_internal(&h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_dropped_unless_allowed() {
        let addrs = || {
            [
                "127.0.0.1:443",
                "10.0.0.1:443",
                "93.184.216.34:443",
                "[fe80::1]:443",
                "[2606:4700::1]:443",
            ]
            .into_iter()
            .filter_map(|a| a.parse::<SocketAddr>().ok())
        };
        let public: Vec<String> = usable(addrs(), false).iter().map(|a| a.to_string()).collect();
        assert_eq!(public, ["93.184.216.34:443", "[2606:4700::1]:443"]);
        assert_eq!(usable(addrs(), true).len(), 5);
        assert!(!literal_allowed("https://169.254.169.254/x", false));
        assert!(literal_allowed("https://169.254.169.254/x", true));
        assert!(literal_allowed("https://hooks.example.com/x", false));
    }

    #[tokio::test]
    async fn names_resolving_inside_are_refused() {
        let guarded = GuardedResolver { allow_private: false };
        let name: Name = "localhost".parse().expect("a name");
        assert!(guarded.resolve(name).await.is_err());
        let open = GuardedResolver { allow_private: true };
        let name: Name = "localhost".parse().expect("a name");
        assert!(open.resolve(name).await.is_ok());
    }
}
