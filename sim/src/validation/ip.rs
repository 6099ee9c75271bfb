//! IP address syntax, as `k8s.io/apimachinery/pkg/util/validation/ip.go`
//! checks it (`IsValidIP`, `IsValidIPv4Address`, `IsValidIPv6Address`:
//! the strict rules, no leading zeros, no IPv4-mapped IPv6, no zone), and
//! the addresses an endpoint may not have (`ValidateEndpointIP`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::errors::Errors;
use super::render::go_quote;

/// The family an address must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    /// `IsValidIPv4Address`.
    V4,
    /// `IsValidIPv6Address`.
    V6,
}

/// `isValidIPInternal` then, when `family` is set and nothing else was
/// wrong, the family check. Returns the address when it is valid.
pub(super) fn ip_address(errs: &mut Errors, path: &str, value: &str, family: Option<Family>) -> Option<IpAddr> {
    if value.is_empty() {
        errs.required(path, "expected an IP address");
        return None;
    }
    let Ok(ip) = value.parse::<IpAddr>() else {
        let detail = if parse_sloppy(value).is_some() && !value.contains('%') {
            "IP address cannot have leading 0s"
        } else if is_cidr(value) {
            "expected an IP address (e.g. 10.9.8.7 or 2001:db8::ffff), got CIDR value"
        } else if value.split_once('%').is_some_and(|(ip, zone)| !zone.is_empty() && ip.parse::<Ipv6Addr>().is_ok()) {
            errs.invalid(path, go_quote(value), "IP address with zone specifier is not allowed");
            return None;
        } else {
            "must be a valid IP address (e.g. 10.9.8.7 or 2001:db8::ffff)"
        };
        errs.invalid(path, go_quote(value), detail);
        return None;
    };
    if let IpAddr::V6(v6) = ip
        && v6.to_ipv4_mapped().is_some()
    {
        errs.invalid(path, go_quote(value), "IPv4-mapped IPv6 address is not allowed");
        return None;
    }
    match (family, ip) {
        (Some(Family::V4), IpAddr::V6(_)) => errs.invalid(path, go_quote(value), "must be an IPv4 address"),
        (Some(Family::V6), IpAddr::V4(_)) => errs.invalid(path, go_quote(value), "must be an IPv6 address"),
        _ => return Some(ip),
    }
    None
}

/// `ValidateEndpointIP`: no unspecified, loopback, link-local or
/// link-local multicast address.
pub(super) fn endpoint_ip(errs: &mut Errors, path: &str, value: &str) {
    let Some(ip) = parse_sloppy(value) else {
        errs.invalid(path, go_quote(value), "must be a valid IP address");
        return;
    };
    let (unspecified, loopback, link_local, link_local_multicast) = match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            (v4.is_unspecified(), a == 127, a == 169 && b == 254, a == 224 && b == 0 && c == 0)
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            (v6.is_unspecified(), v6.is_loopback(), s[0] & 0xffc0 == 0xfe80, s[0] & 0xff0f == 0xff02)
        }
    };
    let shown = go_quote(value);
    if unspecified {
        errs.invalid(path, shown.clone(), &format!("may not be unspecified ({value})"));
    }
    if loopback {
        errs.invalid(path, shown.clone(), "may not be in the loopback range (127.0.0.0/8, ::1/128)");
    }
    if link_local {
        errs.invalid(path, shown.clone(), "may not be in the link-local range (169.254.0.0/16, fe80::/10)");
    }
    if link_local_multicast {
        errs.invalid(path, shown, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)");
    }
}

/// `netutils.ParseIPSloppy`: as Go's `net.ParseIP` before 1.17, IPv4
/// octets may have leading zeros; an IPv4-mapped IPv6 address is IPv4.
pub(super) fn parse_sloppy(value: &str) -> Option<IpAddr> {
    if let Ok(v6) = value.parse::<Ipv6Addr>() {
        return Some(v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4));
    }
    let octets: Vec<u8> = value
        .split('.')
        .map(|part| {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            match part.trim_start_matches('0') {
                "" => Some(0),
                significant => significant.parse::<u8>().ok(),
            }
        })
        .collect::<Option<_>>()?;
    let [a, b, c, d] = octets.as_slice() else { return None };
    Some(IpAddr::V4(Ipv4Addr::new(*a, *b, *c, *d)))
}

/// Whether `value` is an `address/prefix` CIDR (`netip.ParsePrefix`).
fn is_cidr(value: &str) -> bool {
    let Some((ip, bits)) = value.split_once('/') else { return false };
    let Ok(ip) = ip.parse::<IpAddr>() else { return false };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    !bits.is_empty()
        && bits.bytes().all(|b| b.is_ascii_digit())
        && (bits == "0" || !bits.starts_with('0'))
        && bits.parse::<u8>().is_ok_and(|b| b <= max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(value: &str, family: Option<Family>) -> Vec<String> {
        let mut errs = Errors::default();
        ip_address(&mut errs, "ip", value, family);
        errs.finish().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn strict_ip_syntax() {
        assert!(check("10.9.8.7", Some(Family::V4)).is_empty());
        assert!(check("2001:db8::ffff", Some(Family::V6)).is_empty());
        assert_eq!(check("", None), ["ip: Required value: expected an IP address"]);
        assert_eq!(check("010.9.8.7", None), ["ip: Invalid value: \"010.9.8.7\": IP address cannot have leading 0s"]);
        assert_eq!(
            check("10.0.0.0/8", None),
            [
                "ip: Invalid value: \"10.0.0.0/8\": expected an IP address (e.g. 10.9.8.7 or 2001:db8::ffff), got CIDR value"
            ]
        );
        assert_eq!(
            check("foo", None),
            ["ip: Invalid value: \"foo\": must be a valid IP address (e.g. 10.9.8.7 or 2001:db8::ffff)"]
        );
        assert_eq!(
            check("fe80::1%eth0", None),
            ["ip: Invalid value: \"fe80::1%eth0\": IP address with zone specifier is not allowed"]
        );
        assert_eq!(
            check("::ffff:1.2.3.4", None),
            ["ip: Invalid value: \"::ffff:1.2.3.4\": IPv4-mapped IPv6 address is not allowed"]
        );
        assert_eq!(
            check("2001:db8::1", Some(Family::V4)),
            ["ip: Invalid value: \"2001:db8::1\": must be an IPv4 address"]
        );
        assert_eq!(check("1.2.3.4", Some(Family::V6)), ["ip: Invalid value: \"1.2.3.4\": must be an IPv6 address"]);
    }

    #[test]
    fn sloppy_parsing_allows_leading_zeros() {
        assert_eq!(parse_sloppy("010.001.002.003"), Some(IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3))));
        assert_eq!(parse_sloppy("::ffff:1.2.3.4"), Some(IpAddr::V4(Ipv4Addr::new(1, 2, 3, 4))));
        assert_eq!(parse_sloppy("256.1.1.1"), None);
        assert_eq!(parse_sloppy("1.2.3"), None);
    }

    #[test]
    fn endpoint_ips_exclude_special_ranges() {
        let special = |value: &str| {
            let mut errs = Errors::default();
            endpoint_ip(&mut errs, "ip", value);
            errs.finish().iter().map(ToString::to_string).collect::<Vec<_>>()
        };
        assert!(special("10.1.2.3").is_empty());
        assert_eq!(special("0.0.0.0"), ["ip: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)"]);
        assert_eq!(
            special("127.0.0.1"),
            ["ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"]
        );
        assert_eq!(
            special("fe80::1"),
            ["ip: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)"]
        );
        assert_eq!(
            special("224.0.0.1"),
            [
                "ip: Invalid value: \"224.0.0.1\": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
            ]
        );
    }
}
