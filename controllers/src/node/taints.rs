//! What the node lifecycle controller writes besides node status: the
//! taint plans, the beta os/arch labels, and the pod status of
//! `MarkPodsNotReady` (upstream `doNoScheduleTaintingPass`,
//! `processTaintBaseEviction`, the tainting pass's action,
//! `SwapNodeControllerTaint`, `reconcileNodeLabels`, `MarkPodsNotReady`).
//!
//! Two families of taints mirror the node's conditions:
//! - `NoSchedule` (keep new pods off): `not-ready` (Ready False),
//!   `unreachable` (Ready Unknown), `memory-pressure`, `disk-pressure`,
//!   `pid-pressure`, `network-unavailable` (each condition True) and
//!   `unschedulable` (`spec.unschedulable`). They follow the conditions at
//!   once, on every node change.
//! - `NoExecute` `not-ready` / `unreachable` (evict pods that do not
//!   tolerate them, after their `tolerationSeconds`): added through the
//!   zone's rate-limited queue, mutually exclusive (swapped at once when
//!   Ready flips between False and Unknown), removed when Ready is True.
//!
//! A [`TaintSwap`] is turned into the node's whole new taint list by
//! [`TaintSwap::apply`]; the driver sends it in a patch carrying the
//! node's resourceVersion, and on a conflict re-reads the node and applies
//! the swap again.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, PodStatus, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kcm_objects::Node;

use super::health::{
    self, DISK_PRESSURE, FALSE, MEMORY_PRESSURE, NETWORK_UNAVAILABLE, PID_PRESSURE, READY, TRUE, UNKNOWN,
};

/// Taint key: Ready is False.
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Taint key: Ready is Unknown.
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// Taint key: `spec.unschedulable`.
pub const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// Taint key: MemoryPressure is True.
pub const TAINT_MEMORY_PRESSURE: &str = "node.kubernetes.io/memory-pressure";
/// Taint key: DiskPressure is True.
pub const TAINT_DISK_PRESSURE: &str = "node.kubernetes.io/disk-pressure";
/// Taint key: PIDPressure is True.
pub const TAINT_PID_PRESSURE: &str = "node.kubernetes.io/pid-pressure";
/// Taint key: NetworkUnavailable is True.
pub const TAINT_NETWORK_UNAVAILABLE: &str = "node.kubernetes.io/network-unavailable";

/// Effect `NoSchedule`.
pub const NO_SCHEDULE: &str = "NoSchedule";
/// Effect `NoExecute`.
pub const NO_EXECUTE: &str = "NoExecute";

/// Condition type and status -> `NoSchedule` taint key (upstream
/// `nodeConditionToTaintKeyStatusMap`).
const CONDITION_TAINTS: [(&str, &str, &str); 6] = [
    (READY, FALSE, TAINT_NOT_READY),
    (READY, UNKNOWN, TAINT_UNREACHABLE),
    (MEMORY_PRESSURE, TRUE, TAINT_MEMORY_PRESSURE),
    (DISK_PRESSURE, TRUE, TAINT_DISK_PRESSURE),
    (PID_PRESSURE, TRUE, TAINT_PID_PRESSURE),
    (NETWORK_UNAVAILABLE, TRUE, TAINT_NETWORK_UNAVAILABLE),
];

/// Labels copied from their GA key to their beta key (upstream
/// `labelReconcileInfo`).
const BETA_LABELS: [(&str, &str); 2] =
    [("kubernetes.io/os", "beta.kubernetes.io/os"), ("kubernetes.io/arch", "beta.kubernetes.io/arch")];

fn template(key: &str, effect: &str) -> Taint {
    Taint { key: key.into(), effect: effect.into(), ..Taint::default() }
}

/// The `NoExecute` unreachable taint (upstream `UnreachableTaintTemplate`).
pub fn unreachable_no_execute() -> Taint {
    template(TAINT_UNREACHABLE, NO_EXECUTE)
}

/// The `NoExecute` not-ready taint (upstream `NotReadyTaintTemplate`).
pub fn not_ready_no_execute() -> Taint {
    template(TAINT_NOT_READY, NO_EXECUTE)
}

/// Whether `taints` hold one with the key and effect of `t` (upstream
/// `TaintExists` / `MatchTaint`).
pub fn has_taint(taints: &[Taint], t: &Taint) -> bool {
    taints.iter().any(|x| x.key == t.key && x.effect == t.effect)
}

/// The node's taints.
pub fn node_taints(node: &Node) -> &[Taint] {
    &node.spec.taints
}

/// Taints to add and to remove in one write (upstream
/// `SwapNodeControllerTaint`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaintSwap {
    /// Added, stamped `timeAdded = now`, unless a taint with the same key,
    /// effect and value is there.
    pub add: Vec<Taint>,
    /// Every taint with one of these keys and effects is removed.
    pub remove: Vec<Taint>,
}

impl TaintSwap {
    /// Remove both `NoExecute` taints (upstream `markNodeAsReachable`).
    pub fn reachable() -> Self {
        TaintSwap { add: Vec::new(), remove: vec![unreachable_no_execute(), not_ready_no_execute()] }
    }

    /// The node's taint list after the swap, or `None` when it would not
    /// change (no write needed).
    pub fn apply(&self, current: &[Taint], now: Timestamp) -> Option<Vec<Taint>> {
        let mut taints: Vec<Taint> = current.iter().filter(|t| !has_taint(&self.remove, t)).cloned().collect();
        for add in &self.add {
            match taints.iter_mut().find(|t| t.key == add.key && t.effect == add.effect) {
                Some(t) if t.value == add.value => {}
                Some(t) => *t = Taint { time_added: Some(Time(now)), ..add.clone() },
                None => taints.push(Taint { time_added: Some(Time(now)), ..add.clone() }),
            }
        }
        (taints != current).then_some(taints)
    }
}

/// The `NoSchedule` condition taints the node should carry, diffed against
/// the ones it has (upstream `doNoScheduleTaintingPass`); `None` when they
/// agree.
pub fn no_schedule_swap(node: &Node) -> Option<TaintSwap> {
    let conditions = &node.status.conditions;
    let mut desired: Vec<Taint> = conditions
        .iter()
        .filter_map(|c| {
            CONDITION_TAINTS.iter().find(|(kind, status, _)| c.type_ == *kind && c.status == *status).map(|t| t.2)
        })
        .map(|key| template(key, NO_SCHEDULE))
        .collect();
    if node.spec.unschedulable {
        desired.push(template(TAINT_UNSCHEDULABLE, NO_SCHEDULE));
    }
    let ours = |t: &Taint| {
        t.effect == NO_SCHEDULE
            && (t.key == TAINT_UNSCHEDULABLE || CONDITION_TAINTS.iter().any(|(_, _, key)| t.key == *key))
    };
    let existing: Vec<&Taint> = node_taints(node).iter().filter(|t| ours(t)).collect();
    let add: Vec<Taint> = desired.iter().filter(|d| !existing.iter().any(|e| same(e, d))).cloned().collect();
    let remove: Vec<Taint> =
        existing.iter().filter(|e| !desired.iter().any(|d| same(e, d))).map(|e| (*e).clone()).collect();
    (!add.is_empty() || !remove.is_empty()).then_some(TaintSwap { add, remove })
}

/// Key, value and effect agree (upstream `TaintSetDiff` compares these
/// through `MatchTaint` plus value).
fn same(a: &Taint, b: &Taint) -> bool {
    a.key == b.key && a.effect == b.effect && a.value == b.value
}

/// The `NoExecute` swap the tainting queue applies for a node whose Ready
/// status is `ready` (`None` when Ready is True or missing: nothing to do).
pub fn no_execute_swap(ready: &str) -> Option<TaintSwap> {
    match ready {
        FALSE => Some(TaintSwap { add: vec![not_ready_no_execute()], remove: vec![unreachable_no_execute()] }),
        UNKNOWN => Some(TaintSwap { add: vec![unreachable_no_execute()], remove: vec![not_ready_no_execute()] }),
        _ => None,
    }
}

/// What a monitor pass does about a node's `NoExecute` taints, given the
/// Ready condition it observed *before* this pass changed it (upstream
/// `processTaintBaseEviction`): so the taint lands one monitor period
/// after the node went Unknown.
#[derive(Debug, Clone, PartialEq)]
pub enum NoExecuteStep {
    /// The node carries the opposite `NoExecute` taint: swap it now,
    /// without waiting for the queue.
    SwapNow(TaintSwap),
    /// Queue the node in its zone. `forget_first`: it lacks the matching
    /// taint, so forget it in the queue first (it may have been processed
    /// before, e.g. for the opposite status) so that the add takes.
    Queue {
        /// Remove the node from the queue before adding it.
        forget_first: bool,
    },
    /// Ready: remove both `NoExecute` taints and forget the node in the
    /// queue (upstream `markNodeAsReachable`).
    MarkReachable,
    /// An unexpected status: nothing.
    Nothing,
}

/// Upstream `processTaintBaseEviction`.
pub fn no_execute_step(node: &Node, observed_ready: &str) -> NoExecuteStep {
    let taints = node_taints(node);
    let (wanted, opposite) = match observed_ready {
        FALSE => (not_ready_no_execute(), unreachable_no_execute()),
        UNKNOWN => (unreachable_no_execute(), not_ready_no_execute()),
        TRUE => return NoExecuteStep::MarkReachable,
        _ => return NoExecuteStep::Nothing,
    };
    if has_taint(taints, &opposite) {
        return NoExecuteStep::SwapNow(TaintSwap { add: vec![wanted], remove: vec![opposite] });
    }
    NoExecuteStep::Queue { forget_first: !has_taint(taints, &wanted) }
}

/// The beta labels to set so they match `kubernetes.io/os` and
/// `kubernetes.io/arch` (upstream `reconcileNodeLabels`); empty when they
/// do.
pub fn beta_labels(node: &Node) -> BTreeMap<String, String> {
    let labels = &node.metadata.labels;
    BETA_LABELS
        .iter()
        .filter_map(|(ga, beta)| {
            let value = labels.get(ga)?;
            (labels.get(beta) != Some(value)).then(|| ((*beta).to_owned(), value.to_owned()))
        })
        .collect()
}

/// Whether a cached pod is one [`pod_not_ready_status`] would write for:
/// on `node_name`, with a Ready condition that is not False.
pub fn needs_not_ready_mark(pod: &kcm_objects::Pod, node_name: &str) -> bool {
    pod.node_name() == Some(node_name) && pod.condition(health::READY).is_some_and(|c| c.status() != FALSE)
}

/// The status of a pod on `node_name` with its Ready condition set to
/// False, `lastTransitionTime = now` (upstream `MarkPodsNotReady` with
/// `UpdatePodCondition`); `None` when there is nothing to write (not on
/// that node, no Ready condition, already False).
pub fn pod_not_ready_status(pod: &Pod, node_name: &str, now: Timestamp) -> Option<PodStatus> {
    if pod.spec.as_ref().and_then(|s| s.node_name.as_deref()) != Some(node_name) {
        return None;
    }
    let mut status = pod.status.clone()?;
    let ready = status.conditions.as_mut()?.iter_mut().find(|c| c.type_ == health::READY)?;
    if ready.status == FALSE {
        return None;
    }
    ready.status = FALSE.into();
    ready.last_transition_time = Some(Time(now));
    Some(status)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{PodCondition, PodSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;
    use crate::node::testing::{NodeBuilder, taint, ts};

    /// Added and removed taints as `key:effect`.
    type Keys = (Vec<String>, Vec<String>);

    fn keys(swap: &Option<TaintSwap>) -> Keys {
        let s = swap.clone().unwrap_or_default();
        let k = |v: &[Taint]| v.iter().map(|t| format!("{}:{}", t.key, t.effect)).collect();
        (k(&s.add), k(&s.remove))
    }

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn no_schedule_taints_follow_the_conditions() {
        let nr = "node.kubernetes.io/not-ready:NoSchedule";
        let ur = "node.kubernetes.io/unreachable:NoSchedule";
        let cases: Vec<(&str, NodeBuilder, Keys)> = vec![
            ("healthy", NodeBuilder::new("n").ready(TRUE, ts(0)).condition(MEMORY_PRESSURE, FALSE), (v(&[]), v(&[]))),
            ("not ready", NodeBuilder::new("n").ready(FALSE, ts(0)), (v(&[nr]), v(&[]))),
            ("unreachable", NodeBuilder::new("n").ready(UNKNOWN, ts(0)), (v(&[ur]), v(&[]))),
            (
                "unknown, was not ready",
                NodeBuilder::new("n").ready(UNKNOWN, ts(0)).taint(TAINT_NOT_READY, NO_SCHEDULE),
                (v(&[ur]), v(&[nr])),
            ),
            (
                "recovered",
                NodeBuilder::new("n").ready(TRUE, ts(0)).taint(TAINT_UNREACHABLE, NO_SCHEDULE),
                (v(&[]), v(&[ur])),
            ),
            (
                "pressures",
                NodeBuilder::new("n")
                    .ready(TRUE, ts(0))
                    .condition(MEMORY_PRESSURE, TRUE)
                    .condition(DISK_PRESSURE, TRUE)
                    .condition(PID_PRESSURE, TRUE)
                    .condition(NETWORK_UNAVAILABLE, TRUE),
                (
                    v(&[
                        "node.kubernetes.io/memory-pressure:NoSchedule",
                        "node.kubernetes.io/disk-pressure:NoSchedule",
                        "node.kubernetes.io/pid-pressure:NoSchedule",
                        "node.kubernetes.io/network-unavailable:NoSchedule",
                    ]),
                    v(&[]),
                ),
            ),
            (
                "cordoned",
                NodeBuilder::new("n").ready(TRUE, ts(0)).unschedulable(),
                (v(&["node.kubernetes.io/unschedulable:NoSchedule"]), v(&[])),
            ),
            (
                "uncordoned",
                NodeBuilder::new("n").ready(TRUE, ts(0)).taint(TAINT_UNSCHEDULABLE, NO_SCHEDULE),
                (v(&[]), v(&["node.kubernetes.io/unschedulable:NoSchedule"])),
            ),
            (
                "foreign and NoExecute taints are not ours",
                NodeBuilder::new("n")
                    .ready(TRUE, ts(0))
                    .taint("example.com/gpu", NO_SCHEDULE)
                    .taint(TAINT_UNREACHABLE, NO_EXECUTE),
                (v(&[]), v(&[])),
            ),
        ];
        for (name, node, expected) in cases {
            assert_eq!(keys(&no_schedule_swap(&node.build())), expected, "{name}");
        }
    }

    #[test]
    fn a_swap_builds_the_whole_new_taint_list() {
        let current = vec![taint("example.com/gpu", NO_SCHEDULE), not_ready_no_execute()];
        let swap = no_execute_swap(UNKNOWN).unwrap();
        let next = swap.apply(&current, ts(7)).unwrap();
        assert_eq!(
            next,
            vec![
                taint("example.com/gpu", NO_SCHEDULE),
                Taint { time_added: Some(Time(ts(7))), ..unreachable_no_execute() }
            ]
        );
        // Applying it again changes nothing: no write.
        assert_eq!(swap.apply(&next, ts(8)), None);
        // Recovery removes both NoExecute taints, only those.
        assert_eq!(TaintSwap::reachable().apply(&next, ts(9)), Some(vec![taint("example.com/gpu", NO_SCHEDULE)]));
        assert_eq!(TaintSwap::reachable().apply(&[taint("example.com/gpu", NO_SCHEDULE)], ts(9)), None);
        assert_eq!(no_execute_swap(TRUE), None);
    }

    #[test]
    fn no_execute_steps_follow_the_observed_condition() {
        let plain = NodeBuilder::new("n");
        let cases = [
            ("unknown, untainted", plain.clone(), UNKNOWN, NoExecuteStep::Queue { forget_first: true }),
            (
                "unknown, tainted",
                plain.clone().taint(TAINT_UNREACHABLE, NO_EXECUTE),
                UNKNOWN,
                NoExecuteStep::Queue { forget_first: false },
            ),
            (
                "unknown, was not ready: swap at once",
                plain.clone().taint(TAINT_NOT_READY, NO_EXECUTE),
                UNKNOWN,
                NoExecuteStep::SwapNow(TaintSwap {
                    add: vec![unreachable_no_execute()],
                    remove: vec![not_ready_no_execute()],
                }),
            ),
            ("false, untainted", plain.clone(), FALSE, NoExecuteStep::Queue { forget_first: true }),
            (
                "false, was unreachable: swap at once",
                plain.clone().taint(TAINT_UNREACHABLE, NO_EXECUTE),
                FALSE,
                NoExecuteStep::SwapNow(TaintSwap {
                    add: vec![not_ready_no_execute()],
                    remove: vec![unreachable_no_execute()],
                }),
            ),
            ("ready", plain.clone().taint(TAINT_UNREACHABLE, NO_EXECUTE), TRUE, NoExecuteStep::MarkReachable),
            ("garbage status", plain, "Maybe", NoExecuteStep::Nothing),
        ];
        for (name, node, observed, expected) in cases {
            assert_eq!(no_execute_step(&node.build(), observed), expected, "{name}");
        }
    }

    #[test]
    fn beta_labels_copy_os_and_arch() {
        let node = |pairs: &[(&str, &str)]| pairs.iter().fold(NodeBuilder::new("n"), |b, (k, v)| b.label(k, v)).build();
        assert!(beta_labels(&NodeBuilder::new("n").build()).is_empty());
        assert_eq!(
            beta_labels(&node(&[
                ("kubernetes.io/os", "linux"),
                ("kubernetes.io/arch", "arm64"),
                ("beta.kubernetes.io/arch", "amd64")
            ])),
            BTreeMap::from([
                ("beta.kubernetes.io/os".into(), "linux".into()),
                ("beta.kubernetes.io/arch".into(), "arm64".into())
            ])
        );
        assert!(beta_labels(&node(&[("kubernetes.io/os", "linux"), ("beta.kubernetes.io/os", "linux")])).is_empty());
        assert!(beta_labels(&node(&[("beta.kubernetes.io/os", "linux")])).is_empty(), "no GA label: left alone");
    }

    #[test]
    fn pods_are_marked_not_ready_once() {
        let pod = |node: &str, ready: &str| Pod {
            metadata: ObjectMeta { name: Some("p".into()), ..ObjectMeta::default() },
            spec: Some(PodSpec { node_name: Some(node.into()), ..PodSpec::default() }),
            status: Some(PodStatus {
                conditions: Some(vec![
                    PodCondition { type_: "ContainersReady".into(), status: TRUE.into(), ..PodCondition::default() },
                    PodCondition {
                        type_: READY.into(),
                        status: ready.into(),
                        last_transition_time: Some(Time(ts(1))),
                        ..PodCondition::default()
                    },
                ]),
                ..PodStatus::default()
            }),
        };
        let status = pod_not_ready_status(&pod("n1", TRUE), "n1", ts(60)).unwrap();
        let conditions = status.conditions.unwrap();
        assert_eq!(
            (conditions[1].status.as_str(), conditions[1].last_transition_time.clone()),
            (FALSE, Some(Time(ts(60))))
        );
        assert_eq!(conditions[0].status, TRUE, "ContainersReady is not touched");
        assert_eq!(pod_not_ready_status(&pod("n1", FALSE), "n1", ts(60)), None, "already not ready");
        assert_eq!(pod_not_ready_status(&pod("n2", TRUE), "n1", ts(60)), None, "another node");
        let mut no_ready = pod("n1", TRUE);
        no_ready.status.as_mut().unwrap().conditions.as_mut().unwrap().pop();
        assert_eq!(pod_not_ready_status(&no_ready, "n1", ts(60)), None);
    }
}
