//! The metrics cache (upstream `metrics/cache.go`): per Service, the
//! endpoints and slices of each set of ports as last reconciled, and per
//! `trafficDistribution` value the Services using it; the totals are the
//! `endpoint_slice_controller_*` gauges.
//!
//! The desired slices of a set of ports are its endpoints over the
//! maximum per slice, rounded up: 250 endpoints at 100 per slice want 3.

use std::collections::{BTreeMap, BTreeSet};

use super::reconciler::Efficiency;

/// What the gauges show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// `endpoints_desired`.
    pub endpoints: usize,
    /// `num_endpoint_slices`.
    pub actual_slices: usize,
    /// `desired_endpoint_slices`.
    pub desired_slices: usize,
}

/// Upstream `metrics.Cache`.
#[derive(Debug, Default)]
pub struct MetricsCache {
    max_endpoints_per_slice: usize,
    services: BTreeMap<String, Vec<Efficiency>>,
    traffic_distributions: BTreeMap<String, BTreeSet<String>>,
}

impl MetricsCache {
    /// An empty cache for slices of at most `max_endpoints_per_slice`.
    pub fn new(max_endpoints_per_slice: usize) -> Self {
        Self { max_endpoints_per_slice, ..Self::default() }
    }

    /// Replaces what Service `key` holds (upstream `UpdateServicePortCache`;
    /// as upstream, the last address type reconciled stands).
    pub fn update_service(&mut self, key: &str, efficiency: Vec<Efficiency>) {
        self.services.insert(key.to_owned(), efficiency);
    }

    /// Records the `trafficDistribution` in force for Service `key`, or
    /// none (upstream `UpdateTrafficDistributionForService`).
    pub fn update_traffic_distribution(&mut self, key: &str, value: &str) {
        for services in self.traffic_distributions.values_mut() {
            services.remove(key);
        }
        if !value.is_empty() {
            self.traffic_distributions.entry(value.to_owned()).or_default().insert(key.to_owned());
        }
        self.traffic_distributions.retain(|_, services| !services.is_empty());
    }

    /// Forgets a deleted Service.
    pub fn delete_service(&mut self, key: &str) {
        self.services.remove(key);
        self.update_traffic_distribution(key, "");
    }

    /// The gauges' values.
    pub fn totals(&self) -> Totals {
        let max = self.max_endpoints_per_slice.max(1);
        self.services.values().flatten().fold(Totals::default(), |t, e| Totals {
            endpoints: t.endpoints + e.endpoints,
            actual_slices: t.actual_slices + e.slices,
            desired_slices: t.desired_slices + e.endpoints.div_ceil(max),
        })
    }

    /// Services per `trafficDistribution` value
    /// (`services_count_by_traffic_distribution`).
    pub fn services_by_traffic_distribution(&self) -> impl Iterator<Item = (&str, usize)> {
        self.traffic_distributions.iter().map(|(value, services)| (value.as_str(), services.len()))
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `cache_test.go`.

    use super::*;

    fn e(endpoints: usize, slices: usize) -> Efficiency {
        Efficiency { endpoints, slices }
    }

    #[test]
    fn num_endpoints_and_slices() {
        let mut cache = MetricsCache::new(100);
        cache.update_service("ns/svc1", vec![e(10, 1), e(20, 1)]);
        cache.update_service("ns/svc2", vec![e(200, 3), e(10, 1)]);
        assert_eq!(cache.totals(), Totals { endpoints: 240, actual_slices: 6, desired_slices: 5 });
        cache.update_service("ns/svc1", vec![e(250, 4)]);
        assert_eq!(cache.totals(), Totals { endpoints: 460, actual_slices: 8, desired_slices: 6 });
        cache.delete_service("ns/svc2");
        assert_eq!(cache.totals(), Totals { endpoints: 250, actual_slices: 4, desired_slices: 3 });
    }

    #[test]
    fn services_count_by_traffic_distribution() {
        let mut cache = MetricsCache::new(100);
        cache.update_traffic_distribution("ns/svc1", "PreferClose");
        cache.update_traffic_distribution("ns/svc2", "PreferClose");
        cache.update_traffic_distribution("ns/svc3", "PreferSameNode");
        assert_eq!(
            cache.services_by_traffic_distribution().collect::<Vec<_>>(),
            [("PreferClose", 2), ("PreferSameNode", 1)]
        );
        cache.update_traffic_distribution("ns/svc3", "");
        cache.delete_service("ns/svc1");
        assert_eq!(cache.services_by_traffic_distribution().collect::<Vec<_>>(), [("PreferClose", 1)]);
    }
}
