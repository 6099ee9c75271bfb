//! Which pods to delete first when scaling down (upstream
//! `ActivePodsWithRanks.Less`, with `PodDeletionCost` and
//! `LogarithmicScaleDown` on, as they are by default).
//!
//! The first rule that tells two pods apart decides; "first" means deleted
//! first:
//! 1. not yet scheduled before scheduled (only when exactly one of the two
//!    has no node);
//! 2. phase `Pending` (and unknown spellings) before `Unknown` before `Running`;
//! 3. not Ready before Ready;
//! 4. lower `controller.kubernetes.io/pod-deletion-cost` first;
//! 5. higher rank first (rank = active related pods on the same node, so
//!    doubled-up nodes shed pods first);
//! 6. both Ready since different times: Ready for less time first, compared
//!    in power-of-two buckets of age, ties in a bucket broken by smaller uid;
//!    an unknown time goes first;
//! 7. more container restarts first (regular containers, then sidecars);
//! 8. created more recently first (same bucket rule; an unknown time goes
//!    first).
//!
//! The relation is not a strict weak order (rule 6's uid tiebreak applies
//! only to differing times), so it is sorted with our own merge sort, which
//! cannot panic on such a relation as `slice::sort_by` may.

use std::cmp::Ordering;

use jiff::Timestamp;
use kcm_objects::Pod;

use super::pod::{is_pod_active, is_pod_ready, max_container_restarts, phase, ready_since};

/// Annotation by which users say how much deleting a pod costs.
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

/// The pod's deletion cost; a missing or unparsable annotation is 0.
pub fn deletion_cost(pod: &Pod) -> i32 {
    pod.metadata.annotations.get(POD_DELETION_COST).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// For each pod of `pods`, the number of active pods of `related` on the
/// same node (upstream `getPodsRankedByRelatedPodsOnSameNode`; unscheduled
/// pods share the node "").
pub fn colocation_ranks(pods: &[&Pod], related: &[&Pod]) -> Vec<usize> {
    let mut on_node = std::collections::HashMap::<&str, usize>::new();
    for p in related.iter().filter(|p| is_pod_active(p)) {
        *on_node.entry(node_name(p)).or_default() += 1;
    }
    pods.iter().map(|p| on_node.get(node_name(p)).copied().unwrap_or(0)).collect()
}

/// Whether `a` (with rank `rank_a`) is deleted before `b` (upstream `Less`).
pub fn delete_before(a: &Pod, rank_a: usize, b: &Pod, rank_b: usize, now: Timestamp) -> bool {
    compare(a, rank_a, b, rank_b, now) == Ordering::Less
}

fn compare(a: &Pod, rank_a: usize, b: &Pod, rank_b: usize, now: Timestamp) -> Ordering {
    let (na, nb) = (node_name(a), node_name(b));
    if na != nb && (na.is_empty() || nb.is_empty()) {
        return if na.is_empty() { Ordering::Less } else { Ordering::Greater };
    }
    let phase_ordinal = |p: &Pod| match phase(p) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    };
    let by_phase = phase_ordinal(a).cmp(&phase_ordinal(b));
    if by_phase != Ordering::Equal {
        return by_phase;
    }
    let (ra, rb) = (is_pod_ready(a), is_pod_ready(b));
    if ra != rb {
        return if ra { Ordering::Greater } else { Ordering::Less };
    }
    let by_cost = deletion_cost(a).cmp(&deletion_cost(b));
    if by_cost != Ordering::Equal {
        return by_cost;
    }
    if rank_a != rank_b {
        return rank_b.cmp(&rank_a);
    }
    if ra && rb {
        let (ta, tb) = (ready_since(a), ready_since(b));
        if ta != tb {
            return newer_first(ta, tb, a, b, now);
        }
    }
    let (restarts_a, restarts_b) = (max_container_restarts(a), max_container_restarts(b));
    if restarts_a.0 != restarts_b.0 {
        return restarts_b.0.cmp(&restarts_a.0);
    }
    if restarts_a.1 != restarts_b.1 {
        return restarts_b.1.cmp(&restarts_a.1);
    }
    let (ca, cb) = (a.metadata.creation_timestamp(), b.metadata.creation_timestamp());
    if ca != cb {
        return newer_first(ca, cb, a, b, now);
    }
    Ordering::Equal
}

fn node_name(p: &Pod) -> &str {
    p.node_name().unwrap_or("")
}

/// Rules 6 and 8 for two differing times: unknown first, then the younger
/// power-of-two age bucket, then the smaller uid.
fn newer_first(ta: Option<Timestamp>, tb: Option<Timestamp>, a: &Pod, b: &Pod, now: Timestamp) -> Ordering {
    match (ta, tb) {
        (None, _) => Ordering::Less,
        (_, None) => Ordering::Greater,
        (Some(ta), Some(tb)) => match age_bucket(ta, now).cmp(&age_bucket(tb, now)) {
            Ordering::Equal => a.metadata.uid.cmp(&b.metadata.uid),
            other => other,
        },
    }
}

/// `floor(log2(age in nanoseconds))`, or -1 for a time not in the past.
///
/// Example: pods Ready for 1 minute (6e10 ns, bucket 35) and 10 minutes
/// (6e11 ns, bucket 39) are told apart; 60 s and 61 s both fall in bucket 35,
/// so their uids decide.
fn age_bucket(t: Timestamp, now: Timestamp) -> i64 {
    let nanos = now.as_nanosecond() - t.as_nanosecond();
    if nanos <= 0 { -1 } else { (nanos as f64).log2().floor() as i64 }
}

/// Sorts `pods` (each with its rank) so that the ones to delete first come
/// first. Stable: pods the rules cannot tell apart keep their order.
pub fn sort_for_deletion(pods: &mut [(&Pod, usize)], now: Timestamp) {
    merge_sort(pods, &|x: &(&Pod, usize), y: &(&Pod, usize)| delete_before(x.0, x.1, y.0, y.1, now));
}

/// A stable top-down merge sort that takes any `less` relation.
fn merge_sort<T: Copy>(items: &mut [T], less: &dyn Fn(&T, &T) -> bool) {
    if items.len() <= 1 {
        return;
    }
    let mid = items.len() / 2;
    merge_sort(&mut items[..mid], less);
    merge_sort(&mut items[mid..], less);
    let (left, right) = (items[..mid].to_vec(), items[mid..].to_vec());
    let (mut i, mut j) = (0, 0);
    for slot in items.iter_mut() {
        // Take from the right only when it is strictly first: stability.
        let take_right = i == left.len() || (j < right.len() && less(&right[j], &left[i]));
        if take_right {
            *slot = right[j];
            j += 1;
        } else {
            *slot = left[i];
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{PodBuilder, ts};

    const NOW: i64 = 1_000_000;

    fn order(pods: &[Pod], ranks: &[usize]) -> Vec<String> {
        let mut v: Vec<(&Pod, usize)> = pods.iter().zip(ranks.iter().copied()).collect();
        sort_for_deletion(&mut v, ts(NOW));
        v.iter().map(|(p, _)| p.metadata.name.to_string()).collect()
    }

    /// Each case lists two pods that differ only in the rule under test; the
    /// first must be deleted first whatever the input order.
    #[test]
    fn each_rule_orders_a_pair() {
        let base =
            || PodBuilder::new("x").node("n1").phase("Running").ready_since(ts(NOW - 600)).created(ts(NOW - 3600));
        let cases: Vec<(&str, PodBuilder, usize, PodBuilder, usize)> = vec![
            ("unscheduled before scheduled", base().node(""), 0, base(), 0),
            ("pending before unknown", base().phase("Pending"), 0, base().phase("Unknown"), 0),
            ("unknown before running", base().phase("Unknown"), 0, base(), 0),
            ("not ready before ready", base().not_ready(), 0, base(), 0),
            ("lower deletion cost first", base().annotation(POD_DELETION_COST, "-100"), 0, base(), 0),
            ("cost 0 before 100", base(), 0, base().annotation(POD_DELETION_COST, "100"), 0),
            (
                "invalid cost counts as 0",
                base().annotation(POD_DELETION_COST, "x"),
                0,
                base().annotation(POD_DELETION_COST, "1"),
                0,
            ),
            ("higher rank first", base(), 2, base(), 1),
            ("ready for less time first", base().ready_since(ts(NOW - 60)), 0, base().ready_since(ts(NOW - 600)), 0),
            ("more restarts first", base().restarts(3), 0, base().restarts(1), 0),
            ("more sidecar restarts first", base().sidecar_restarts(2), 0, base(), 0),
            ("newer first", base().created(ts(NOW - 60)), 0, base().created(ts(NOW - 600)), 0),
        ];
        for (name, first, rank_first, second, rank_second) in cases {
            let pods = [second.name("second").uid("u1").build(), first.name("first").uid("u2").build()];
            assert_eq!(order(&pods, &[rank_second, rank_first]), ["first", "second"], "{name}");
            let pods = [pods[1].clone(), pods[0].clone()];
            assert_eq!(order(&pods, &[rank_first, rank_second]), ["first", "second"], "{name} (swapped)");
        }
    }

    #[test]
    fn same_age_bucket_falls_back_to_uid() {
        let p = |name: &str, uid: &str, since: i64| {
            PodBuilder::new(name).node("n").phase("Running").ready_since(ts(since)).uid(uid).build()
        };
        // 60 s and 61 s are both in bucket floor(log2(6.0e10)) = 35.
        let pods = [p("older-smaller-uid", "a", NOW - 61), p("newer-bigger-uid", "b", NOW - 60)];
        assert_eq!(order(&pods, &[0, 0]), ["older-smaller-uid", "newer-bigger-uid"]);
    }

    /// Reference scenario 39: p1 unscheduled Pending, p2 on A Running not
    /// Ready, p3 on A Ready 10 min, p4 on B Ready 1 min.
    #[test]
    fn scenario_39() {
        let p1 = PodBuilder::new("p1").phase("Pending").build();
        let p2 = PodBuilder::new("p2").node("A").phase("Running").not_ready().build();
        let p3 = PodBuilder::new("p3").node("A").phase("Running").ready_since(ts(NOW - 600)).build();
        let p4 = PodBuilder::new("p4").node("B").phase("Running").ready_since(ts(NOW - 60)).build();
        let pods = [p4, p3, p2, p1];
        let all: Vec<&Pod> = pods.iter().collect();
        // Owned through a Deployment: ranks count the related pods per node.
        assert_eq!(order(&pods, &colocation_ranks(&all, &all)), ["p1", "p2", "p3", "p4"]);
        // Standalone: every rank is 0, so p4 (Ready 1 min) goes before p3.
        assert_eq!(order(&pods, &[0, 0, 0, 0]), ["p1", "p2", "p4", "p3"]);
    }

    #[test]
    fn ranks_count_only_active_pods() {
        let a1 = PodBuilder::new("a1").node("A").build();
        let a2 = PodBuilder::new("a2").node("A").phase("Failed").build();
        let b1 = PodBuilder::new("b1").node("B").build();
        assert_eq!(colocation_ranks(&[&a1, &b1], &[&a1, &a2, &b1, &b1]), [1, 2]);
    }
}
