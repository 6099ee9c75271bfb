//! What the endpoints controller remembers between syncs: the trigger
//! times it last saw per Service (upstream `TriggerTimeTracker`, for the
//! `endpoints.kubernetes.io/last-change-trigger-time` annotation), and the
//! Endpoints resourceVersions it has already replaced (upstream
//! `staleEndpointsTracker`), so a sync never plans from a cache that has
//! not yet seen its own last write.
//!
//! Beyond upstream, the stale tracker remembers the Services whose sync it
//! refused ([`StaleEndpointsTracker::wait_for_cache`]), so that the next
//! event for their Endpoints queues them at once
//! ([`StaleEndpointsTracker::cache_moved`]) rather than after the retry's
//! backoff.

use std::collections::{HashMap, HashSet};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Endpoints, Service};
use kcm_objects::Pod;

use crate::common::pod::ready_condition;

/// What was seen of one Service at its last sync.
#[derive(Debug, Clone, Default)]
struct ServiceState {
    /// Each pod's last trigger time, by pod name.
    pods: HashMap<String, Timestamp>,
    /// The Service's own trigger time (its creationTimestamp).
    service: Option<Timestamp>,
}

/// The trigger times seen per Service (`namespace/name`).
#[derive(Debug, Default)]
pub struct TriggerTimeTracker {
    states: HashMap<String, ServiceState>,
}

impl TriggerTimeTracker {
    /// The trigger time of this sync of `service` (key `key`) over `pods`
    /// (upstream `ComputeEndpointLastChangeTriggerTime`), remembering what
    /// it saw: the Service's creationTimestamp the first time; after that,
    /// the earliest trigger time that moved forward since the last sync (a
    /// pod's is its `Ready` condition's lastTransitionTime, the Service's
    /// its creationTimestamp); `None` when none did.
    pub fn compute(&mut self, key: &str, service: &Service, pods: &[&Pod]) -> Option<Timestamp> {
        let previous = self.states.get(key);
        let was_known = previous.is_some();
        let mut earliest: Option<Timestamp> = None;
        let mut seen = ServiceState::default();
        for pod in pods {
            let Some(time) = ready_condition(pod).and_then(|c| c.last_transition_time()) else { continue };
            seen.pods.insert(pod.metadata.name.to_string(), time);
            let before = previous.and_then(|p| p.pods.get(&*pod.metadata.name)).copied();
            if before.is_none_or(|b| time > b) {
                earliest = Some(earliest.map_or(time, |e| e.min(time)));
            }
        }
        seen.service = service.metadata.creation_timestamp.as_ref().map(|t| t.0);
        if let Some(time) = seen.service
            && previous.and_then(|p| p.service).is_none_or(|b| time > b)
        {
            earliest = Some(earliest.map_or(time, |e| e.min(time)));
        }
        let created = seen.service;
        self.states.insert(key.to_owned(), seen);
        if was_known { earliest } else { created }
    }

    /// Forgets a deleted Service.
    pub fn delete_service(&mut self, key: &str) {
        self.states.remove(key);
    }
}

/// The resourceVersions of Endpoints this controller replaced, by
/// `namespace/name`: a cached Endpoints still at one of them is out of
/// date, and a sync planned from it would undo the last write.
#[derive(Debug, Default)]
pub struct StaleEndpointsTracker {
    stale: HashMap<String, String>,
    /// Services whose sync was refused for a stale cache.
    waiting: HashSet<String>,
}

impl StaleEndpointsTracker {
    /// Records that `endpoints` (as cached before an update that changed
    /// its resourceVersion) is now stale.
    pub fn stale(&mut self, key: &str, endpoints: &Endpoints) {
        if let Some(rv) = &endpoints.metadata.resource_version {
            self.stale.insert(key.to_owned(), rv.clone());
        }
    }

    /// Whether the cached `endpoints` is one this controller already
    /// replaced.
    pub fn is_stale(&self, key: &str, endpoints: &Endpoints) -> bool {
        endpoints.metadata.resource_version.as_ref().is_some_and(|rv| self.stale.get(key) == Some(rv))
    }

    /// Records that the sync of Service `key` was refused for a stale
    /// cache: it waits for its Endpoints to move in the cache.
    pub fn wait_for_cache(&mut self, key: &str) {
        self.waiting.insert(key.to_owned());
    }

    /// Whether an informer event for the Endpoints `key` is one its
    /// Service waits for (it is then no longer waiting, and should be
    /// queued).
    pub fn cache_moved(&mut self, key: &str) -> bool {
        self.waiting.remove(key)
    }

    /// Forgets the Endpoints of a deleted Service.
    pub fn delete(&mut self, key: &str) {
        self.stale.remove(key);
        self.waiting.remove(key);
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestTriggerTimeTracker` scenario and
    //! `TestStaleEndpointsTracker`.

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
    use serde_json::json;

    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    fn service(created: &str) -> Service {
        Service {
            metadata: ObjectMeta { creation_timestamp: Some(Time(t(created))), ..ObjectMeta::default() },
            ..Service::default()
        }
    }

    fn pod(name: &str, ready_at: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns"},
            "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ready_at}]},
        }))
        .expect("pod")
    }

    #[test]
    fn trigger_time_tracker() {
        let mut tracker = TriggerTimeTracker::default();
        let svc = service("2019-01-01T00:00:00Z");
        let (p1, p2) = (pod("pod1", "2019-01-01T00:00:10Z"), pod("pod2", "2019-01-01T00:00:20Z"));
        assert_eq!(tracker.compute("ns/svc", &svc, &[&p1]), Some(t("2019-01-01T00:00:00Z")), "new service");
        assert_eq!(tracker.compute("ns/svc", &svc, &[&p1]), None, "nothing changed");
        assert_eq!(tracker.compute("ns/svc", &svc, &[&p1, &p2]), Some(t("2019-01-01T00:00:20Z")), "pod added");
        let (p1b, p2b) = (pod("pod1", "2019-01-01T00:00:40Z"), pod("pod2", "2019-01-01T00:00:30Z"));
        assert_eq!(tracker.compute("ns/svc", &svc, &[&p1b, &p2b]), Some(t("2019-01-01T00:00:30Z")), "min of changed");
        assert_eq!(tracker.compute("ns/svc", &svc, &[&p1b]), None, "pod removed");
        let recreated = service("2019-01-01T00:01:00Z");
        assert_eq!(tracker.compute("ns/svc", &recreated, &[&p1b]), Some(t("2019-01-01T00:01:00Z")), "service updated");
        tracker.delete_service("ns/svc");
        assert_eq!(
            tracker.compute("ns/svc", &Service::default(), &[&p1b]),
            None,
            "known again, without a creation time"
        );
    }

    #[test]
    fn stale_endpoints_tracker() {
        let mut tracker = StaleEndpointsTracker::default();
        let ep = |rv: &str| Endpoints {
            metadata: ObjectMeta { resource_version: Some(rv.into()), ..ObjectMeta::default() },
            ..Endpoints::default()
        };
        assert!(!tracker.is_stale("ns/svc", &ep("1")));
        tracker.stale("ns/svc", &ep("1"));
        assert!(tracker.is_stale("ns/svc", &ep("1")));
        assert!(!tracker.is_stale("ns/svc", &ep("2")));
        tracker.delete("ns/svc");
        assert!(!tracker.is_stale("ns/svc", &ep("1")));
    }

    #[test]
    fn a_refused_service_is_queued_when_its_endpoints_move() {
        let mut tracker = StaleEndpointsTracker::default();
        assert!(!tracker.cache_moved("ns/svc"), "no sync refused yet");
        tracker.wait_for_cache("ns/svc");
        assert!(!tracker.cache_moved("ns/other"), "another Service's Endpoints");
        assert!(tracker.cache_moved("ns/svc"), "its Endpoints moved");
        assert!(!tracker.cache_moved("ns/svc"), "queued once per refusal");
        tracker.wait_for_cache("ns/svc");
        tracker.delete("ns/svc");
        assert!(!tracker.cache_moved("ns/svc"), "a deleted Service waits for nothing");
    }
}
