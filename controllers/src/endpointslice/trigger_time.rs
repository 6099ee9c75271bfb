//! The trigger time tracker (upstream `util/trigger_time_tracker.go`):
//! for each Service, when the change its next write reflects happened,
//! for the `endpoints.kubernetes.io/last-change-trigger-time` annotation.
//!
//! A pod's trigger time is when its Ready condition last changed, the
//! Service's its creation. The first sync of a Service reports its
//! creation; later syncs the earliest trigger time that changed since
//! the previous sync, or none when nothing did.

use std::collections::{BTreeMap, HashMap};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Service;
use kcm_objects::Pod;

/// What was seen of one Service at its last sync.
#[derive(Debug, Clone, Default)]
struct State {
    pods: HashMap<String, Timestamp>,
    service: Option<Timestamp>,
}

/// Upstream `TriggerTimeTracker`, keyed by Service (`namespace/name`).
#[derive(Debug, Default)]
pub struct TriggerTimeTracker {
    services: BTreeMap<String, State>,
}

impl TriggerTimeTracker {
    /// An empty tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// The trigger time of this sync of Service `key` with `pods`, and the
    /// state remembered for the next (upstream
    /// `ComputeEndpointLastChangeTriggerTime`).
    pub fn compute(&mut self, key: &str, service: &Service, pods: &[&Pod]) -> Option<Timestamp> {
        let new = State {
            pods: pods
                .iter()
                .filter_map(|p| Some((p.metadata.name.to_string(), p.condition("Ready")?.last_transition_time()?)))
                .collect(),
            service: service.metadata.creation_timestamp.as_ref().map(|t| t.0),
        };
        let Some(old) = self.services.insert(key.to_owned(), new.clone()) else { return new.service };
        let changed_pods = new.pods.iter().filter(|(name, at)| old.pods.get(*name) != Some(at)).map(|(_, at)| *at);
        let changed_service = new.service.filter(|_| old.service != new.service);
        changed_pods.chain(changed_service).min()
    }

    /// Forgets a deleted Service.
    pub fn delete_service(&mut self, key: &str) {
        self.services.remove(key);
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `trigger_time_tracker_test.go`.

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
    use serde_json::json;

    use super::*;

    // === utils ===

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + secs).unwrap()
    }

    fn service(created: i64) -> Service {
        Service {
            metadata: ObjectMeta { creation_timestamp: Some(Time(at(created))), ..Default::default() },
            ..Default::default()
        }
    }

    fn pod(name: &str, ready_at: i64) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns"},
            "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": at(ready_at).to_string()}]},
        }))
        .unwrap()
    }

    // === tests ===

    #[test]
    fn new_service_no_pods() {
        let mut tracker = TriggerTimeTracker::new();
        assert_eq!(tracker.compute("ns/svc", &service(0), &[]), Some(at(0)));
    }

    #[test]
    fn new_service_existing_pods() {
        let mut tracker = TriggerTimeTracker::new();
        let (p1, p2) = (pod("pod1", 1), pod("pod2", 2));
        assert_eq!(tracker.compute("ns/svc", &service(3), &[&p1, &p2]), Some(at(3)), "the Service's creation");
    }

    #[test]
    fn pod_updated() {
        let mut tracker = TriggerTimeTracker::new();
        let (p1, p2) = (pod("pod1", 1), pod("pod2", 2));
        tracker.compute("ns/svc", &service(0), &[&p1, &p2]);
        let (p1b, p2b) = (pod("pod1", 5), pod("pod2", 4));
        assert_eq!(tracker.compute("ns/svc", &service(0), &[&p1b, &p2b]), Some(at(4)), "the earliest change");
        assert_eq!(tracker.compute("ns/svc", &service(0), &[&p1b, &p2b]), None, "nothing changed");
    }

    #[test]
    fn pod_added_and_service_recreated() {
        let mut tracker = TriggerTimeTracker::new();
        let p1 = pod("pod1", 1);
        tracker.compute("ns/svc", &service(0), &[&p1]);
        let p2 = pod("pod2", 7);
        assert_eq!(tracker.compute("ns/svc", &service(0), &[&p1, &p2]), Some(at(7)));
        assert_eq!(tracker.compute("ns/svc", &service(9), &[&p1, &p2]), Some(at(9)), "the Service changed");
        tracker.delete_service("ns/svc");
        assert_eq!(tracker.compute("ns/svc", &service(9), &[&p1, &p2]), Some(at(9)), "new again");
    }
}
