//! What is left after a delete (upstream
//! `estimateGracefulTerminationForPods` and
//! `deleteAllContentForGroupVersionResource` after the re-list): how long
//! pods may still need, what one type's leftovers mean, and the report of
//! a whole pass.

use std::collections::BTreeMap;

use jiff::Timestamp;

use super::FINALIZER_ESTIMATE_SECONDS;
use super::resources::Gvr;

/// What the estimate needs of one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodGrace {
    /// `status.phase`.
    pub phase: Option<String>,
    /// `spec.terminationGracePeriodSeconds`.
    pub grace_seconds: Option<i64>,
}

/// How many seconds the namespace's pods may still need to terminate
/// (upstream `estimateGracefulTerminationForPods`): the longest grace
/// period of pods not yet Succeeded or Failed, or zero once that long has
/// passed since the namespace's `deletionTimestamp`.
///
/// Example: pods with 30 s and 10 s grace, the namespace deleted 12 s
/// ago: 30. Deleted 31 s ago: 0 (whatever is left then is unexpected).
pub fn estimate_graceful_termination(pods: &[PodGrace], deleted_at: Option<Timestamp>, now: Timestamp) -> u64 {
    let estimate = pods
        .iter()
        .filter(|p| !matches!(p.phase.as_deref(), Some("Succeeded" | "Failed")))
        .filter_map(|p| p.grace_seconds)
        .map(|g| u64::try_from(g).unwrap_or(0))
        .max()
        .unwrap_or(0);
    let Some(deleted_at) = deleted_at else { return estimate };
    let elapsed = now.duration_since(deleted_at).as_secs().max(0).unsigned_abs();
    if elapsed >= estimate { 0 } else { estimate }
}

/// One type's leftovers after its delete, from the re-list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remaining {
    /// Seconds to wait before looking again; 0 when nothing remains.
    pub estimate: u64,
    /// Objects still listed.
    pub count: usize,
    /// Finalizer -> objects carrying it.
    pub finalizers: BTreeMap<String, usize>,
}

/// Judges what is left of `gvr` in `namespace` after its delete
/// (upstream `deleteAllContentForGroupVersionResource`, after the
/// re-list): each item is given by its finalizers; `estimate` is the pod
/// estimate (0 for other types).
///
/// # Errors
/// Objects remain with no estimate and no finalizers:
/// `unexpected items still remain in namespace: <ns> for gvr: <gvr>`.
pub fn remaining_outcome(
    namespace: &str,
    gvr: &Gvr,
    items: &[Vec<String>],
    estimate: u64,
) -> Result<Remaining, String> {
    if items.is_empty() {
        return Ok(Remaining::default());
    }
    let mut finalizers = BTreeMap::new();
    for item in items {
        for f in item {
            *finalizers.entry(f.clone()).or_insert(0) += 1;
        }
    }
    let remaining = Remaining { estimate, count: items.len(), finalizers };
    if estimate > 0 {
        return Ok(remaining);
    }
    if !remaining.finalizers.is_empty() {
        return Ok(Remaining { estimate: FINALIZER_ESTIMATE_SECONDS, ..remaining });
    }
    Err(format!("unexpected items still remain in namespace: {namespace} for gvr: {gvr}"))
}

/// Everything one pass over the namespace's content observed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeletionReport {
    /// Groups whose discovery failed: `group/version` -> error.
    pub discovery_failures: BTreeMap<String, String>,
    /// Group versions that did not parse.
    pub parse_failures: Vec<String>,
    /// Per-type deletion errors.
    pub content_failures: Vec<String>,
    /// `resource.group` -> objects remaining.
    pub remaining: BTreeMap<String, usize>,
    /// Finalizer -> remaining objects carrying it.
    pub finalizers: BTreeMap<String, usize>,
    /// Seconds until content may be gone (the max over types).
    pub estimate: u64,
}

impl DeletionReport {
    /// Folds one type's outcome in.
    pub fn record(&mut self, gvr: &Gvr, outcome: Result<Remaining, String>) {
        match outcome {
            Ok(r) => {
                self.estimate = self.estimate.max(r.estimate);
                if r.count > 0 {
                    *self.remaining.entry(gvr.group_resource()).or_insert(0) += r.count;
                }
                for (f, n) in r.finalizers {
                    *self.finalizers.entry(f).or_insert(0) += n;
                }
            }
            Err(e) => self.content_failures.push(e),
        }
    }

    /// The discovery error as upstream's `ErrGroupDiscoveryFailed` prints it.
    pub(super) fn discovery_error(&self) -> String {
        let groups: Vec<String> = self.discovery_failures.iter().map(|(gv, e)| format!("{gv}: {e}")).collect();
        format!("unable to retrieve the complete list of server APIs: {}", groups.join(", "))
    }

    /// Every error of the pass, for the sync's result.
    pub fn errors(&self) -> Vec<String> {
        let mut errors = Vec::new();
        if !self.discovery_failures.is_empty() {
            errors.push(self.discovery_error());
        }
        errors.extend(self.parse_failures.iter().cloned());
        errors.extend(self.content_failures.iter().cloned());
        errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::testing::{gvr, ts};

    // === utils ===

    fn pod(phase: &str, grace: Option<i64>) -> PodGrace {
        PodGrace { phase: Some(phase.into()), grace_seconds: grace }
    }

    // === tests ===

    #[test]
    fn estimate_is_the_longest_grace_of_live_pods_until_it_has_passed() {
        let deleted = ts("2026-01-01T00:00:00Z");
        let pods = [pod("Running", Some(30)), pod("Pending", Some(10)), pod("Succeeded", Some(600))];
        let cases = [
            ("2026-01-01T00:00:12Z", 30),
            ("2026-01-01T00:00:29Z", 30),
            ("2026-01-01T00:00:30Z", 0),
            ("2026-01-01T00:05:00Z", 0),
        ];
        for (now, want) in cases {
            assert_eq!(estimate_graceful_termination(&pods, Some(deleted), ts(now)), want, "at {now}");
        }
        assert_eq!(estimate_graceful_termination(&[pod("Failed", Some(30))], Some(deleted), deleted), 0);
        assert_eq!(estimate_graceful_termination(&[pod("Running", None)], Some(deleted), deleted), 0);
        assert_eq!(estimate_graceful_termination(&[], None, deleted), 0);
    }

    #[test]
    fn leftovers_wait_on_the_estimate_then_on_finalizers_else_fail() {
        let pods = gvr("", "pods");
        assert_eq!(remaining_outcome("ns", &pods, &[], 30), Ok(Remaining::default()));
        let two = [vec![], vec![]];
        assert_eq!(
            remaining_outcome("ns", &pods, &two, 30),
            Ok(Remaining { estimate: 30, count: 2, ..Default::default() })
        );
        let held = [vec!["example.com/x".to_owned()], vec![]];
        assert_eq!(
            remaining_outcome("ns", &gvr("example.com", "widgets"), &held, 0),
            Ok(Remaining {
                estimate: FINALIZER_ESTIMATE_SECONDS,
                count: 2,
                finalizers: BTreeMap::from([("example.com/x".to_owned(), 1)]),
            })
        );
        assert_eq!(
            remaining_outcome("ns", &gvr("apps", "deployments"), &[vec![]], 0),
            Err("unexpected items still remain in namespace: ns for gvr: apps/v1, Resource=deployments".to_owned())
        );
    }
}
