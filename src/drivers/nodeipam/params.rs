//! What the node IPAM controller is built from (upstream
//! `newNodeIpamController` in `cmd/kube-controller-manager/app/core.go`,
//! then `NewNodeIpamController` and `NewCIDRRangeAllocator`): nothing
//! without `--allocate-node-cidrs`; else the cluster CIDRs, the node mask
//! size of each and the service CIDRs, checked with upstream's errors. A
//! service CIDR that does not parse is logged and left out, as upstream
//! leaves it.

use kcm_controllers::nodeipam::allocator::RangeAllocator;
use kcm_controllers::nodeipam::cidr::Cidr;
use kcm_controllers::nodeipam::cidrset;
use kcm_controllers::nodeipam::config::{self, Error};

use crate::config::settings::nodeipam::NodeIpamSettings;

/// The range allocator's parameters (upstream `CIDRAllocatorParams`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    /// `--cluster-cidr`, in its order.
    pub cluster_cidrs: Vec<Cidr>,
    /// The node mask size of each.
    pub node_masks: Vec<u8>,
    /// `--service-cluster-ip-range`'s first entry, when it parses.
    pub service_cidr: Option<Cidr>,
    /// Its second entry, when it parses.
    pub secondary_service_cidr: Option<Cidr>,
}

impl Params {
    /// The parameters `settings` give: `None` without
    /// `--allocate-node-cidrs` (the controller does not start).
    ///
    /// # Errors
    /// Upstream's: a cluster CIDR that does not parse, two of one family or
    /// more than two, both service CIDRs of one family, mask size flags
    /// not allowed for the families, a cluster CIDR narrower than its node
    /// CIDRs.
    pub fn from_settings(settings: &NodeIpamSettings) -> Result<Option<Params>, Error> {
        if !settings.allocate_node_cidrs {
            return Ok(None);
        }
        let cluster_cidrs = config::cluster_cidrs(&settings.cluster_cidr)?;
        let service_cidr = service_cidr_of(&settings.service_cidr);
        let secondary_service_cidr = service_cidr_of(&settings.secondary_service_cidr);
        config::check_service_cidrs(service_cidr.as_ref(), secondary_service_cidr.as_ref())?;
        let node_masks = config::node_mask_sizes(settings.mask_sizes, &cluster_cidrs)?;
        Ok(Some(Params { cluster_cidrs, node_masks, service_cidr, secondary_service_cidr }))
    }

    /// A range allocator with the service CIDRs filtered out, logged as
    /// upstream's `NewCIDRRangeAllocator` logs it.
    ///
    /// # Errors
    /// An IPv6 cluster CIDR cut more than 16 bits.
    pub fn allocator(&self) -> Result<RangeAllocator, cidrset::Error> {
        let mut allocator = RangeAllocator::new(&self.cluster_cidrs, &self.node_masks)?;
        let services = [
            (self.service_cidr, "No Service CIDR provided. Skipping filtering out service addresses"),
            (
                self.secondary_service_cidr,
                "No Secondary Service CIDR provided. Skipping filtering out secondary service addresses",
            ),
        ];
        for (service, skipping) in services {
            let Some(service) = service else {
                tracing::info!("{skipping}");
                continue;
            };
            for failure in allocator.filter_out_service_range(&service) {
                tracing::error!(
                    error = %failure.error,
                    CIDR = %failure.cluster,
                    index = failure.index,
                    serviceCIDR = %service,
                    "Error filtering out service cidr out cluster cidr"
                );
            }
        }
        Ok(allocator)
    }
}

/// One service CIDR flag entry; one that does not parse is logged with
/// upstream's warning and left out.
fn service_cidr_of(text: &str) -> Option<Cidr> {
    match config::service_cidr(text) {
        Ok(cidr) => cidr,
        Err(err) => {
            tracing::info!(CIDR = text, %err, "Warning: unsuccessful parsing of service CIDR");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use kcm_controllers::nodeipam::config::MaskSizes;

    use super::*;

    fn settings(cluster: &str, service: &str, secondary: &str) -> NodeIpamSettings {
        NodeIpamSettings {
            allocate_node_cidrs: true,
            cluster_cidr: cluster.to_owned(),
            service_cidr: service.to_owned(),
            secondary_service_cidr: secondary.to_owned(),
            mask_sizes: MaskSizes::default(),
        }
    }

    #[test]
    fn nothing_without_allocate_node_cidrs() {
        let off = NodeIpamSettings { allocate_node_cidrs: false, ..settings("bogus", "", "") };
        assert_eq!(Params::from_settings(&off), Ok(None));
    }

    #[test]
    fn the_flags_become_the_allocators_parameters() {
        let p = Params::from_settings(&settings("10.244.0.0/16,fd00:10:244::/56", "10.96.0.0/16", "fd00:10:96::/112"))
            .unwrap()
            .unwrap();
        assert_eq!(p.node_masks, [24, 64]);
        assert_eq!(p.service_cidr.map(|c| c.to_string()).as_deref(), Some("10.96.0.0/16"));
        assert_eq!(p.secondary_service_cidr.map(|c| c.to_string()).as_deref(), Some("fd00:10:96::/112"));
        // A service CIDR that does not parse is left out, as upstream.
        let p = Params::from_settings(&settings("10.244.0.0/16", "bogus", "")).unwrap().unwrap();
        assert_eq!((p.service_cidr, p.secondary_service_cidr), (None, None));
    }

    #[test]
    fn bad_flags_refuse_the_controller_with_upstreams_errors() {
        let err = |s: NodeIpamSettings| Params::from_settings(&s).unwrap_err().to_string();
        assert_eq!(err(settings("", "", "")), "invalid CIDR[0]: <nil> (invalid CIDR address: )");
        assert_eq!(
            err(settings("10.244.0.0/16", "10.96.0.0/16", "10.97.0.0/16")),
            "serviceCIDR and secondaryServiceCIDR are not dualstack (from different IPfamiles)"
        );
        let dual = NodeIpamSettings {
            mask_sizes: MaskSizes { any: 24, ..MaskSizes::default() },
            ..settings("10.244.0.0/16,fd00::/48", "", "")
        };
        assert_eq!(err(dual), "usage of --node-cidr-mask-size is not allowed with dual-stack clusters");
    }

    #[test]
    fn the_service_range_is_kept_out_of_the_cluster_cidr() {
        let p = Params::from_settings(&settings("10.244.0.0/16", "10.244.0.0/17", "")).unwrap().unwrap();
        let allocator = p.allocator().unwrap();
        assert_eq!(allocator.sets()[0].allocated(), 128);
        let v6 = Params::from_settings(&NodeIpamSettings {
            mask_sizes: MaskSizes { ipv6: 64, ..MaskSizes::default() },
            ..settings("fd00::/32", "", "")
        })
        .unwrap()
        .unwrap();
        assert_eq!(v6.allocator().unwrap_err(), cidrset::Error::SubNetTooBig);
    }
}
