//! Unit tests of the SSRF guard.

use super::*;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

#[test]
fn local_and_private_addresses_are_refused_by_default() {
    let access = WebAccess::new();
    for refused in [
        "127.0.0.1",
        "127.8.9.10",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "100.100.100.200",
        "0.0.0.0",
        "224.0.0.1",
        "255.255.255.255",
        "::1",
        "::",
        "fc00::1",
        "fd00:ec2::254",
        "fe80::1",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
        "64:ff9b::a9fe:a9fe",
        "2002:7f00:1::1",
        "ff02::1",
    ] {
        assert!(!access.allows_addr(ip(refused)), "{refused}");
    }
    for public in [
        "8.8.8.8",
        "172.32.0.1",
        "192.169.0.1",
        "1.1.1.1",
        "2606:4700::1111",
        "64:ff9b::808:808",
    ] {
        assert!(access.allows_addr(ip(public)), "{public}");
    }
}

#[test]
fn allow_list_entries() {
    let access = WebAccess::from_entries([
        "127.0.0.1",
        "10.0.0.0/8",
        "Docs.Internal",
        "*.corp.example",
        "[::1]",
    ])
    .unwrap();
    assert!(access.allows_addr(ip("127.0.0.1")));
    assert!(!access.allows_addr(ip("127.0.0.2")));
    assert!(access.allows_addr(ip("10.200.0.1")));
    assert!(access.allows_addr(ip("::ffff:10.0.0.1")));
    assert!(access.allows_addr(ip("::1")));
    assert!(!access.allows_addr(ip("192.168.0.1")));
    assert!(access.allows_host("docs.internal"));
    assert!(access.allows_host("DOCS.internal."));
    assert!(access.allows_host("wiki.corp.example"));
    assert!(!access.allows_host("corp.example"));
    assert!(!access.allows_host("evilcorp.example"));
    assert!(!access.allows_host("127.0.0.1"));
}

#[test]
fn bad_entries_are_refused() {
    for bad in [
        "",
        "10.0.0.0/33",
        "::/129",
        "a b",
        "*.",
        "http://x",
        "1.2.3.4/x",
    ] {
        assert!(WebAccess::from_entries([bad]).is_err(), "{bad:?}");
    }
}

proptest::proptest! {
    /// An IPv4 address is judged the same however IPv6 embeds it.
    #[test]
    fn embedded_v4_is_judged_like_v4(bits: u32) {
        let v4 = Ipv4Addr::from(bits);
        let [a, b, c, d] = v4.octets();
        let high = u16::from_be_bytes([a, b]);
        let low = u16::from_be_bytes([c, d]);
        let access = WebAccess::new();
        let plain = access.allows_addr(IpAddr::V4(v4));
        let mapped = IpAddr::V6(v4.to_ipv6_mapped());
        let nat64 = IpAddr::V6(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, high, low));
        let six_to_four = IpAddr::V6(Ipv6Addr::new(0x2002, high, low, 0, 0, 0, 0, 1));
        proptest::prop_assert_eq!(access.allows_addr(mapped), plain);
        proptest::prop_assert_eq!(access.allows_addr(nat64), plain);
        proptest::prop_assert_eq!(access.allows_addr(six_to_four), plain);
    }

    /// A network entry allows exactly the addresses sharing its prefix.
    #[test]
    fn networks_allow_their_prefix(net: u32, addr: u32, bits in 0u8..=32) {
        let entry = format!("{}/{bits}", Ipv4Addr::from(net));
        let access = WebAccess::from_entries([entry]).unwrap();
        let shift = 32 - u32::from(bits);
        let same = bits == 0 || (net >> shift) == (addr >> shift);
        let candidate = Ipv4Addr::from(addr);
        let expected = (same && !never_reached(IpAddr::V4(candidate)))
            || blocked_reason(IpAddr::V4(candidate)).is_none();
        proptest::prop_assert_eq!(access.allows_addr(IpAddr::V4(candidate)), expected);
    }
}

#[test]
fn multicast_and_reserved_addresses_stay_closed_even_when_listed() {
    let access = WebAccess::from_entries([
        "0.0.0.0/0",
        "::/0",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "0.0.0.0/8",
        "255.255.255.255",
        "ff00::/8",
        "::",
    ])
    .unwrap();
    for never in [
        "0.0.0.0",
        "0.1.2.3",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "::",
        "ff02::1",
        "ff0e::1",
        "::ffff:224.0.0.1",
        "::ffff:0.0.0.0",
        "::240.0.0.1",
        "64:ff9b::e000:1",
        "2002:ffff:ffff::1",
        "2002::1",
    ] {
        assert!(never_reached(ip(never)), "{never}");
        assert!(!access.allows_addr(ip(never)), "{never}");
        assert!(!askable(ip(never)), "{never}");
    }
    // The listed networks still open what they hold besides.
    for listed in [
        "127.0.0.1",
        "10.0.0.1",
        "::1",
        "fc00::1",
        "::ffff:127.0.0.1",
    ] {
        assert!(!never_reached(ip(listed)), "{listed}");
        assert!(access.allows_addr(ip(listed)), "{listed}");
    }
}

proptest::proptest! {
    /// An IPv4 address webfetch never reaches stays closed under an allow-list naming
    /// every address, however IPv6 embeds it.
    #[test]
    fn never_reached_v4_is_closed_in_every_embedding(bits: u32) {
        let v4 = Ipv4Addr::from(bits);
        let [a, b, c, d] = v4.octets();
        let high = u16::from_be_bytes([a, b]);
        let low = u16::from_be_bytes([c, d]);
        let access = WebAccess::from_entries(["0.0.0.0/0", "::/0"]).unwrap();
        let closed = v4.is_link_local() || a == 0 || a >= 224;
        for addr in [
            IpAddr::V4(v4),
            IpAddr::V6(v4.to_ipv6_mapped()),
            IpAddr::V6(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, high, low)),
            IpAddr::V6(Ipv6Addr::new(0x2002, high, low, 0, 0, 0, 0, 1)),
        ] {
            proptest::prop_assert_eq!(never_reached(addr), closed, "{}", addr);
            proptest::prop_assert_eq!(access.allows_addr(addr), !closed, "{}", addr);
        }
    }
}

#[test]
fn prefixes_compare_bitwise() {
    assert!(in_network(ip("172.20.1.1"), ip("172.16.0.0"), 12));
    assert!(!in_network(ip("172.32.1.1"), ip("172.16.0.0"), 12));
    assert!(in_network(ip("1.2.3.4"), ip("0.0.0.0"), 0));
}
