//! IP prefixes as Go's `net/netip` reads them, and the containment rules
//! upstream's `pkg/api/servicecidr` builds on them: which ServiceCIDR
//! overlaps or contains a prefix, which contains an address.
//!
//! A prefix's address is kept as a 128-bit number with its family, so
//! masking is arithmetic: `192.168.0.0/24` is the 32-bit number
//! `0xC0A80000` with 24 bits kept; `192.168.0.63` is in `192.168.0.0/26`
//! but, being its IPv4 broadcast address (all 6 host bits set), is not
//! *contained* by it as a ServiceCIDR, which never allocates it.

use std::net::IpAddr;

/// An IP prefix (`netip.Prefix`): an address, possibly with host bits
/// set (`192.168.0.1/24` parses, as in Go), and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    /// The address as written.
    addr: IpAddr,
    /// The prefix length, at most the family's width.
    bits: u32,
}

impl Prefix {
    /// `netip.ParsePrefix`: `None` for anything but `address/length` with
    /// a length in the family's range (Go refuses a zone, a sign or a
    /// leading zero in the length too).
    pub fn parse(text: &str) -> Option<Self> {
        let (addr, bits) = text.split_once('/')?;
        let addr: IpAddr = addr.parse().ok()?;
        let canonical = bits == "0" || (!bits.starts_with('0') && bits.bytes().all(|b| b.is_ascii_digit()));
        let bits: u32 = bits.parse().ok().filter(|_| canonical)?;
        (bits <= width(addr)).then_some(Self { addr, bits })
    }

    /// `Overlaps`: same family, and one prefix's network holds the
    /// other's.
    pub fn overlaps(&self, other: &Prefix) -> bool {
        if self.addr.is_ipv4() != other.addr.is_ipv4() {
            return false;
        }
        let bits = self.bits.min(other.bits);
        masked(value(self.addr), width(self.addr), bits) == masked(value(other.addr), width(other.addr), bits)
    }

    /// Whether this prefix contains `other` as upstream's `ContainsPrefix`
    /// asks: they overlap and this one is no longer (`10.0.0.0/16`
    /// contains `10.0.1.0/24` and itself).
    pub fn contains_prefix(&self, other: &Prefix) -> bool {
        self.overlaps(other) && self.bits <= other.bits
    }

    /// Upstream's `PrefixContainsIP`: in the prefix, not its network
    /// address and, for IPv4, not its broadcast address (the addresses a
    /// ServiceCIDR never allocates).
    pub fn contains_service_ip(&self, ip: IpAddr) -> bool {
        if self.addr.is_ipv4() != ip.is_ipv4() {
            return false;
        }
        let width = width(ip);
        let network = masked(value(self.addr), width, self.bits);
        let ip = value(ip);
        if masked(ip, width, self.bits) != network || ip == network {
            return false;
        }
        let host_bits = width - self.bits;
        let broadcast = network | low_bits(host_bits);
        !(self.addr.is_ipv4() && ip == broadcast)
    }

    /// `IPv4` or `IPv6`, the family label of the IPAddresses it holds.
    pub fn family(&self) -> &'static str {
        if self.addr.is_ipv4() { "IPv4" } else { "IPv6" }
    }
}

/// 32 or 128.
fn width(addr: IpAddr) -> u32 {
    if addr.is_ipv4() { 32 } else { 128 }
}

fn value(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

/// The lowest `n` bits set (`n` ≤ 128).
fn low_bits(n: u32) -> u128 {
    if n == 0 { 0 } else { u128::MAX >> (128 - n) }
}

/// `value` (of a `width`-bit family) with all but its first `bits` bits
/// cleared.
fn masked(value: u128, width: u32, bits: u32) -> u128 {
    value & !low_bits(width - bits)
}

#[cfg(test)]
mod tests {
    //! Go's parsing and upstream's `PrefixContainsIP` cases.

    use super::*;

    fn prefix(text: &str) -> Prefix {
        Prefix::parse(text).expect(text)
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().expect(text)
    }

    #[test]
    fn prefixes_parse_as_go_parses_them() {
        for good in ["192.168.0.0/24", "192.168.0.1/24", "2001:db2::/64", "0.0.0.0/0", "::/128"] {
            assert!(Prefix::parse(good).is_some(), "{good}");
        }
        for bad in ["", "192.168.0.0", "192.168.0.0/33", "2001:db2::/129", "192.168.0.0/024", "1.2.3.4/+8", "x/8"] {
            assert!(Prefix::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn overlaps_and_containment_follow_the_network_bits() {
        assert!(prefix("192.168.0.0/24").overlaps(&prefix("192.168.0.0/16")));
        assert!(prefix("192.168.0.0/16").overlaps(&prefix("192.168.0.128/25")));
        assert!(!prefix("192.168.0.0/24").overlaps(&prefix("192.168.1.0/24")));
        assert!(!prefix("192.168.0.0/24").overlaps(&prefix("::/0")), "families never overlap");
        assert!(prefix("192.168.0.0/16").contains_prefix(&prefix("192.168.0.0/24")));
        assert!(!prefix("192.168.0.0/26").contains_prefix(&prefix("192.168.0.0/24")));
        assert!(prefix("2001:db2::/48").contains_prefix(&prefix("2001:db2::/64")));
    }

    #[test]
    fn a_service_ip_is_neither_the_network_nor_the_ipv4_broadcast_address() {
        let v4 = prefix("192.168.0.0/24");
        assert!(v4.contains_service_ip(ip("192.168.0.1")));
        assert!(v4.contains_service_ip(ip("192.168.0.254")));
        assert!(!v4.contains_service_ip(ip("192.168.0.0")));
        assert!(!v4.contains_service_ip(ip("192.168.0.255")));
        assert!(!v4.contains_service_ip(ip("192.168.1.1")));
        assert!(!v4.contains_service_ip(ip("::ffff:192.168.0.1")), "a 4-in-6 address is IPv6");
        let v6 = prefix("2001:db2::/64");
        assert!(!v6.contains_service_ip(ip("2001:db2::")));
        assert!(v6.contains_service_ip(ip("2001:0db2::ffff:ffff:ffff:ffff")), "IPv6 has no broadcast address");
        assert!(!prefix("10.0.0.0/32").contains_service_ip(ip("10.0.0.0")), "a /32 holds only its network address");
    }
}
