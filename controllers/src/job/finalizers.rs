//! The finalizer removals a Job controller has in flight (upstream
//! `uidTrackingExpectations` in `tracking_utils.go`): per Job, the uids of
//! the pods whose tracking finalizer it asked to remove and has not yet
//! seen removed. Such a pod was counted already: a sync neither counts it
//! again nor asks for its removal again.

use std::collections::{HashMap, HashSet};

/// Per Job key (`namespace/name`), the pod uids whose finalizer removal is
/// in flight.
#[derive(Debug, Default, Clone)]
pub struct FinalizerExpectations {
    by_job: HashMap<String, HashSet<String>>,
}

impl FinalizerExpectations {
    /// No removal in flight.
    pub fn new() -> Self {
        Self::default()
    }

    /// The uids in flight for the Job (upstream `getExpectedUIDs`).
    pub fn expected(&self, key: &str) -> HashSet<String> {
        self.by_job.get(key).cloned().unwrap_or_default()
    }

    /// Removals of these pods' finalizers are about to be sent (upstream
    /// `expectFinalizersRemoved`).
    pub fn expect_removals(&mut self, key: &str, uids: impl IntoIterator<Item = String>) {
        self.by_job.entry(key.to_owned()).or_default().extend(uids);
    }

    /// The pod was seen without the finalizer, or gone, or its removal
    /// failed (upstream `finalizerRemovalObserved`).
    pub fn removal_observed(&mut self, key: &str, uid: &str) {
        if let Some(uids) = self.by_job.get_mut(key) {
            uids.remove(uid);
            if uids.is_empty() {
                self.by_job.remove(key);
            }
        }
    }

    /// Forgets the Job (upstream `deleteExpectations`).
    pub fn delete(&mut self, key: &str) {
        self.by_job.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upstream `TestUIDTrackingExpectations`, in one thread.
    #[test]
    fn uid_tracking_expectations() {
        let mut e = FinalizerExpectations::new();
        e.expect_removals("ns/a", ["1".to_string(), "2".to_string()]);
        e.expect_removals("ns/b", ["3".to_string()]);
        assert_eq!(e.expected("ns/a").len(), 2);
        e.removal_observed("ns/a", "1");
        assert_eq!(e.expected("ns/a"), HashSet::from(["2".to_string()]));
        e.removal_observed("ns/a", "2");
        assert!(e.expected("ns/a").is_empty());
        e.delete("ns/b");
        assert!(e.expected("ns/b").is_empty());
    }
}
