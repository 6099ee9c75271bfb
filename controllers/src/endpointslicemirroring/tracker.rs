//! Which EndpointSlices this controller wrote, at which generation, per
//! Endpoints (upstream `k8s.io/endpointslice/util` `EndpointSliceTracker`):
//! a slice event at a generation it wrote itself queues nothing, and a
//! sync never plans from a cache that has not yet seen its own writes.

use std::collections::HashMap;

use k8s_openapi::api::discovery::v1::EndpointSlice;

use super::SERVICE_NAME_LABEL;

/// The generation recorded for a slice this controller deleted.
const DELETION_EXPECTED: i64 = -1;

/// Generations by slice uid, by Endpoints key (`namespace/name`).
#[derive(Debug, Default)]
pub struct EndpointSliceTracker {
    by_endpoints: HashMap<String, HashMap<String, i64>>,
}

/// The Endpoints key a slice is labelled for (upstream
/// `endpointsControllerKey`): `namespace/<kubernetes.io/service-name>`,
/// `None` without the label.
pub fn endpoints_key(slice: &EndpointSlice) -> Option<String> {
    let name = slice.metadata.labels.as_ref()?.get(SERVICE_NAME_LABEL).filter(|n| !n.is_empty())?;
    Some(kcm_objects::object_key(slice.metadata.namespace.as_deref(), name))
}

fn uid(slice: &EndpointSlice) -> String {
    slice.metadata.uid.clone().unwrap_or_default()
}

fn generation(slice: &EndpointSlice) -> i64 {
    slice.metadata.generation.unwrap_or(0)
}

impl EndpointSliceTracker {
    fn of(&self, slice: &EndpointSlice) -> Option<&HashMap<String, i64>> {
        self.by_endpoints.get(&endpoints_key(slice)?)
    }

    /// Whether the slice is tracked.
    pub fn has(&self, slice: &EndpointSlice) -> bool {
        self.of(slice).is_some_and(|g| g.contains_key(&uid(slice)))
    }

    /// Whether an event of this slice is news: not tracked, or newer than
    /// the generation this controller wrote.
    pub fn should_sync(&self, slice: &EndpointSlice) -> bool {
        match self.of(slice).and_then(|g| g.get(&uid(slice))) {
            None => true,
            Some(&written) => generation(slice) > written,
        }
    }

    /// Whether `slices` (the cached slices of Endpoints `key`) are older
    /// than what this controller wrote: one it deleted is still there, one
    /// is at an older generation, or one it wrote is missing.
    pub fn stale_slices(&self, key: &str, slices: &[&EndpointSlice]) -> bool {
        let Some(written) = self.by_endpoints.get(key) else { return false };
        let behind =
            slices.iter().any(|s| written.get(&uid(s)).is_some_and(|&g| g == DELETION_EXPECTED || g > generation(s)));
        let missing =
            written.iter().filter(|(_, g)| **g != DELETION_EXPECTED).any(|(u, _)| !slices.iter().any(|s| uid(s) == *u));
        behind || missing
    }

    /// Records a slice as written (created or updated) at its generation.
    pub fn update(&mut self, slice: &EndpointSlice) {
        if let Some(key) = endpoints_key(slice) {
            self.by_endpoints.entry(key).or_default().insert(uid(slice), generation(slice));
        }
    }

    /// Records a slice as deleted by this controller.
    pub fn expect_deletion(&mut self, slice: &EndpointSlice) {
        if let Some(key) = endpoints_key(slice) {
            self.by_endpoints.entry(key).or_default().insert(uid(slice), DELETION_EXPECTED);
        }
    }

    /// Forgets a slice whose deletion was observed; `false` when it was
    /// tracked and this controller had not deleted it (someone else did:
    /// its Endpoints is to be synced again).
    pub fn handle_deletion(&mut self, slice: &EndpointSlice) -> bool {
        let Some(written) = endpoints_key(slice).and_then(|k| self.by_endpoints.get_mut(&k)) else { return true };
        written.remove(&uid(slice)).is_none_or(|g| g == DELETION_EXPECTED)
    }

    /// Forgets everything of Endpoints `key`.
    pub fn delete_service(&mut self, key: &str) {
        self.by_endpoints.remove(key);
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `endpointslice_tracker_test.go` cases
    //! (`TestEndpointSliceTrackerUpdate`, `TestEndpointSliceTrackerStaleSlices`,
    //! `TestEndpointSliceTrackerDeletion`).

    use std::collections::BTreeMap;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn slice(uid: &str, generation: i64) -> EndpointSlice {
        EndpointSlice {
            metadata: ObjectMeta {
                name: Some(format!("slice-{uid}")),
                namespace: Some("ns1".into()),
                uid: Some(uid.into()),
                generation: Some(generation),
                labels: Some(BTreeMap::from([(SERVICE_NAME_LABEL.to_owned(), "svc1".to_owned())])),
                ..ObjectMeta::default()
            },
            address_type: "IPv4".into(),
            endpoints: None,
            ports: None,
        }
    }

    #[test]
    fn endpoint_slice_tracker_update() {
        let mut tracker = EndpointSliceTracker::default();
        let s1 = slice("original", 1);
        assert!(tracker.should_sync(&s1), "untracked");
        tracker.update(&s1);
        assert!(tracker.has(&s1));
        assert!(!tracker.should_sync(&s1), "same generation");
        assert!(tracker.should_sync(&slice("original", 2)), "newer generation");
        assert!(!tracker.should_sync(&slice("original", 0)), "older generation");
        assert!(tracker.should_sync(&slice("other", 1)), "another slice");
    }

    #[test]
    fn endpoint_slice_tracker_stale_slices() {
        let mut tracker = EndpointSliceTracker::default();
        assert!(!tracker.stale_slices("ns1/svc1", &[&slice("a", 1)]), "nothing tracked");
        tracker.update(&slice("a", 2));
        assert!(!tracker.stale_slices("ns1/svc1", &[&slice("a", 2)]), "matching");
        assert!(!tracker.stale_slices("ns1/svc1", &[&slice("a", 3)]), "newer is not stale");
        assert!(tracker.stale_slices("ns1/svc1", &[&slice("a", 1)]), "older generation");
        assert!(tracker.stale_slices("ns1/svc1", &[]), "a written slice missing");
        tracker.expect_deletion(&slice("a", 2));
        assert!(tracker.stale_slices("ns1/svc1", &[&slice("a", 2)]), "a deleted slice still cached");
        assert!(!tracker.stale_slices("ns1/svc1", &[]), "deleted and gone");
    }

    #[test]
    fn endpoint_slice_tracker_deletion() {
        let mut tracker = EndpointSliceTracker::default();
        let s1 = slice("a", 1);
        tracker.update(&s1);
        assert!(!tracker.handle_deletion(&s1), "deleted by someone else");
        assert!(!tracker.has(&s1));
        tracker.update(&s1);
        tracker.expect_deletion(&s1);
        assert!(tracker.handle_deletion(&s1), "deleted by us");
        assert!(tracker.handle_deletion(&slice("untracked", 1)), "never tracked");
        tracker.update(&s1);
        tracker.delete_service("ns1/svc1");
        assert!(!tracker.has(&s1));
    }
}
