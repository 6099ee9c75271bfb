//! The EndpointSlice tracker (upstream `util/endpointslice_tracker.go`):
//! the generation this controller last wrote of each slice of each
//! Service, or that it expects a slice gone. A sync whose cached slices
//! are older than that ([`EndpointSliceTracker::stale_slices`]) would act
//! on a stale cache and is retried instead; an informer event for a slice
//! this controller did not write ([`EndpointSliceTracker::should_sync`])
//! queues its Service.
//!
//! Beyond upstream, it remembers the Services refused for a stale cache
//! ([`EndpointSliceTracker::wait_for_cache`]): the next event for one of
//! their slices, the cache moving on, queues them at once
//! ([`EndpointSliceTracker::cache_moved`]), where upstream waits out the
//! retry's backoff (seconds to minutes once a burst of pod changes has
//! met the same stale cache several times).
//!
//! State only, no clock: the driver keeps it behind a lock and feeds it
//! what the API server answered.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::discovery::v1::EndpointSlice;

use super::slices::service_key;

/// Generations by slice uid, for one Service.
type Generations = HashMap<String, Expected>;

/// What is expected of one slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expected {
    /// At least this generation.
    Generation(i64),
    /// Its deletion (upstream `deletionExpected`).
    Deletion,
}

/// Upstream `EndpointSliceTracker`, keyed by Service (`namespace/name`).
#[derive(Debug, Default)]
pub struct EndpointSliceTracker {
    by_service: BTreeMap<String, Generations>,
    /// Services whose sync was refused for a stale cache.
    waiting: BTreeSet<String>,
}

fn uid(slice: &EndpointSlice) -> String {
    slice.metadata.uid.clone().unwrap_or_default()
}

fn generation(slice: &EndpointSlice) -> i64 {
    slice.metadata.generation.unwrap_or(0)
}

impl EndpointSliceTracker {
    /// An empty tracker.
    pub fn new() -> Self {
        Self::default()
    }

    fn generations(&self, slice: &EndpointSlice) -> Option<&Generations> {
        self.by_service.get(&service_key(slice)?)
    }

    /// Whether the slice is tracked.
    pub fn has(&self, slice: &EndpointSlice) -> bool {
        self.generations(slice).is_some_and(|g| g.contains_key(&uid(slice)))
    }

    /// Whether an event for `slice` is news: its Service is untracked, the
    /// slice unknown, or newer than what this controller wrote.
    pub fn should_sync(&self, slice: &EndpointSlice) -> bool {
        let Some(generations) = self.generations(slice) else { return true };
        match generations.get(&uid(slice)) {
            None => true,
            Some(Expected::Generation(g)) => generation(slice) > *g,
            Some(Expected::Deletion) => false,
        }
    }

    /// Whether the cached `slices` of Service `key` lag what this
    /// controller wrote: one of them should be gone or is older than
    /// written, or a written one is missing.
    pub fn stale_slices(&self, key: &str, slices: &[&EndpointSlice]) -> bool {
        let Some(generations) = self.by_service.get(key) else { return false };
        let behind = slices.iter().any(|s| match generations.get(&uid(s)) {
            Some(Expected::Deletion) => true,
            Some(Expected::Generation(g)) => *g > generation(s),
            None => false,
        });
        behind
            || generations.iter().any(|(u, expected)| {
                *expected != Expected::Deletion && !slices.iter().any(|s| s.metadata.uid.as_deref() == Some(u.as_str()))
            })
    }

    /// Records that the sync of Service `key` was refused for a stale
    /// cache: it waits for the cache to move.
    pub fn wait_for_cache(&mut self, key: &str) {
        self.waiting.insert(key.to_owned());
    }

    /// Whether an informer event for `slice` is one its Service waits for
    /// (it is then no longer waiting, and should be queued).
    pub fn cache_moved(&mut self, slice: &EndpointSlice) -> bool {
        service_key(slice).is_some_and(|key| self.waiting.remove(&key))
    }

    /// Records a slice as the API server returned it from a write.
    pub fn update(&mut self, slice: &EndpointSlice) {
        if let Some(key) = service_key(slice) {
            self.by_service.entry(key).or_default().insert(uid(slice), Expected::Generation(generation(slice)));
        }
    }

    /// Records that this controller deleted the slice.
    pub fn expect_deletion(&mut self, slice: &EndpointSlice) {
        if let Some(key) = service_key(slice) {
            self.by_service.entry(key).or_default().insert(uid(slice), Expected::Deletion);
        }
    }

    /// Forgets a deleted slice; answers whether its deletion was expected
    /// (an unexpected one queues its Service).
    pub fn handle_deletion(&mut self, slice: &EndpointSlice) -> bool {
        let Some(generations) = service_key(slice).and_then(|k| self.by_service.get_mut(&k)) else { return true };
        !matches!(generations.remove(&uid(slice)), Some(Expected::Generation(_)))
    }

    /// Forgets a deleted Service.
    pub fn delete_service(&mut self, key: &str) {
        self.by_service.remove(key);
        self.waiting.remove(key);
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `endpointslice_tracker_test.go`, test by test.

    use std::collections::BTreeMap;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;
    use crate::endpointslice::slices::LABEL_SERVICE_NAME;

    // === utils ===

    fn slice(uid: &str, service: &str, generation: i64) -> EndpointSlice {
        EndpointSlice {
            metadata: ObjectMeta {
                name: Some(format!("{service}-{uid}")),
                namespace: Some("ns1".into()),
                uid: Some(uid.into()),
                generation: Some(generation),
                labels: Some(BTreeMap::from([(LABEL_SERVICE_NAME.to_owned(), service.to_owned())])),
                ..Default::default()
            },
            address_type: "IPv4".into(),
            endpoints: None,
            ports: None,
        }
    }

    // === tests ===

    #[test]
    fn endpoint_slice_tracker_update() {
        let mut tracker = EndpointSliceTracker::new();
        let s1 = slice("original", "svc1", 1);
        tracker.update(&s1);
        assert!(tracker.has(&s1));
        assert!(!tracker.should_sync(&s1), "same generation");
        assert!(tracker.should_sync(&slice("original", "svc1", 2)), "newer generation");
        assert!(!tracker.should_sync(&slice("original", "svc1", 0)), "older generation");
        assert!(tracker.should_sync(&slice("other", "svc1", 1)), "unknown slice");
        assert!(tracker.should_sync(&slice("original", "svc2", 1)), "untracked service");
    }

    #[test]
    fn endpoint_slice_tracker_stale_slices() {
        let mut tracker = EndpointSliceTracker::new();
        let s1 = slice("original", "svc1", 2);
        tracker.update(&s1);
        assert!(!tracker.stale_slices("ns1/svc1", &[&s1]), "up to date");
        assert!(tracker.stale_slices("ns1/svc1", &[&slice("original", "svc1", 1)]), "older in the cache");
        assert!(!tracker.stale_slices("ns1/svc1", &[&slice("original", "svc1", 3)]), "newer in the cache");
        assert!(tracker.stale_slices("ns1/svc1", &[]), "a written slice missing");
        assert!(!tracker.stale_slices("ns1/other", &[]), "untracked service");
        tracker.expect_deletion(&s1);
        assert!(tracker.stale_slices("ns1/svc1", &[&s1]), "deleted but still cached");
        assert!(!tracker.stale_slices("ns1/svc1", &[]), "deleted and gone");
    }

    #[test]
    fn endpoint_slice_tracker_delete_service() {
        let mut tracker = EndpointSliceTracker::new();
        let s1 = slice("original", "svc1", 1);
        tracker.update(&s1);
        tracker.delete_service("ns1/svc1");
        assert!(!tracker.has(&s1));
        assert!(tracker.should_sync(&s1));
    }

    #[test]
    fn a_refused_service_is_queued_when_its_cache_moves() {
        let mut tracker = EndpointSliceTracker::new();
        let written = slice("original", "svc1", 2);
        tracker.update(&written);
        assert!(!tracker.cache_moved(&written), "no sync refused yet");
        tracker.wait_for_cache("ns1/svc1");
        assert!(!tracker.cache_moved(&slice("other", "svc2", 1)), "another Service's slice");
        assert!(tracker.cache_moved(&written), "the written slice arrives");
        assert!(!tracker.cache_moved(&written), "queued once per refusal");
        tracker.wait_for_cache("ns1/svc1");
        tracker.delete_service("ns1/svc1");
        assert!(!tracker.cache_moved(&written), "a deleted Service waits for nothing");
    }

    #[test]
    fn endpoint_slice_tracker_deletion() {
        let mut tracker = EndpointSliceTracker::new();
        let (expected, unexpected) = (slice("a", "svc1", 1), slice("b", "svc1", 1));
        tracker.update(&expected);
        tracker.update(&unexpected);
        tracker.expect_deletion(&expected);
        assert!(!tracker.should_sync(&expected), "a deletion this controller made");
        assert!(tracker.handle_deletion(&expected), "expected");
        assert!(!tracker.handle_deletion(&unexpected), "someone else deleted it");
        assert!(!tracker.has(&expected) && !tracker.has(&unexpected));
    }
}
