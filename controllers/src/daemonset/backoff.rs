//! The failed-pod backoff (upstream `flowcontrol.Backoff`, as
//! kube-controller-manager builds it for this controller: 1 s doubling to
//! 15 min, no jitter). A DaemonSet whose pod keeps failing on a node (a
//! kubelet rejecting it) would otherwise kill and recreate it in a hot loop.
//!
//! Per key (`<ds uid>/<observedGeneration>/<node>`): the first failure is
//! acted on at once and sets a delay of 1 s; a failure seen within the
//! delay of the last one is left alone (the DaemonSet is requeued after the
//! delay); the next one acted on doubles it (2 s, 4 s, ... 15 min). A key
//! idle for more than twice the maximum (30 min) starts over.
//!
//! Worked example: failures acted on at t=0 (delay 1 s), seen again at
//! t=0.5 (in backoff: requeue after 1 s), acted on at t=1.2 (delay 2 s),
//! in backoff until t=3.2.

use std::collections::HashMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::DaemonSet;

/// The first delay.
pub const FAILED_PODS_BACKOFF_INITIAL: Duration = Duration::from_secs(1);
/// The longest delay.
pub const FAILED_PODS_BACKOFF_MAX: Duration = Duration::from_secs(15 * 60);

/// Per-key delays, no lock and no clock: the driver keeps one behind a
/// mutex and passes `now`.
#[derive(Clone, Debug)]
pub struct FailedPodsBackoff {
    initial: Duration,
    max: Duration,
    entries: HashMap<String, Entry>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    backoff: Duration,
    last_update: Timestamp,
}

impl Default for FailedPodsBackoff {
    fn default() -> Self {
        Self::new(FAILED_PODS_BACKOFF_INITIAL, FAILED_PODS_BACKOFF_MAX)
    }
}

impl FailedPodsBackoff {
    /// Delays from `initial` doubling up to `max`.
    pub fn new(initial: Duration, max: Duration) -> Self {
        Self { initial, max, entries: HashMap::new() }
    }

    /// The current delay of `key` (zero when it has none).
    pub fn get(&self, key: &str) -> Duration {
        self.entries.get(key).map_or(Duration::ZERO, |e| e.backoff)
    }

    /// Whether `now` is within `key`'s delay of its last step (upstream
    /// `IsInBackOffSinceUpdate`).
    pub fn in_backoff_since_update(&self, key: &str, now: Timestamp) -> bool {
        self.entries.get(key).is_some_and(|e| !self.expired(e, now) && since(e.last_update, now) < e.backoff)
    }

    /// Steps `key` at `now`: the initial delay for a new or expired key,
    /// else double the delay (at most the maximum).
    pub fn next(&mut self, key: &str, now: Timestamp) {
        let backoff = match self.entries.get(key) {
            Some(e) if !self.expired(e, now) => (e.backoff * 2).min(self.max),
            _ => self.initial,
        };
        self.entries.insert(key.to_owned(), Entry { backoff, last_update: now });
    }

    /// Forgets the keys idle for more than twice the maximum (upstream runs
    /// this every minute, `BackoffGCInterval`).
    pub fn gc(&mut self, now: Timestamp) {
        let max = self.max;
        self.entries.retain(|_, e| since(e.last_update, now) <= max * 2);
    }

    fn expired(&self, entry: &Entry, now: Timestamp) -> bool {
        since(entry.last_update, now) > self.max * 2
    }
}

/// The backoff key of `ds`'s pods on `node_name` (upstream
/// `failedPodsBackoffKey`): a new generation starts afresh.
pub fn failed_pods_backoff_key(ds: &DaemonSet, node_name: &str) -> String {
    let observed = ds.status.as_ref().and_then(|s| s.observed_generation).unwrap_or(0);
    format!("{}/{observed}/{node_name}", ds.metadata.uid.as_deref().unwrap_or_default())
}

fn since(then: Timestamp, now: Timestamp) -> Duration {
    Duration::try_from(now.duration_since(then)).unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(millis: i64) -> Timestamp {
        Timestamp::from_millisecond(millis).unwrap()
    }

    #[test]
    fn doubles_up_to_the_maximum_and_expires() {
        let mut b = FailedPodsBackoff::default();
        assert!(!b.in_backoff_since_update("k", at(0)));
        b.next("k", at(0));
        assert_eq!(b.get("k"), Duration::from_secs(1));
        assert!(b.in_backoff_since_update("k", at(500)));
        assert!(!b.in_backoff_since_update("k", at(1000)));
        b.next("k", at(1200));
        assert_eq!(b.get("k"), Duration::from_secs(2));
        assert!(b.in_backoff_since_update("k", at(3199)));
        for i in 0..20 {
            b.next("k", at(2000 + i));
        }
        assert_eq!(b.get("k"), FAILED_PODS_BACKOFF_MAX);
        let idle = 2019 + 30 * 60 * 1000 + 1;
        assert!(!b.in_backoff_since_update("k", at(idle)));
        b.next("k", at(idle));
        assert_eq!(b.get("k"), Duration::from_secs(1), "an expired key starts over");
        b.gc(at(idle + 30 * 60 * 1000));
        assert_eq!(b.get("k"), Duration::from_secs(1));
        b.gc(at(idle + 30 * 60 * 1000 + 1));
        assert_eq!(b.get("k"), Duration::ZERO);
    }

    #[test]
    fn key_is_uid_generation_node() {
        let mut ds = DaemonSet::default();
        ds.metadata.uid = Some("u".into());
        ds.status.get_or_insert_default().observed_generation = Some(3);
        assert_eq!(failed_pods_backoff_key(&ds, "node-1"), "u/3/node-1");
    }
}
