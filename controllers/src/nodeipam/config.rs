//! What the node IPAM controller is built from, checked as upstream's
//! `newNodeIpamController` (`cmd/kube-controller-manager/app/core.go`) and
//! `NewNodeIpamController` check it: the cluster CIDRs (one, or one of
//! each family), the node mask size of each, and the service CIDRs to keep
//! out of them.
//!
//! Mask sizes: a single-stack cluster takes `--node-cidr-mask-size`, or
//! the flag of its own family; a dual-stack one only the two family flags.
//! Unset (0) means 24 for IPv4 and 64 for IPv6; so `10.244.0.0/16` gives
//! 256 node CIDRs of 256 addresses, and `10.244.0.0/16,fd00::/48` adds
//! 65536 IPv6 `/64`s.

use super::cidr::{Cidr, Family};

/// Upstream's `defaultNodeMaskCIDRIPv4`.
pub const DEFAULT_NODE_MASK_IPV4: i32 = 24;
/// Upstream's `defaultNodeMaskCIDRIPv6`.
pub const DEFAULT_NODE_MASK_IPV6: i32 = 64;

/// The mask size flags as given (0: unset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MaskSizes {
    /// `--node-cidr-mask-size`.
    pub any: i32,
    /// `--node-cidr-mask-size-ipv4`.
    pub ipv4: i32,
    /// `--node-cidr-mask-size-ipv6`.
    pub ipv6: i32,
}

/// Why the controller cannot be built, in upstream's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A cluster CIDR does not parse (upstream `netutils.ParseCIDRs`;
    /// upstream prints the unparsed CIDR as `<nil>`).
    #[error("invalid CIDR[{index}]: <nil> ({source})")]
    InvalidCidr {
        /// Its place in `--cluster-cidr`.
        index: usize,
        /// Why.
        source: super::cidr::ParseError,
    },
    /// Two CIDRs of one family.
    #[error("len of ClusterCIDRs=={0} and they are not configured as dual stack (at least one from each IPFamily")]
    NotDualStack(usize),
    /// More than two.
    #[error("length of clusterCIDRs is:{0} more than max allowed of 2")]
    TooMany(usize),
    /// Both service CIDRs of one family.
    #[error("serviceCIDR and secondaryServiceCIDR are not dualstack (from different IPfamiles)")]
    ServiceNotDualStack,
    /// A free-form mask size rule (upstream `setNodeCIDRMaskSizes`).
    #[error("{0}")]
    MaskSizes(&'static str),
    /// A mask size longer than its family's addresses or negative
    /// (kcm-rs refuses it; upstream's arithmetic would misbehave).
    #[error("invalid node CIDR mask size {size} for {cidr}: it must be between 0 and {bits}")]
    MaskOutOfRange {
        /// The size.
        size: i32,
        /// The cluster CIDR it cuts.
        cidr: Cidr,
        /// The family's bits.
        bits: u8,
    },
    /// A cluster CIDR narrower than its node CIDRs.
    #[error(
        "Controller: Invalid --cluster-cidr, mask size of cluster CIDR must be less than or equal to \
         --node-cidr-mask-size configured for CIDR family"
    )]
    ClusterNarrowerThanNode,
}

/// Upstream `validateCIDRs`: `--cluster-cidr` as one CIDR, or two of
/// different families.
///
/// # Errors
/// A CIDR that does not parse (an empty flag is one), two of one family,
/// more than two.
pub fn cluster_cidrs(list: &str) -> Result<Vec<Cidr>, Error> {
    let cidrs = list
        .trim()
        .split(',')
        .enumerate()
        .map(|(index, text)| Cidr::parse_sloppy(text).map_err(|source| Error::InvalidCidr { index, source }))
        .collect::<Result<Vec<_>, _>>()?;
    if cidrs.len() > 1 && !dual_stack(&cidrs) {
        return Err(Error::NotDualStack(cidrs.len()));
    }
    if cidrs.len() > 2 {
        return Err(Error::TooMany(cidrs.len()));
    }
    Ok(cidrs)
}

/// Upstream `netutils.IsDualStackCIDRs`: one of each family at least.
fn dual_stack(cidrs: &[Cidr]) -> bool {
    cidrs.iter().any(|c| c.family() == Family::V4) && cidrs.iter().any(|c| c.family() == Family::V6)
}

/// One service CIDR flag's entry: `None` when empty, or (with the warning
/// upstream logs) when it does not parse.
pub fn service_cidr(text: &str) -> Result<Option<Cidr>, super::cidr::ParseError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    Cidr::parse_sloppy(text).map(Some)
}

/// Upstream's check of both service CIDRs: when both are set, one of each
/// family.
///
/// # Errors
/// [`Error::ServiceNotDualStack`].
pub fn check_service_cidrs(primary: Option<&Cidr>, secondary: Option<&Cidr>) -> Result<(), Error> {
    match (primary, secondary) {
        (Some(a), Some(b)) if a.family() == b.family() => Err(Error::ServiceNotDualStack),
        _ => Ok(()),
    }
}

/// Upstream `setNodeCIDRMaskSizes`, then `NewNodeIpamController`'s check:
/// the node mask size of each cluster CIDR, in their order.
///
/// # Errors
/// A flag not allowed for this cluster's families (upstream's messages), a
/// size outside its family's bits, or a cluster CIDR narrower than its
/// node CIDRs.
pub fn node_mask_sizes(flags: MaskSizes, cluster: &[Cidr]) -> Result<Vec<u8>, Error> {
    let (mut ipv4, mut ipv6) = (DEFAULT_NODE_MASK_IPV4, DEFAULT_NODE_MASK_IPV6);
    if cluster.len() > 1 {
        if flags.any != 0 {
            return Err(Error::MaskSizes("usage of --node-cidr-mask-size is not allowed with dual-stack clusters"));
        }
        if flags.ipv4 != 0 {
            ipv4 = flags.ipv4;
        }
        if flags.ipv6 != 0 {
            ipv6 = flags.ipv6;
        }
    } else if flags.any != 0 {
        if flags.ipv4 != 0 || flags.ipv6 != 0 {
            return Err(Error::MaskSizes(
                "usage of --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 is not allowed if \
                 --node-cidr-mask-size is set. For dual-stack clusters please unset it and use IPFamily specific \
                 flags",
            ));
        }
        (ipv4, ipv6) = (flags.any, flags.any);
    } else {
        let single_stack_ipv6 = cluster.first().is_some_and(Cidr::is_ipv6);
        if flags.ipv4 != 0 {
            if single_stack_ipv6 {
                return Err(Error::MaskSizes(
                    "usage of --node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 cluster",
                ));
            }
            ipv4 = flags.ipv4;
        }
        if flags.ipv6 != 0 {
            if !single_stack_ipv6 {
                return Err(Error::MaskSizes(
                    "usage of --node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 cluster",
                ));
            }
            ipv6 = flags.ipv6;
        }
    }
    cluster
        .iter()
        .map(|cidr| {
            let size = if cidr.is_ipv6() { ipv6 } else { ipv4 };
            let bits = cidr.family().bits();
            let size = u8::try_from(size).ok().filter(|s| *s <= bits).ok_or(Error::MaskOutOfRange {
                size,
                cidr: *cidr,
                bits,
            })?;
            if cidr.prefix() > size {
                return Err(Error::ClusterNarrowerThanNode);
            }
            Ok(size)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(any: i32, ipv4: i32, ipv6: i32, cluster: &str) -> Result<Vec<u8>, String> {
        node_mask_sizes(MaskSizes { any, ipv4, ipv6 }, &cluster_cidrs(cluster).unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn cluster_cidrs_as_upstream_validates_them() {
        let ok = |list: &str| cluster_cidrs(list).map(|c| c.iter().map(ToString::to_string).collect::<Vec<_>>());
        assert_eq!(ok("10.244.0.0/16").unwrap(), ["10.244.0.0/16"]);
        assert_eq!(ok(" 10.244.0.0/16,fd00::/48 ").unwrap(), ["10.244.0.0/16", "fd00::/48"]);
        assert_eq!(ok("fd00::/48,10.244.0.0/16").unwrap(), ["fd00::/48", "10.244.0.0/16"]);
        let err = |list: &str| cluster_cidrs(list).unwrap_err().to_string();
        assert_eq!(err(""), "invalid CIDR[0]: <nil> (invalid CIDR address: )");
        assert_eq!(err("10.244.0.0/16,foo"), "invalid CIDR[1]: <nil> (invalid CIDR address: foo)");
        assert_eq!(
            err("10.244.0.0/16,10.245.0.0/16"),
            "len of ClusterCIDRs==2 and they are not configured as dual stack (at least one from each IPFamily"
        );
        assert_eq!(err("10.1.0.0/16,fd00::/48,10.2.0.0/16"), "length of clusterCIDRs is:3 more than max allowed of 2");
    }

    #[test]
    fn mask_sizes_as_upstream_sets_them() {
        assert_eq!(sizes(0, 0, 0, "10.0.0.0/16"), Ok(vec![24]));
        assert_eq!(sizes(0, 0, 0, "fd00::/48"), Ok(vec![64]));
        assert_eq!(sizes(0, 0, 0, "10.0.0.0/16,fd00::/48"), Ok(vec![24, 64]));
        assert_eq!(sizes(0, 0, 0, "fd00::/48,10.0.0.0/16"), Ok(vec![64, 24]));
        assert_eq!(sizes(25, 0, 0, "10.0.0.0/16"), Ok(vec![25]));
        assert_eq!(sizes(60, 0, 0, "fd00::/48"), Ok(vec![60]));
        assert_eq!(sizes(0, 26, 0, "10.0.0.0/16"), Ok(vec![26]));
        assert_eq!(sizes(0, 0, 62, "fd00::/48"), Ok(vec![62]));
        assert_eq!(sizes(0, 26, 62, "10.0.0.0/16,fd00::/48"), Ok(vec![26, 62]));
        assert_eq!(
            sizes(24, 0, 0, "10.0.0.0/16,fd00::/48").unwrap_err(),
            "usage of --node-cidr-mask-size is not allowed with dual-stack clusters"
        );
        assert!(sizes(24, 24, 0, "10.0.0.0/16").unwrap_err().starts_with("usage of --node-cidr-mask-size-ipv4 and"));
        assert_eq!(
            sizes(0, 24, 0, "fd00::/48").unwrap_err(),
            "usage of --node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 cluster"
        );
        assert_eq!(
            sizes(0, 0, 64, "10.0.0.0/16").unwrap_err(),
            "usage of --node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 cluster"
        );
    }

    #[test]
    fn node_cidrs_fit_in_their_cluster_cidr() {
        assert!(
            sizes(0, 0, 0, "10.0.0.0/25").unwrap_err().starts_with("Controller: Invalid --cluster-cidr, mask size")
        );
        assert_eq!(sizes(24, 0, 0, "10.0.0.0/24"), Ok(vec![24]));
        assert_eq!(
            sizes(33, 0, 0, "10.0.0.0/16").unwrap_err(),
            "invalid node CIDR mask size 33 for 10.0.0.0/16: it must be between 0 and 32"
        );
        assert!(sizes(-1, 0, 0, "10.0.0.0/16").is_err());
    }

    #[test]
    fn service_cidrs_are_checked_together() {
        let v4 = service_cidr("10.96.0.0/12").unwrap();
        let v6 = service_cidr("fd00:10:96::/112").unwrap();
        assert_eq!(service_cidr(" "), Ok(None));
        assert!(service_cidr("bogus").is_err());
        assert_eq!(check_service_cidrs(v4.as_ref(), v6.as_ref()), Ok(()));
        assert_eq!(check_service_cidrs(v4.as_ref(), None), Ok(()));
        assert_eq!(check_service_cidrs(v4.as_ref(), v4.as_ref()), Err(Error::ServiceNotDualStack));
    }
}
