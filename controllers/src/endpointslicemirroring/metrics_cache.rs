//! The numbers behind the `endpoint_slice_mirroring_controller_*` gauges
//! (upstream `metrics/cache.go`): per Endpoints, per slice key, the
//! endpoints wanted and the slices there are; summed, the endpoints
//! desired, the slices, and the slices a perfect packing would need
//! (`ceil(endpoints / max per subset)` per key). Example: one key with 5
//! endpoints in 2 slices and a maximum of 2 per subset gives 5 endpoints
//! desired, 2 slices, 3 desired slices.

use std::collections::HashMap;

use super::reconciler::Efficiency;

/// The three gauges' values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gauges {
    /// `endpoint_slice_mirroring_controller_endpoints_desired`.
    pub endpoints_desired: usize,
    /// `endpoint_slice_mirroring_controller_num_endpoint_slices`.
    pub num_endpoint_slices: usize,
    /// `endpoint_slice_mirroring_controller_desired_endpoint_slices`.
    pub desired_endpoint_slices: usize,
}

/// Per Endpoints (`namespace/name`), its keys' efficiency.
#[derive(Debug)]
pub struct MetricsCache {
    max_per_slice: usize,
    by_endpoints: HashMap<String, Vec<Efficiency>>,
}

impl MetricsCache {
    /// An empty cache for slices of at most `max_per_slice` endpoints.
    pub fn new(max_per_slice: usize) -> Self {
        Self { max_per_slice: max_per_slice.max(1), by_endpoints: HashMap::new() }
    }

    /// Replaces what is known of Endpoints `key`; answers the gauges.
    pub fn update(&mut self, key: &str, efficiency: Vec<Efficiency>) -> Gauges {
        self.by_endpoints.insert(key.to_owned(), efficiency);
        self.gauges()
    }

    /// Forgets Endpoints `key`; answers the gauges.
    pub fn delete(&mut self, key: &str) -> Gauges {
        self.by_endpoints.remove(key);
        self.gauges()
    }

    fn gauges(&self) -> Gauges {
        let all = self.by_endpoints.values().flatten();
        all.fold(Gauges::default(), |g, e| Gauges {
            endpoints_desired: g.endpoints_desired + e.endpoints,
            num_endpoint_slices: g.num_endpoint_slices + e.slices,
            desired_endpoint_slices: g.desired_endpoint_slices + e.endpoints.div_ceil(self.max_per_slice),
        })
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestNumEndpointsAndSlices` (`metrics/cache_test.go`).

    use super::*;

    fn info(endpoints: usize, slices: usize) -> Efficiency {
        Efficiency { endpoints, slices }
    }

    #[test]
    fn num_endpoints_and_slices() {
        let mut cache = MetricsCache::new(100);
        cache.update("ns/svc1", vec![info(5, 1), info(10, 1)]);
        let gauges = cache.update("ns/svc2", vec![info(40, 1), info(35, 1), info(250, 3)]);
        assert_eq!(gauges, Gauges { endpoints_desired: 340, num_endpoint_slices: 7, desired_endpoint_slices: 7 });
        let gauges = cache.update("ns/svc1", vec![info(205, 3), info(10, 1)]);
        assert_eq!(gauges, Gauges { endpoints_desired: 540, num_endpoint_slices: 9, desired_endpoint_slices: 9 });
        let gauges = cache.delete("ns/svc2");
        assert_eq!(gauges, Gauges { endpoints_desired: 215, num_endpoint_slices: 4, desired_endpoint_slices: 4 });
    }
}
