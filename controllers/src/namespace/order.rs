//! Ordered namespace deletion (upstream KEP-5080, `OrderedNamespaceDeletion`:
//! GA and locked on since 1.34, the gate gone in 1.37): a namespace's pods
//! are deleted first, and no other type is touched while one remains, so
//! that the NetworkPolicies, Secrets and ConfigMaps a pod relies on
//! outlive it.
//!
//! A pass deletes the first wave (core `pods`), and goes on to the other
//! types only once that wave is settled: nothing left, nothing failed.
//! Upstream goes on after a failed pod delete whose re-list did not run
//! (it only counts what a re-list found); kcm-rs waits for the next pass
//! instead, so a failing pod delete never lets the rest go first.

use super::remaining::DeletionReport;
use super::resources::Gvr;

/// The discovered types in deletion order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waves<T> {
    /// Core `pods`, deleted first.
    pub first: Vec<(Gvr, T)>,
    /// Every other type, deleted once the first wave is settled.
    pub rest: Vec<(Gvr, T)>,
}

/// Splits the discovered types (each with whatever the driver needs to
/// reach it) into the two waves, keeping their order within each.
pub fn waves<T>(types: Vec<(Gvr, T)>) -> Waves<T> {
    let (first, rest) = types.into_iter().partition(|(gvr, _)| gvr.is_pods());
    Waves { first, rest }
}

/// Whether the pass may go on to the rest after the first wave: `report`
/// holds only the first wave's outcomes, and nothing of it remains or
/// failed.
pub fn first_wave_settled(report: &DeletionReport) -> bool {
    report.remaining.is_empty() && report.content_failures.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::remaining::Remaining;
    use crate::namespace::testing::gvr;

    #[test]
    fn core_pods_go_first_and_the_rest_keeps_its_order() {
        let types = vec![
            (gvr("", "configmaps"), 1),
            (gvr("metrics.k8s.io", "pods"), 2),
            (gvr("", "pods"), 3),
            (gvr("networking.k8s.io", "networkpolicies"), 4),
        ];
        let w = waves(types);
        assert_eq!(w.first, vec![(gvr("", "pods"), 3)]);
        let rest: Vec<i32> = w.rest.iter().map(|(_, n)| *n).collect();
        assert_eq!(rest, [1, 2, 4], "another group's `pods` is ordinary content");
    }

    /// Upstream's conformance scenario: a pod held by a finalizer keeps
    /// every other type of its namespace.
    #[test]
    fn the_rest_waits_while_a_pod_remains_or_its_delete_failed() {
        let pods = gvr("", "pods");
        let mut gone = DeletionReport::default();
        gone.record(&pods, Ok(Remaining::default()));
        assert!(first_wave_settled(&gone));

        let mut held = DeletionReport::default();
        let outcome = crate::namespace::remaining_outcome("ns", &pods, &[vec!["e2e.example.com/finalizer".into()]], 0);
        held.record(&pods, outcome);
        assert!(!first_wave_settled(&held));

        let mut failed = DeletionReport::default();
        failed.record(&pods, Err("failed to delete collection of /v1, Resource=pods in ns: 500".into()));
        assert!(!first_wave_settled(&failed));
    }
}
