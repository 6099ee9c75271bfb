//! Upstream's cidrset metrics (`pkg/controller/nodeipam/ipam/cidrset/metrics.go`,
//! subsystem `node_ipam_controller`), labelled by cluster CIDR as
//! written: allocations and releases counted, the maximum and the share
//! taken, and the taken CIDRs each allocation passed over. The sets keep
//! the counts (`kcm_controllers::nodeipam::cidrset`); [`CidrSetMetrics::report`]
//! brings the metrics up to them after each change.

use kcm_controllers::nodeipam::allocator::RangeAllocator;
use prometheus::{GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};

/// The label: the cluster CIDR.
const LABEL: &str = "clusterCIDR";

/// Upstream's `nodeIpamSubsystem`.
const SUBSYSTEM: &str = "node_ipam_controller";

/// The `node_ipam_controller_cidrset_*` metrics.
#[derive(Clone, Debug)]
pub struct CidrSetMetrics {
    /// `cidrset_cidrs_allocations_total`.
    allocations: IntCounterVec,
    /// `cidrset_cidrs_releases_total`.
    releases: IntCounterVec,
    /// `cirdset_max_cidrs` (upstream's spelling).
    max_cidrs: GaugeVec,
    /// `cidrset_usage_cidrs`.
    usage: GaugeVec,
    /// `cidrset_allocation_tries_per_request`.
    tries: HistogramVec,
}

impl CidrSetMetrics {
    /// Registers them with upstream's names, help texts and buckets (1,
    /// times 5, five of them).
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let opts = |name: &str, help: &str| Opts::new(name, help).subsystem(SUBSYSTEM);
        let allocations = IntCounterVec::new(
            opts("cidrset_cidrs_allocations_total", "Counter measuring total number of CIDR allocations."),
            &[LABEL],
        )?;
        let releases = IntCounterVec::new(
            opts("cidrset_cidrs_releases_total", "Counter measuring total number of CIDR releases."),
            &[LABEL],
        )?;
        let max_cidrs =
            GaugeVec::new(opts("cirdset_max_cidrs", "Maximum number of CIDRs that can be allocated."), &[LABEL])?;
        let usage =
            GaugeVec::new(opts("cidrset_usage_cidrs", "Gauge measuring percentage of allocated CIDRs."), &[LABEL])?;
        let tries = HistogramVec::new(
            HistogramOpts::new(
                "cidrset_allocation_tries_per_request",
                "Number of endpoints added on each Service sync",
            )
            .subsystem(SUBSYSTEM)
            .buckets(prometheus::exponential_buckets(1.0, 5.0, 5)?),
            &[LABEL],
        )?;
        registry.register(Box::new(allocations.clone()))?;
        registry.register(Box::new(releases.clone()))?;
        registry.register(Box::new(max_cidrs.clone()))?;
        registry.register(Box::new(usage.clone()))?;
        registry.register(Box::new(tries.clone()))?;
        Ok(Self { allocations, releases, max_cidrs, usage, tries })
    }

    /// The metrics brought up to `allocator`'s sets; `tries` (one per set,
    /// in order, after an allocation) observed.
    #[allow(clippy::cast_precision_loss)]
    pub fn report(&self, allocator: &RangeAllocator, tries: &[usize]) {
        for (index, set) in allocator.sets().iter().enumerate() {
            let label = set.cluster().to_string();
            let label = [label.as_str()];
            let allocations = self.allocations.with_label_values(&label);
            allocations.inc_by(set.allocations().saturating_sub(allocations.get()));
            let releases = self.releases.with_label_values(&label);
            releases.inc_by(set.releases().saturating_sub(releases.get()));
            self.max_cidrs.with_label_values(&label).set(set.max_cidrs() as f64);
            self.usage.with_label_values(&label).set(set.usage());
            if let Some(tries) = tries.get(index) {
                self.tries.with_label_values(&label).observe(*tries as f64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use kcm_controllers::nodeipam::cidr::Cidr;
    use prometheus::Encoder;

    use super::*;

    #[test]
    fn the_metrics_follow_the_sets() {
        let registry = Registry::new();
        let metrics = CidrSetMetrics::register(&registry).unwrap();
        let cluster = Cidr::parse_sloppy("10.0.0.0/16").unwrap();
        let mut allocator = RangeAllocator::new(&[cluster], &[24]).unwrap();
        allocator.occupy_cidrs("a", &["10.0.0.0/17"]).unwrap();
        let taken = allocator.allocate().unwrap();
        metrics.report(&allocator, &[taken[0].1]);
        allocator.release_cidrs("a", &["10.0.0.0/24"]).unwrap();
        metrics.report(&allocator, &[]);
        let mut text = Vec::new();
        prometheus::TextEncoder::new().encode(&registry.gather(), &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        for line in [
            r#"node_ipam_controller_cidrset_cidrs_allocations_total{clusterCIDR="10.0.0.0/16"} 129"#,
            r#"node_ipam_controller_cidrset_cidrs_releases_total{clusterCIDR="10.0.0.0/16"} 1"#,
            r#"node_ipam_controller_cirdset_max_cidrs{clusterCIDR="10.0.0.0/16"} 256"#,
            r#"node_ipam_controller_cidrset_usage_cidrs{clusterCIDR="10.0.0.0/16"} 0.5"#,
            r#"node_ipam_controller_cidrset_allocation_tries_per_request_sum{clusterCIDR="10.0.0.0/16"} 128"#,
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
        }
    }
}
