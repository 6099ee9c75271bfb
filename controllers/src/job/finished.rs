//! The Jobs this controller wrote finished whose cache has not shown them
//! so yet (upstream `finishedJobExpectations`, kubernetes#130103).
//!
//! The status write that adds `Complete` or `Failed` comes after the
//! tracking finalizers of the Job's pods are removed. Should the Job cache
//! lag behind the pod cache (a Job watch that answered "too old resource
//! version" and relisted later than the pods' did), a sync would read the
//! Job as it was before it finished beside pods that no longer carry the
//! finalizer: it would count none of them and start new pods for a Job
//! that is over. So once that write succeeds the Job's uid is kept here,
//! and a sync that reads the Job still unfinished skips it. The uid goes
//! when a sync reads the Job finished, or when the Job is deleted.

use std::collections::HashSet;

/// Uids of the Jobs written finished and not yet read finished from the
/// cache.
#[derive(Debug, Default, Clone)]
pub struct FinishedJobExpectations {
    uids: HashSet<String>,
}

impl FinishedJobExpectations {
    /// No Job written finished.
    pub fn new() -> Self {
        Self::default()
    }

    /// The status write that finished the Job `uid` succeeded (upstream
    /// `finishedJobExpectations.Store`).
    pub fn expect(&mut self, uid: &str) {
        self.uids.insert(uid.to_owned());
    }

    /// Whether the Job `uid` was written finished and the cache has not
    /// shown it so yet: its sync waits.
    pub fn pending(&self, uid: &str) -> bool {
        self.uids.contains(uid)
    }

    /// The Job `uid` was read finished, or deleted (upstream
    /// `finishedJobExpectations.Delete`).
    pub fn observed(&mut self, uid: &str) {
        self.uids.remove(uid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_pending_from_its_finishing_write_until_it_is_seen_finished() {
        let mut e = FinishedJobExpectations::new();
        assert!(!e.pending("a"));
        e.expect("a");
        e.expect("b");
        assert!(e.pending("a") && e.pending("b"));
        e.observed("a");
        assert!(!e.pending("a"), "seen finished");
        assert!(e.pending("b"), "another Job is untouched");
        e.observed("a");
        assert!(!e.pending("a"), "observing twice is harmless");
    }
}
