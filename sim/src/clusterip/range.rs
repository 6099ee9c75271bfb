//! The service IP range (`--service-cluster-ip-range`) and the allocator's
//! arithmetic over it, as upstream `pkg/registry/core/service/ipallocator`
//! (the IPAddress-backed allocator 1.37 runs): which addresses may be
//! handed out, which are kept for static (requested) allocation, and its
//! errors, word for word.
//!
//! An IPv4 range gives neither its network nor its broadcast address, an
//! IPv6 range not its first (subnet-router anycast) address. Random
//! allocation starts in the upper part of the range and only falls back
//! to the lowest `min(max(16, size / 16), 256)` addresses, left for users
//! who ask for an IP (a /12 keeps 10.96.0.1 to 10.96.1.0 that way).

use std::collections::BTreeSet;
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use rand::Rng;

/// A service IP range: an address prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceCidr {
    /// The network address (host bits zero).
    network: IpAddr,
    /// The prefix length.
    bits: u8,
}

/// Why a requested or next IP cannot be allocated (upstream's allocator
/// errors; their `Display` is upstream's text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// `ErrMismatchedNetwork`: the IP is in no service range.
    #[error("the provided network does not match the current range")]
    MismatchedNetwork,
    /// `ErrNotInRange`: in the range's prefix but not allocatable (its
    /// network or broadcast address).
    #[error("the provided IP ({ip}) is not in the valid range. The range of valid IPs is {range}")]
    NotInRange {
        /// The requested IP.
        ip: IpAddr,
        /// The range.
        range: ServiceCidr,
    },
    /// `ErrAllocated`: another service has it.
    #[error("provided IP is already allocated")]
    Allocated,
    /// `ErrFull`: nothing left.
    #[error("range is full")]
    Full,
}

impl ServiceCidr {
    /// kube-apiserver's default `--service-cluster-ip-range`, 10.96.0.0/12.
    pub const DEFAULT: ServiceCidr =
        ServiceCidr { network: IpAddr::V4(std::net::Ipv4Addr::new(10, 96, 0, 0)), bits: 12 };

    /// Whether the range is IPv6.
    pub fn is_ipv6(&self) -> bool {
        self.network.is_ipv6()
    }

    /// The `ipFamilies` name of the range's family.
    pub fn family(&self) -> &'static str {
        if self.is_ipv6() { "IPv6" } else { "IPv4" }
    }

    /// Whether `ip` is inside the prefix.
    pub fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv6() == self.is_ipv6() && to_bits(ip) & self.mask() == to_bits(self.network)
    }

    /// Checks that `ip` may be given to a service that asks for it.
    pub fn check_requested(&self, ip: IpAddr, used: &BTreeSet<IpAddr>) -> Result<(), AllocError> {
        if !self.contains(ip) {
            return Err(AllocError::MismatchedNetwork);
        }
        let (first, last) = self.bounds();
        let offset = to_bits(ip) - to_bits(self.network);
        if offset < first || offset > last {
            return Err(AllocError::NotInRange { ip, range: *self });
        }
        if used.contains(&ip) { Err(AllocError::Allocated) } else { Ok(()) }
    }

    /// A free IP for a service that asks for none, at random, from the
    /// dynamic part of the range first.
    pub fn next_free(&self, used: &BTreeSet<IpAddr>, rng: &mut impl Rng) -> Result<IpAddr, AllocError> {
        let (first, last) = self.bounds();
        let split = first + reserved_for_static(last - first + 1);
        // Offsets [split, last] first, then the static part [first, split).
        for (from, end) in [(split, last + 1), (first, split)] {
            let span = end - from;
            if span == 0 {
                continue;
            }
            let start = rng.random_range(0..span);
            let free = (0..span).map(|i| self.at(from + (start + i) % span)).find(|ip| !used.contains(ip));
            if let Some(ip) = free {
                return Ok(ip);
            }
        }
        Err(AllocError::Full)
    }

    /// The first and last allocatable offsets from the network address.
    fn bounds(&self) -> (u128, u128) {
        let last_offset = (1u128 << (self.max_bits() - self.bits)) - 1;
        // IPv4 excludes the broadcast address too.
        let last = if self.is_ipv6() { last_offset } else { last_offset.saturating_sub(1) };
        (1, last)
    }

    /// The address at `offset` from the network address.
    fn at(&self, offset: u128) -> IpAddr {
        from_bits(to_bits(self.network) + offset, self.is_ipv6())
    }

    fn max_bits(&self) -> u8 {
        if self.is_ipv6() { 128 } else { 32 }
    }

    /// The prefix's bits set (ranges are at most 2^64 addresses).
    fn mask(&self) -> u128 {
        let all = if self.is_ipv6() { u128::MAX } else { u128::from(u32::MAX) };
        all & !((1u128 << (self.max_bits() - self.bits)) - 1)
    }
}

/// Upstream `calculateRangeOffset`: how many of the lowest addresses random
/// allocation leaves for requested IPs, `min(max(16, size / 16), 256)`, or
/// none in a range of at most 16.
fn reserved_for_static(size: u128) -> u128 {
    if size <= 16 { 0 } else { (size / 16).clamp(16, 256) }
}

fn to_bits(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

fn from_bits(bits: u128, v6: bool) -> IpAddr {
    if v6 { IpAddr::V6(bits.into()) } else { IpAddr::V4(u32::try_from(bits).unwrap_or(u32::MAX).into()) }
}

/// A range that does not parse, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid service IP range {text:?}: {reason}")]
pub struct InvalidCidr {
    text: String,
    reason: &'static str,
}

impl FromStr for ServiceCidr {
    type Err = InvalidCidr;

    /// `address/bits`, the address being the network's (no host bits set).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = |reason| InvalidCidr { text: text.to_owned(), reason };
        let (address, bits) = text.split_once('/').ok_or_else(|| err("expected address/prefix-length"))?;
        let network: IpAddr = address.parse().map_err(|_| err("not an IP address"))?;
        let bits: u8 = bits.parse().map_err(|_| err("not a prefix length"))?;
        let cidr = ServiceCidr { network, bits };
        if bits > cidr.max_bits() {
            return Err(err("prefix length too long"));
        }
        if network.is_ipv6() && bits < 64 {
            return Err(err("an IPv6 range may be no larger than a /64"));
        }
        if to_bits(network) & !cidr.mask() != 0 {
            return Err(err("host bits set"));
        }
        let (first, last) = cidr.bounds();
        if last < first {
            return Err(err("no usable address"));
        }
        Ok(cidr)
    }
}

impl fmt::Display for ServiceCidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an IP")
    }

    #[test]
    fn ranges_parse_and_print() {
        assert_eq!("10.96.0.0/12".parse::<ServiceCidr>(), Ok(ServiceCidr::DEFAULT));
        assert_eq!(ServiceCidr::DEFAULT.to_string(), "10.96.0.0/12");
        assert_eq!("fd00:10:96::/112".parse::<ServiceCidr>().map(|c| c.family()), Ok("IPv6"));
        for bad in ["10.96.0.1/12", "10.96.0.0", "10.96.0.0/33", "10.0.0.0/31", "fd00::/48", "x/8"] {
            assert!(bad.parse::<ServiceCidr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn requested_ips_must_be_in_the_range_usable_and_free() {
        let range = ServiceCidr::DEFAULT;
        let used = BTreeSet::from([ip("10.96.0.10")]);
        assert_eq!(range.check_requested(ip("10.96.0.11"), &used), Ok(()));
        assert_eq!(range.check_requested(ip("10.111.255.254"), &used), Ok(()));
        assert_eq!(range.check_requested(ip("10.96.0.10"), &used), Err(AllocError::Allocated));
        assert_eq!(range.check_requested(ip("10.0.0.5"), &used), Err(AllocError::MismatchedNetwork));
        assert_eq!(range.check_requested(ip("fd00::5"), &used), Err(AllocError::MismatchedNetwork));
        for edge in ["10.96.0.0", "10.111.255.255"] {
            let refused = range.check_requested(ip(edge), &used).expect_err(edge);
            assert_eq!(
                refused.to_string(),
                format!("the provided IP ({edge}) is not in the valid range. The range of valid IPs is 10.96.0.0/12")
            );
        }
        assert_eq!(AllocError::Allocated.to_string(), "provided IP is already allocated");
        assert_eq!(AllocError::MismatchedNetwork.to_string(), "the provided network does not match the current range");
    }

    #[test]
    fn random_allocation_prefers_the_upper_range_then_fills_the_lower_one() {
        // A /28 has 14 usable addresses, 16 or fewer: nothing is kept back.
        assert_eq!(reserved_for_static(14), 0);
        assert_eq!(reserved_for_static(254), 16);
        assert_eq!(reserved_for_static((1 << 20) - 2), 256);
        let range: ServiceCidr = "10.0.0.0/24".parse().expect("range");
        let mut used = BTreeSet::new();
        let mut rng = rand::rng();
        for _ in 0..238 {
            let next = range.next_free(&used, &mut rng).expect("free IPs left");
            let last = match next {
                IpAddr::V4(v4) => v4.octets()[3],
                IpAddr::V6(_) => unreachable!("an IPv4 range"),
            };
            assert!((17..=254).contains(&last), "{next} is outside the dynamic part");
            assert!(used.insert(next));
        }
        for _ in 0..16 {
            let next = range.next_free(&used, &mut rng).expect("the static part is left");
            assert!(used.insert(next));
        }
        assert_eq!(range.next_free(&used, &mut rng), Err(AllocError::Full));
        assert!(!used.contains(&ip("10.0.0.0")) && !used.contains(&ip("10.0.0.255")));
        let v6: ServiceCidr = "fd00::/120".parse().expect("range");
        let first = v6.next_free(&BTreeSet::new(), &mut rng).expect("an IP");
        assert!(v6.contains(first) && first != ip("fd00::"));
    }
}
