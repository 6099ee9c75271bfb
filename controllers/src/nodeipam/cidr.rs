//! A CIDR as the node IPAM controller reads and writes it: parsed as
//! upstream's `netutils.ParseCIDRSloppy` parses one (an IPv4 octet may
//! carry leading zeros, `010.0.0.0/8` is `10.0.0.0/8`), held as its
//! network address (the host bits cleared, as Go's `net.IPNet` holds it)
//! and written as Go writes an `IPNet` (`10.244.1.0/24`, `fd00::/64`).
//!
//! Addresses of both families are `u128`s, an IPv4 one in the low 32 bits,
//! so the cidrset's index arithmetic is one shift whatever the family.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// An IP family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// 32-bit addresses.
    V4,
    /// 128-bit addresses.
    V6,
}

impl Family {
    /// Bits in an address of this family.
    pub const fn bits(self) -> u8 {
        match self {
            Family::V4 => 32,
            Family::V6 => 128,
        }
    }
}

/// A parsed CIDR: its family, network address and prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr {
    family: Family,
    /// The network address (host bits clear).
    base: u128,
    prefix: u8,
}

/// A string that is no CIDR; displays as Go's `net.ParseError` does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid CIDR address: {0}")]
pub struct ParseError(pub String);

/// The mask of `prefix` leading ones among `bits` bits, as a `u128`.
pub const fn mask(prefix: u8, bits: u8) -> u128 {
    if prefix == 0 {
        return 0;
    }
    (u128::MAX << (128 - prefix as u32)) >> (128 - bits as u32)
}

impl Cidr {
    /// The CIDR of `address` (host bits cleared) with `prefix`.
    ///
    /// # Panics
    /// Never for a `prefix` within the family's bits; callers keep it there.
    pub fn new(family: Family, address: u128, prefix: u8) -> Cidr {
        debug_assert!(prefix <= family.bits(), "prefix within the family");
        Cidr { family, base: address & mask(prefix, family.bits()), prefix }
    }

    /// Parses `text` as upstream's `ParseCIDRSloppy`.
    ///
    /// # Errors
    /// Not `address/prefix`, an address of neither family, or a prefix
    /// longer than the family's addresses.
    pub fn parse_sloppy(text: &str) -> Result<Cidr, ParseError> {
        let bad = || ParseError(text.to_owned());
        let (address, prefix) = text.split_once('/').ok_or_else(bad)?;
        if prefix.is_empty() || prefix.len() > 3 || !prefix.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let prefix: u8 = prefix.parse().map_err(|_| bad())?;
        let (family, address) = match parse_ipv4_sloppy(address) {
            Some(v4) => (Family::V4, u128::from(u32::from(v4))),
            None => (Family::V6, u128::from(address.parse::<Ipv6Addr>().map_err(|_| bad())?)),
        };
        if prefix > family.bits() {
            return Err(bad());
        }
        Ok(Cidr::new(family, address, prefix))
    }

    /// Its family.
    pub fn family(&self) -> Family {
        self.family
    }

    /// Whether it is IPv6 (upstream `netutils.IsIPv6CIDR`).
    pub fn is_ipv6(&self) -> bool {
        self.family == Family::V6
    }

    /// Its network address.
    pub fn base(&self) -> u128 {
        self.base
    }

    /// Its prefix length (upstream's mask size).
    pub fn prefix(&self) -> u8 {
        self.prefix
    }

    /// Its mask.
    pub fn mask(&self) -> u128 {
        mask(self.prefix, self.family.bits())
    }

    /// The last address in it.
    pub fn last(&self) -> u128 {
        self.base | (!self.mask() & mask(self.family.bits(), self.family.bits()))
    }

    /// Whether `address`, of `family`, is in it (Go's `IPNet.Contains`).
    pub fn contains(&self, family: Family, address: u128) -> bool {
        self.family == family && address & self.mask() == self.base
    }

    /// Whether the two share an address: one contains the other's network
    /// address (upstream's test before filtering out the service range).
    pub fn overlaps(&self, other: &Cidr) -> bool {
        self.contains(other.family, other.base & self.mask()) || other.contains(self.family, self.base & other.mask())
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", address_string(self.family, self.base), self.prefix)
    }
}

/// `address` of `family` as Go writes an IP (`10.244.1.0`, `fd00::1`).
pub fn address_string(family: Family, address: u128) -> String {
    match family {
        // The low 32 bits hold an IPv4 address.
        #[allow(clippy::cast_possible_truncation)]
        Family::V4 => Ipv4Addr::from(address as u32).to_string(),
        Family::V6 => Ipv6Addr::from(address).to_string(),
    }
}

/// Four dot-separated decimal octets of up to three digits each, leading
/// zeros allowed (Go's `ParseIP` before 1.17, which `ParseCIDRSloppy`
/// keeps).
fn parse_ipv4_sloppy(text: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = text.split('.');
    for octet in &mut octets {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *octet = part.parse().ok()?;
    }
    parts.next().is_none().then(|| Ipv4Addr::from(octets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_as_upstream_sloppily_and_writes_as_go() {
        for (text, written) in [
            ("10.244.0.0/16", "10.244.0.0/16"),
            ("10.244.3.7/16", "10.244.0.0/16"),
            ("010.010.0.0/16", "10.10.0.0/16"),
            ("0.0.0.0/0", "0.0.0.0/0"),
            ("2001:db8::/48", "2001:db8::/48"),
            ("2001:DB8:0:0:1::/64", "2001:db8::/64"),
            ("fd00:10:96::/112", "fd00:10:96::/112"),
            ("::/0", "::/0"),
        ] {
            assert_eq!(Cidr::parse_sloppy(text).map(|c| c.to_string()).as_deref(), Ok(written), "{text}");
        }
        for text in ["", "10.0.0.0", "10.0.0.0/33", "10.0.0/8", "10.0.0.256/8", "::/129", "foo/8", "10.0.0.0/-1"] {
            assert_eq!(Cidr::parse_sloppy(text), Err(ParseError(text.to_owned())), "{text}");
        }
        assert_eq!(ParseError("x".to_owned()).to_string(), "invalid CIDR address: x");
    }

    #[test]
    fn contains_and_overlaps_within_one_family() {
        let cluster = Cidr::parse_sloppy("10.244.0.0/16").unwrap();
        let inside = Cidr::parse_sloppy("10.244.8.0/24").unwrap();
        let wider = Cidr::parse_sloppy("10.0.0.0/8").unwrap();
        let apart = Cidr::parse_sloppy("10.96.0.0/12").unwrap();
        let v6 = Cidr::parse_sloppy("::/0").unwrap();
        assert!(cluster.overlaps(&inside) && inside.overlaps(&cluster));
        assert!(cluster.overlaps(&wider) && wider.overlaps(&cluster));
        assert!(!cluster.overlaps(&apart) && !cluster.overlaps(&v6));
        assert_eq!(inside.last(), cluster.base() | 0x08ff);
        assert_eq!(v6.last(), u128::MAX);
    }
}
