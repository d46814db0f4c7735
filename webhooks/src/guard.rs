//! Where the sender may connect: never to private, loopback or link-local addresses unless
//! the deployment allows them. Host names are checked after resolution (so a public name that
//! resolves to an internal address is refused), IP literals before connecting.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether an address is loopback, private, link-local or otherwise not on the public internet.
pub(crate) fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => internal_v4(v4),
            None => internal_v6(v6),
        },
    }
}

fn internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        // Carrier-grade NAT, 100.64.0.0/10.
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments, 192.0.0.0/24.
        || (a == 192 && b == 0 && c == 0)
        // Benchmarking, 198.18.0.0/15.
        || (a == 198 && (b & 0xfe) == 18)
        // Reserved, 240.0.0.0/4.
        || a >= 240
}

fn internal_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // IPv4-compatible ::/96 (deprecated; it reaches IPv4 hosts some stacks route).
        || s[..6] == [0; 6]
        // Unique local fc00::/7 and link-local fe80::/10.
        || (s[0] & 0xfe00) == 0xfc00
        || (s[0] & 0xffc0) == 0xfe80
        // Local-use NAT64, 64:ff9b:1::/48.
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1)
        // NAT64 64:ff9b::/96 and 6to4 2002::/16 carry an IPv4 address: judged by that one.
        || (s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] && internal_v4(embedded(s[6], s[7])))
        || (s[0] == 0x2002 && internal_v4(embedded(s[1], s[2])))
}

/// A resolver that drops internal addresses (unless allowed) and fails when none is left.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GuardedResolver {
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
pub(crate) fn literal_allowed(url: &str, allow_private: bool) -> bool {
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

    #[test]
    fn every_special_purpose_range_is_inside() {
        for inside in [
            "::7f00:1",           // IPv4-compatible 127.0.0.1
            "::a00:1",            // IPv4-compatible 10.0.0.1
            "64:ff9b::7f00:1",    // NAT64 of 127.0.0.1
            "64:ff9b::a9fe:a9fe", // NAT64 of 169.254.169.254
            "64:ff9b:1::1",       // local-use NAT64
            "2002:7f00:1::1",     // 6to4 of 127.0.0.1
            "2002:c0a8:101::1",   // 6to4 of 192.168.1.1
            "ff02::1",
            "198.18.0.1",
            "198.19.255.254",
            "192.0.0.8",
            "240.0.0.1",
            "255.255.255.254",
            "224.0.0.251",
        ] {
            let ip: IpAddr = inside.parse().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
            assert!(is_internal(ip), "{inside}");
        }
        for outside in ["64:ff9b::5db8:d822", "2002:5db8:d822::1", "198.20.0.1", "192.0.2.0"] {
            let ip: IpAddr = outside.parse().unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
            // 192.0.2.0/24 is documentation: inside too.
            assert_eq!(is_internal(ip), outside == "192.0.2.0", "{outside}");
        }
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
