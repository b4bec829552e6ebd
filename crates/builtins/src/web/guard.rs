//! The SSRF guard: which addresses webfetch may connect to.
//!
//! By default nothing local is reachable: loopback, private (RFC 1918), carrier-grade NAT,
//! link-local (which holds the cloud metadata endpoints), unique-local, multicast and reserved
//! addresses are refused, also when an IPv6 address embeds one of them (IPv4-mapped, NAT64,
//! 6to4). The check runs on the address actually connected to: IP-literal URLs are checked
//! before any request, host names inside the client's resolver (so a name cannot resolve to
//! one address for the check and another for the connection), and again on every redirect.
//! [`WebAccess`] allows hosts, addresses or networks explicitly (internal documentation
//! sites, tests on 127.0.0.1); link-local, multicast and reserved addresses stay closed
//! whatever it lists ([`never_reached`]).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// An allow-list entry that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid webfetch allow-list entry {entry:?}: expected a host name (`docs.internal`, \
     `*.corp.example`), an IP address or a network (`10.0.0.0/8`)"
)]
pub struct InvalidAllowEntry {
    /// The entry as given.
    pub entry: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Allowed {
    /// An exact host name, lower-case.
    Host(String),
    /// `*.suffix`: any host below `suffix` (not `suffix` itself), lower-case, without `*.`.
    Subdomains(String),
    /// An address network.
    Net(IpAddr, u8),
}

/// webfetch's network policy: what it may reach besides public addresses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebAccess {
    allowed: Vec<Allowed>,
}

impl WebAccess {
    /// The default policy: only public addresses.
    pub fn new() -> Self {
        Self::default()
    }

    /// A policy allowing each of `entries` (see [`allow`](Self::allow)).
    pub fn from_entries<I, S>(entries: I) -> Result<Self, InvalidAllowEntry>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut access = Self::new();
        for entry in entries {
            access.allow(entry.as_ref())?;
        }
        Ok(access)
    }

    /// Allows `entry`: a host name (`docs.internal`; every address it resolves to is then
    /// allowed), `*.corp.example` (every host below it), an IP address (`127.0.0.1`, `::1`)
    /// or a network (`10.0.0.0/8`, `fd00::/8`).
    pub fn allow(&mut self, entry: &str) -> Result<(), InvalidAllowEntry> {
        let invalid = || InvalidAllowEntry {
            entry: entry.to_owned(),
        };
        let trimmed = entry.trim();
        let bare = trimmed.trim_start_matches('[').trim_end_matches(']');
        let parsed = if let Some((addr, bits)) = trimmed.split_once('/') {
            let addr: IpAddr = addr.parse().map_err(|_| invalid())?;
            let bits: u8 = bits.parse().map_err(|_| invalid())?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            if bits > max {
                return Err(invalid());
            }
            Allowed::Net(addr, bits)
        } else if let Ok(addr) = bare.parse::<IpAddr>() {
            Allowed::Net(addr, if addr.is_ipv4() { 32 } else { 128 })
        } else if let Some(suffix) = trimmed.strip_prefix("*.") {
            if !valid_host(suffix) {
                return Err(invalid());
            }
            Allowed::Subdomains(suffix.to_ascii_lowercase())
        } else if valid_host(trimmed) {
            Allowed::Host(trimmed.to_ascii_lowercase())
        } else {
            return Err(invalid());
        };
        self.allowed.push(parsed);
        Ok(())
    }

    /// True when `host` (a name, not an address) is allowed by name.
    pub fn allows_host(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.allowed.iter().any(|entry| match entry {
            Allowed::Host(name) => *name == host,
            Allowed::Subdomains(suffix) => host
                .strip_suffix(suffix.as_str())
                .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1),
            Allowed::Net(..) => false,
        })
    }

    /// True when webfetch may connect to `addr`: it is public, or an allowed network holds it
    /// and it is not an address webfetch never reaches (see [`never_reached`]).
    pub fn allows_addr(&self, addr: IpAddr) -> bool {
        if never_reached(addr) {
            return false;
        }
        blocked_reason(addr).is_none()
            || self.allowed.iter().any(|entry| match entry {
                Allowed::Net(net, bits) => in_network(addr, *net, *bits),
                _ => false,
            })
    }

    /// Checks a URL host before connecting: an IP literal must be allowed; a name is checked
    /// when it resolves.
    pub fn check_host(&self, host: &url::Host<&str>) -> Result<(), Blocked> {
        let addr = match host {
            url::Host::Domain(_) => return Ok(()),
            url::Host::Ipv4(v4) => IpAddr::V4(*v4),
            url::Host::Ipv6(v6) => IpAddr::V6(*v6),
        };
        if self.allows_addr(addr) {
            Ok(())
        } else {
            Err(Blocked::new(&addr.to_string(), addr))
        }
    }
}

/// AWS's IPv6 instance metadata endpoint, a unique-local address like a developer's.
const AWS_METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

/// Addresses no allow-list entry and no approval makes reachable, in any embedding:
/// link-local networks (where the cloud metadata endpoints live), AWS's IPv6 metadata
/// address, multicast, and reserved addresses (`0.0.0.0/8`, which Linux connects to this
/// host, `240.0.0.0/4` with the broadcast address, the unspecified `::`). A connection to
/// any of them is never what a user listing a network meant.
pub fn never_reached(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => never_reached_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded(v6) {
                return never_reached_v4(v4);
            }
            let first = v6.segments()[0];
            v6.is_unspecified()
                || first & 0xffc0 == 0xfe80
                || first & 0xff00 == 0xff00
                || v6 == AWS_METADATA_V6
        }
    }
}

fn never_reached_v4(v4: Ipv4Addr) -> bool {
    let first = v4.octets()[0];
    v4.is_link_local() || first == 0 || first >= 224
}

/// The IPv4 address `v6` carries: IPv4-mapped, NAT64 (`64:ff9b::/96`), 6to4 (`2002::/16`)
/// or IPv4-compatible (`::a.b.c.d`, other than `::` and `::1`).
fn embedded(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let segments = v6.segments();
    match segments[0] {
        0x0064 if segments[1] == 0xff9b && segments[2..6] == [0; 4] => {
            Some(embedded_v4(segments[6], segments[7]))
        }
        0x2002 => Some(embedded_v4(segments[1], segments[2])),
        0 if segments[1..6] == [0; 5] && !v6.is_unspecified() && !v6.is_loopback() => {
            Some(embedded_v4(segments[6], segments[7]))
        }
        _ => None,
    }
}

/// True when the user may be asked to let webfetch reach `addr`: loopback, a private
/// (RFC 1918) network or a unique-local IPv6 address, cloud metadata excluded.
pub fn askable(addr: IpAddr) -> bool {
    if never_reached(addr) {
        return false;
    }
    let addr = match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 => v4,
    };
    match addr {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_private(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.segments()[0] & 0xfe00 == 0xfc00,
    }
}

fn valid_host(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

fn in_network(addr: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (addr, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => prefix_eq(&a.octets(), &n.octets(), bits),
        (IpAddr::V6(a), IpAddr::V6(n)) => prefix_eq(&a.octets(), &n.octets(), bits),
        (IpAddr::V6(a), IpAddr::V4(_)) => a
            .to_ipv4_mapped()
            .is_some_and(|v4| in_network(IpAddr::V4(v4), net, bits)),
        (IpAddr::V4(_), IpAddr::V6(_)) => false,
    }
}

fn prefix_eq(a: &[u8], b: &[u8], bits: u8) -> bool {
    let bits = usize::from(bits);
    let (whole, rest) = (bits / 8, bits % 8);
    if a[..whole] != b[..whole] {
        return false;
    }
    if rest == 0 {
        return true;
    }
    let mask = 0xffu8 << (8 - rest);
    (a[whole] & mask) == (b[whole] & mask)
}

/// Why `addr` is refused by default, or `None` for a public address.
pub fn blocked_reason(addr: IpAddr) -> Option<&'static str> {
    match addr {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_reason(v4: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = v4.octets();
    match (a, b) {
        (0, _) => Some("an unspecified (\"this network\") address"),
        (127, _) => Some("a loopback address"),
        (10, _) | (172, 16..=31) | (192, 168) => Some("a private network address"),
        (100, 64..=127) => Some("a carrier-grade NAT address"),
        (169, 254) => Some("a link-local address (cloud metadata endpoints live there)"),
        (192, 0) if c == 0 => Some("an IETF protocol assignment address"),
        (198, 18 | 19) => Some("a benchmarking network address"),
        (224..=239, _) => Some("a multicast address"),
        (240..=255, _) => Some("a reserved or broadcast address"),
        _ => None,
    }
}

fn v6_reason(v6: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded(v6) {
        return v4_reason(v4);
    }
    if v6.is_unspecified() {
        return Some("an unspecified address");
    }
    if v6.is_loopback() {
        return Some("a loopback address");
    }
    match v6.segments()[0] {
        s if s & 0xfe00 == 0xfc00 => Some("a unique-local address"),
        s if s & 0xffc0 == 0xfe80 => Some("a link-local address"),
        s if s & 0xffc0 == 0xfec0 => Some("a site-local address"),
        s if s & 0xff00 == 0xff00 => Some("a multicast address"),
        _ => None,
    }
}

fn embedded_v4(high: u16, low: u16) -> Ipv4Addr {
    let [a, b] = high.to_be_bytes();
    let [c, d] = low.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

/// A connection webfetch refuses to make.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}, which webfetch {}",
    if *host == addr.to_string() {
        format!("{host} is {reason}")
    } else {
        format!("{host} resolves to {addr}, {reason}")
    },
    if askable(*addr) {
        "reaches only when the user approves the call or `webfetch.allow` in the configuration \
         (tackle.json) lists it"
    } else {
        "never reaches"
    }
)]
pub struct Blocked {
    /// The host as requested.
    pub host: String,
    /// The refused address.
    pub addr: IpAddr,
    /// Why it is refused.
    pub reason: &'static str,
}

impl Blocked {
    pub(crate) fn new(host: &str, addr: IpAddr) -> Self {
        Self {
            host: host.to_owned(),
            addr,
            reason: blocked_reason(addr).unwrap_or("a refused address"),
        }
    }
}

/// A resolver that drops refused addresses and fails when none is left.
#[derive(Clone)]
pub(crate) struct GuardedResolver {
    pub(crate) access: Arc<WebAccess>,
}

impl fmt::Debug for GuardedResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuardedResolver")
            .field("access", &self.access)
            .finish()
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let access = Arc::clone(&self.access);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if access.allows_host(&host) {
                let reachable = found.into_iter().filter(|addr| !never_reached(addr.ip()));
                return Ok(Box::new(reachable) as Addrs);
            }
            let first = found.first().copied();
            let permitted: Vec<SocketAddr> = found
                .into_iter()
                .filter(|addr| access.allows_addr(addr.ip()))
                .collect();
            match (permitted.is_empty(), first) {
                (false, _) => Ok(Box::new(permitted.into_iter()) as Addrs),
                (true, Some(addr)) => Err(Box::new(Blocked::new(&host, addr.ip())) as _),
                (true, None) => Err(format!("{host} resolves to no address").into()),
            }
        })
    }
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
