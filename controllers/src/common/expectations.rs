//! Expectations: the creations and deletions a controller issued and has
//! not yet seen come back through its informer (upstream
//! `ControllerExpectations` + `UIDTrackingControllerExpectations`).
//!
//! This is a plain struct with no lock and no clock: the runtime keeps one
//! per controller behind a mutex, feeds it from informer events and from
//! the executor, and hands the sync a read-only view. Every method that
//! needs the time takes `now`.
//!
//! On top of upstream's counters each record remembers *which* creations
//! and deletions are in flight, so that a sync running after the record
//! expired can still count them (see the design note in
//! the ReplicaSet core, `replicaset`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use jiff::Timestamp;

/// After this long a record no longer holds syncs back (upstream
/// `ExpectationsTimeout`).
pub const EXPECTATIONS_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The expectations of every key of one controller.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    records: HashMap<String, Record>,
}

/// What one controller key is waiting to observe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Creations still to be observed (may go negative, as upstream).
    add: i64,
    /// Deletions still to be observed (may go negative, as upstream).
    del: i64,
    /// When the counters were last set; the record expires
    /// [`EXPECTATIONS_TIMEOUT`] later.
    timestamp: Timestamp,
    /// Pods (`namespace/name`) whose deletion was issued and not yet
    /// observed: upstream's UID tracking, so a graceful delete (an update
    /// with a deletionTimestamp) and the final delete count once.
    deleting: BTreeSet<String>,
    /// Pods (`namespace/name`) the API server created for us and the
    /// informer has not shown yet, with the resourceVersion the create
    /// returned (when it parsed as a number).
    created: BTreeMap<String, Option<u64>>,
}

// === impl Record ===

impl Record {
    fn new(now: Timestamp) -> Self {
        Self { add: 0, del: 0, timestamp: now, deleting: BTreeSet::new(), created: BTreeMap::new() }
    }

    /// Creations still expected.
    pub fn add(&self) -> i64 {
        self.add
    }

    /// Deletions still expected.
    pub fn del(&self) -> i64 {
        self.del
    }

    /// Nothing more to observe (upstream `Fulfilled`).
    pub fn fulfilled(&self) -> bool {
        self.add <= 0 && self.del <= 0
    }

    /// Older than [`EXPECTATIONS_TIMEOUT`] at `now` (strictly).
    pub fn expired(&self, now: Timestamp) -> bool {
        let age = self.timestamp.duration_until(now);
        Duration::try_from(age).is_ok_and(|age| age > EXPECTATIONS_TIMEOUT)
    }

    /// Whether the deletion of pod `pod_key` was issued and not yet observed.
    pub fn is_deleting(&self, pod_key: &str) -> bool {
        self.deleting.contains(pod_key)
    }

    /// Created pods the cache cannot have shown yet: not in the cache
    /// (`in_cache`) and created at a resourceVersion the pod cache has not
    /// reached (`cache_rv`; unknown versions on either side count as not
    /// reached).
    pub fn unseen_creations(&self, in_cache: impl Fn(&str) -> bool, cache_rv: Option<u64>) -> usize {
        self.created
            .iter()
            .filter(|(key, _)| !in_cache(key))
            .filter(|(_, rv)| match (rv, cache_rv) {
                (Some(rv), Some(cache)) => *rv > cache,
                _ => true,
            })
            .count()
    }
}

// === impl Expectations ===

impl Expectations {
    /// No expectations for any key.
    pub fn new() -> Self {
        Self::default()
    }

    /// The record of `key`, if any.
    pub fn get(&self, key: &str) -> Option<&Record> {
        self.records.get(key)
    }

    /// A copy holding only `key`'s record: what one sync of `key` reads,
    /// so that it plans without holding the controller's expectations
    /// (upstream reads them per call from a thread-safe store too).
    pub fn of(&self, key: &str) -> Expectations {
        Expectations {
            records: self.records.get_key_value(key).map(|(k, r)| (k.clone(), r.clone())).into_iter().collect(),
        }
    }

    /// Whether a sync of `key` may create or delete (upstream
    /// `SatisfiedExpectations`): no record, everything observed, or the
    /// record expired.
    pub fn satisfied(&self, key: &str, now: Timestamp) -> bool {
        self.records.get(key).is_none_or(|r| r.fulfilled() || r.expired(now))
    }

    /// `count` creations are about to be issued: the counters are reset to
    /// `add = count, del = 0` with a fresh timestamp (upstream
    /// `ExpectCreations`); the in-flight pods of earlier rounds stay known.
    pub fn expect_creations(&mut self, key: &str, count: usize, now: Timestamp) {
        let r = self.records.entry(key.to_owned()).or_insert_with(|| Record::new(now));
        r.add = i64::try_from(count).unwrap_or(i64::MAX);
        r.del = 0;
        r.timestamp = now;
    }

    /// The pods `pod_keys` (`namespace/name`) are about to be deleted
    /// (upstream UID-tracking `ExpectDeletions`). Unlike upstream, deletions
    /// of an expired round that were never observed are kept, and counted.
    pub fn expect_deletions(&mut self, key: &str, pod_keys: impl IntoIterator<Item = String>, now: Timestamp) {
        let r = self.records.entry(key.to_owned()).or_insert_with(|| Record::new(now));
        r.deleting.extend(pod_keys);
        r.add = 0;
        r.del = i64::try_from(r.deleting.len()).unwrap_or(i64::MAX);
        r.timestamp = now;
    }

    /// The executor created pod `pod_key` at `resource_version`: remember it
    /// until the informer shows it.
    pub fn creation_succeeded(&mut self, key: &str, pod_key: &str, resource_version: Option<u64>) {
        if let Some(r) = self.records.get_mut(key) {
            r.created.insert(pod_key.to_owned(), resource_version);
        }
    }

    /// The informer showed a new pod `pod_key` controlled by `key` (upstream
    /// `CreationObserved`).
    pub fn creation_observed(&mut self, key: &str, pod_key: &str) {
        if let Some(r) = self.records.get_mut(key) {
            r.add -= 1;
            r.created.remove(pod_key);
        }
    }

    /// `count` creations were never issued or failed: stop waiting for them
    /// (upstream calls `CreationObserved` once per skipped pod).
    pub fn creations_skipped(&mut self, key: &str, count: usize) {
        if let Some(r) = self.records.get_mut(key) {
            r.add -= i64::try_from(count).unwrap_or(i64::MAX);
        }
    }

    /// The informer showed pod `pod_key` being deleted (a deletionTimestamp
    /// or the final delete), or the executor's delete of it failed (upstream
    /// `DeletionObserved`): counted once per pod.
    pub fn deletion_observed(&mut self, key: &str, pod_key: &str) {
        if let Some(r) = self.records.get_mut(key) {
            if r.deleting.remove(pod_key) {
                r.del -= 1;
            }
            r.created.remove(pod_key);
        }
    }

    /// Forget `key` (its controller was deleted or replaced).
    pub fn delete(&mut self, key: &str) {
        self.records.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ts;

    const KEY: &str = "ns/web";

    #[test]
    fn no_record_is_satisfied() {
        assert!(Expectations::new().satisfied(KEY, ts(0)));
    }

    #[test]
    fn creations_hold_syncs_until_observed() {
        let mut e = Expectations::new();
        e.expect_creations(KEY, 3, ts(0));
        assert!(!e.satisfied(KEY, ts(1)));
        e.creation_observed(KEY, "ns/a");
        e.creation_observed(KEY, "ns/b");
        assert!(!e.satisfied(KEY, ts(1)));
        e.creation_observed(KEY, "ns/c");
        assert!(e.satisfied(KEY, ts(1)));
    }

    #[test]
    fn a_copy_of_one_key_judges_that_key_as_the_whole_does() {
        let mut e = Expectations::new();
        e.expect_creations(KEY, 1, ts(0));
        e.expect_creations("ns/other", 2, ts(0));
        let copy = e.of(KEY);
        assert_eq!(copy.get(KEY), e.get(KEY));
        assert!(!copy.satisfied(KEY, ts(1)));
        assert!(copy.get("ns/other").is_none());
        assert!(Expectations::new().of(KEY).satisfied(KEY, ts(1)));
    }

    #[test]
    fn skipped_creations_lower_the_count() {
        let mut e = Expectations::new();
        e.expect_creations(KEY, 10, ts(0));
        e.creation_observed(KEY, "ns/a");
        e.creations_skipped(KEY, 9);
        assert!(e.satisfied(KEY, ts(1)));
    }

    #[test]
    fn records_expire_after_five_minutes_strictly() {
        let mut e = Expectations::new();
        e.expect_creations(KEY, 1, ts(1000));
        assert!(!e.satisfied(KEY, ts(1000 + 300)));
        assert!(e.satisfied(KEY, ts(1000 + 301)));
    }

    #[test]
    fn graceful_then_final_delete_counts_once() {
        let mut e = Expectations::new();
        e.expect_deletions(KEY, ["ns/a".to_string(), "ns/b".to_string()], ts(0));
        assert_eq!(e.get(KEY).unwrap().del(), 2);
        e.deletion_observed(KEY, "ns/a"); // update with a deletionTimestamp
        e.deletion_observed(KEY, "ns/a"); // the final delete
        assert_eq!(e.get(KEY).unwrap().del(), 1);
        assert!(!e.satisfied(KEY, ts(1)));
        e.deletion_observed(KEY, "ns/other"); // not one of ours
        assert!(!e.satisfied(KEY, ts(1)));
        e.deletion_observed(KEY, "ns/b");
        assert!(e.satisfied(KEY, ts(1)));
    }

    #[test]
    fn unobserved_deletions_survive_a_new_round() {
        let mut e = Expectations::new();
        e.expect_deletions(KEY, ["ns/a".to_string()], ts(0));
        e.expect_deletions(KEY, ["ns/b".to_string()], ts(400));
        let r = e.get(KEY).unwrap();
        assert!(r.is_deleting("ns/a") && r.is_deleting("ns/b"));
        assert_eq!(r.del(), 2);
    }

    #[test]
    fn unseen_creations_until_the_cache_catches_up() {
        let mut e = Expectations::new();
        e.expect_creations(KEY, 3, ts(0));
        e.creation_succeeded(KEY, "ns/a", Some(10));
        e.creation_succeeded(KEY, "ns/b", Some(11));
        e.creation_succeeded(KEY, "ns/c", None);
        let r = e.get(KEY).unwrap();
        let none_cached = |_: &str| false;
        assert_eq!(r.unseen_creations(none_cached, None), 3);
        assert_eq!(r.unseen_creations(none_cached, Some(10)), 2, "a would have been seen by rv 10");
        assert_eq!(r.unseen_creations(|k| k == "ns/b", Some(10)), 1, "b is in the cache");
        e.creation_observed(KEY, "ns/c");
        assert_eq!(e.get(KEY).unwrap().unseen_creations(none_cached, Some(10)), 1);
        e.deletion_observed(KEY, "ns/b");
        assert_eq!(e.get(KEY).unwrap().unseen_creations(none_cached, None), 1, "only a is left");
    }

    #[test]
    fn delete_forgets_everything() {
        let mut e = Expectations::new();
        e.expect_creations(KEY, 1, ts(0));
        e.delete(KEY);
        assert!(e.get(KEY).is_none());
        assert!(e.satisfied(KEY, ts(0)));
    }
}
