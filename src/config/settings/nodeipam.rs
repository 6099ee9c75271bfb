//! The node IPAM controller's settings: upstream's
//! `options/nodeipamcontroller.go` (`--service-cluster-ip-range`,
//! `--node-cidr-mask-size*`) and the three kube-cloud-shared flags only
//! this controller reads (`--allocate-node-cidrs`, `--cluster-cidr`,
//! `--cidr-allocator-type`; upstream lists them with the generic flags).
//!
//! Checked here as upstream's option validation checks them: at most two
//! service CIDRs, and no allocator but `RangeAllocator` (1.37 has no
//! in-tree cloud provider). The CIDRs themselves are parsed when the
//! controller is built, as upstream's `newNodeIpamController` does, and
//! only when `--allocate-node-cidrs` is set.

use clap::ArgAction;
use kcm_controllers::nodeipam::config::MaskSizes;

use super::ControllerFlags;
use crate::config::{Error, Result, parse_go_bool};

/// Upstream's `ipam.RangeAllocatorType`, the default and only allocator.
pub const RANGE_ALLOCATOR: &str = "RangeAllocator";

/// The node IPAM controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct NodeIpamFlags {
    /// Should CIDRs for Pods be allocated and set on the cloud provider. Requires --cluster-cidr.
    #[arg(
        long,
        value_name = "true|false",
        default_value = "false",
        hide_default_value = true,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = ArgAction::Set,
        value_parser = parse_go_bool,
        help_heading = "Generic flags"
    )]
    pub allocate_node_cidrs: bool,

    /// Type of CIDR allocator to use
    #[arg(long, value_name = "string", default_value = RANGE_ALLOCATOR, help_heading = "Generic flags")]
    pub cidr_allocator_type: String,

    /// CIDR Range for Pods in cluster. Only used when --allocate-node-cidrs=true; if false, this option will be
    /// ignored.
    #[arg(long, value_name = "string", default_value = "", hide_default_value = true, help_heading = "Generic flags")]
    pub cluster_cidr: String,

    /// CIDR Range for Services in cluster. Only used when --allocate-node-cidrs=true; if false, this option will
    /// be ignored.
    #[arg(
        long,
        value_name = "string",
        default_value = "",
        hide_default_value = true,
        help_heading = "Nodeipam controller flags"
    )]
    pub service_cluster_ip_range: String,

    /// Mask size for node cidr in cluster. Default is 24 for IPv4 and 64 for IPv6.
    #[arg(
        long,
        value_name = "int32",
        default_value = "0",
        hide_default_value = true,
        allow_negative_numbers = true,
        help_heading = "Nodeipam controller flags"
    )]
    pub node_cidr_mask_size: i32,

    /// Mask size for IPv4 node cidr in dual-stack cluster. Default is 24.
    #[arg(
        long,
        value_name = "int32",
        default_value = "0",
        hide_default_value = true,
        allow_negative_numbers = true,
        help_heading = "Nodeipam controller flags"
    )]
    pub node_cidr_mask_size_ipv4: i32,

    /// Mask size for IPv6 node cidr in dual-stack cluster. Default is 64.
    #[arg(
        long,
        value_name = "int32",
        default_value = "0",
        hide_default_value = true,
        allow_negative_numbers = true,
        help_heading = "Nodeipam controller flags"
    )]
    pub node_cidr_mask_size_ipv6: i32,
}

/// The node IPAM controller's settings, as upstream's configuration holds
/// them (strings until the controller is built).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeIpamSettings {
    /// `--allocate-node-cidrs`: without it the controller does not start.
    pub allocate_node_cidrs: bool,
    /// `--cluster-cidr`, comma-separated.
    pub cluster_cidr: String,
    /// The first entry of `--service-cluster-ip-range` (upstream's
    /// `ServiceCIDR`).
    pub service_cidr: String,
    /// Its second entry (`SecondaryServiceCIDR`), empty when none.
    pub secondary_service_cidr: String,
    /// The three `--node-cidr-mask-size*` flags.
    pub mask_sizes: MaskSizes,
}

impl ControllerFlags for NodeIpamFlags {
    type Settings = NodeIpamSettings;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["cidr_allocator_type"];

    fn settings(self) -> Result<NodeIpamSettings> {
        let service: Vec<&str> = self.service_cluster_ip_range.split(',').collect();
        if service.len() > 2 {
            return Err(Error::Invalid("--service-cluster-ip-range can not contain more than two entries".to_owned()));
        }
        if !self.cidr_allocator_type.is_empty() && self.cidr_allocator_type != RANGE_ALLOCATOR {
            return Err(Error::Invalid(format!(
                "built-in cloud providers are disabled. The ipam {} is not available",
                self.cidr_allocator_type
            )));
        }
        Ok(NodeIpamSettings {
            allocate_node_cidrs: self.allocate_node_cidrs,
            cluster_cidr: self.cluster_cidr,
            service_cidr: service[0].to_owned(),
            secondary_service_cidr: service.get(1).copied().unwrap_or_default().to_owned(),
            mask_sizes: MaskSizes {
                any: self.node_cidr_mask_size,
                ipv4: self.node_cidr_mask_size_ipv4,
                ipv6: self.node_cidr_mask_size_ipv6,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags, settings};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<NodeIpamFlags>(&[
            ("allocate-node-cidrs", "false"),
            ("cidr-allocator-type", "RangeAllocator"),
            ("cluster-cidr", ""),
            ("service-cluster-ip-range", ""),
            ("node-cidr-mask-size", "0"),
            ("node-cidr-mask-size-ipv4", "0"),
            ("node-cidr-mask-size-ipv6", "0"),
        ]);
        let s = settings::<NodeIpamFlags>(&[]).unwrap();
        assert!(!s.allocate_node_cidrs);
        assert_eq!((s.service_cidr.as_str(), s.secondary_service_cidr.as_str()), ("", ""));
    }

    #[test]
    fn kinds_arguments_are_read_as_upstream_applies_them() {
        let s = settings::<NodeIpamFlags>(&[
            "--allocate-node-cidrs",
            "--cluster-cidr=10.244.0.0/16,fd00:10:244::/56",
            "--service-cluster-ip-range=10.96.0.0/16,fd00:10:96::/112",
            "--node-cidr-mask-size-ipv6=64",
        ])
        .unwrap();
        assert!(s.allocate_node_cidrs);
        assert_eq!(s.cluster_cidr, "10.244.0.0/16,fd00:10:244::/56");
        assert_eq!((s.service_cidr.as_str(), s.secondary_service_cidr.as_str()), ("10.96.0.0/16", "fd00:10:96::/112"));
        assert_eq!(s.mask_sizes, MaskSizes { any: 0, ipv4: 0, ipv6: 64 });
        assert!(!settings::<NodeIpamFlags>(&["--allocate-node-cidrs=F"]).unwrap().allocate_node_cidrs);
        assert!(flags::<NodeIpamFlags>(&["--node-cidr-mask-size=big"]).is_err());
    }

    #[test]
    fn checked_as_upstreams_option_validation_checks_them() {
        let err = |args: &[&str]| settings::<NodeIpamFlags>(args).unwrap_err().to_string();
        assert_eq!(
            err(&["--service-cluster-ip-range=10.96.0.0/16,fd00::/108,10.97.0.0/16"]),
            "--service-cluster-ip-range can not contain more than two entries"
        );
        assert_eq!(
            err(&["--cidr-allocator-type=CloudAllocator"]),
            "built-in cloud providers are disabled. The ipam CloudAllocator is not available"
        );
        assert!(settings::<NodeIpamFlags>(&["--cidr-allocator-type="]).is_ok());
    }
}
