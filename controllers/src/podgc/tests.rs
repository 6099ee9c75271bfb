//! Upstream's `gc_controller_test.go` tables, each test named after the
//! upstream test it ports. Upstream counts deletes and status patches on a
//! fake client and reads the metrics by reason; here the decisions carry
//! the same facts (which pods, which have a status patch, which reason).

use std::collections::BTreeSet;

use jiff::Timestamp;
use kcm_objects::{Node, Pod};
use serde_json::{Value, json};

use super::*;
use crate::testing::ts;

// === utils ===

/// A pod in `default`, created `hour` hours after the epoch (upstream's
/// tests create each pod an hour after the previous one).
fn pod(name: &str, node: &str, phase: &str, hour: i64) -> Value {
    json!({
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
            "creationTimestamp": ts(hour * 3600).to_string()},
        "spec": {"nodeName": node},
        "status": {"phase": phase},
    })
}

fn deleting(mut pod: Value) -> Value {
    pod["metadata"]["deletionTimestamp"] = json!(ts(0).to_string());
    pod
}

fn with_reason(mut pod: Value, reason: &str) -> Value {
    pod["status"]["reason"] = json!(reason);
    pod
}

fn slim_pods(pods: &[Value]) -> Vec<Pod> {
    pods.iter().map(|p| serde_json::from_value(p.clone()).expect("a pod")).collect()
}

/// A node with a `Ready` condition of this status and these taints.
fn node(name: &str, ready: &str, taints: Value) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"taints": taints},
        "status": {"conditions": [{"type": "Ready", "status": ready}]},
    }))
    .expect("a node")
}

fn healthy(name: &str) -> Node {
    node(name, "True", json!([]))
}

fn names(decisions: &[ForceDelete]) -> BTreeSet<&str> {
    decisions.iter().map(|d| d.name.as_str()).collect()
}

fn patched(decisions: &[ForceDelete]) -> BTreeSet<&str> {
    decisions.iter().filter(|d| d.status_patch.is_some()).map(|d| d.name.as_str()).collect()
}

fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
    names.iter().copied().collect()
}

/// Every part of a pass at `now`, as upstream's `gc` runs them (with no
/// node quarantined yet, so no orphan).
fn pass(snapshot: &Snapshot<'_>, threshold: i32, now: Timestamp) -> Vec<ForceDelete> {
    let mut all = gc_terminated(snapshot, threshold, now);
    all.extend(gc_terminating(snapshot, now));
    all.extend(gc_unscheduled_terminating(snapshot, now));
    all
}

// === tests ===

/// Upstream `TestGCTerminated` (its cases on pods without finalizers).
#[test]
fn gc_terminated_deletes_beyond_the_threshold_evicted_then_oldest_first() {
    type Case = (&'static str, Vec<(&'static str, &'static str, Option<&'static str>)>, i32, Vec<&'static str>);
    let cases: Vec<Case> = vec![
        (
            "delete pod a which is PodFailed and pod b which is PodSucceeded",
            vec![("a", "Failed", None), ("b", "Succeeded", None), ("c", "Failed", None)],
            1,
            vec!["a", "b"],
        ),
        (
            "threshold = 0, disables terminated pod deletion",
            vec![("a", "Failed", None), ("b", "Succeeded", None)],
            0,
            vec![],
        ),
        (
            "threshold = 1, delete pod a which is PodFailed and pod b which is PodSucceeded",
            vec![("a", "Failed", None), ("b", "Succeeded", None), ("c", "Failed", None)],
            1,
            vec!["a", "b"],
        ),
        (
            "threshold = 1, delete pod b which is PodSucceeded",
            vec![("a", "Running", None), ("b", "Succeeded", None), ("c", "Failed", None)],
            1,
            vec!["b"],
        ),
        (
            "threshold = 1, delete pod a which is PodFailed",
            vec![("a", "Failed", None), ("b", "Succeeded", None)],
            1,
            vec!["a"],
        ),
        ("threshold = 5, don't delete pod", vec![("a", "Failed", None), ("b", "Succeeded", None)], 5, vec![]),
        (
            "an evicted pod goes first",
            vec![("a", "Failed", None), ("b", "Succeeded", None), ("c", "Failed", Some(EVICTED_REASON))],
            1,
            vec!["c", "a"],
        ),
        (
            "an evicted pod goes first, a running one is not counted",
            vec![("a", "Running", None), ("b", "Succeeded", None), ("c", "Failed", Some(EVICTED_REASON))],
            1,
            vec!["c"],
        ),
        ("a negative threshold disables it too", vec![("a", "Failed", None), ("b", "Succeeded", None)], -1, vec![]),
    ];
    for (name, spec, threshold, want) in cases {
        let pods: Vec<Value> = spec
            .iter()
            .zip(1..)
            .map(|((n, phase, reason), hour)| {
                let p = pod(n, "node", phase, hour);
                reason.map_or(p.clone(), |r| with_reason(p, r))
            })
            .collect();
        let pods = slim_pods(&pods);
        let nodes = [healthy("node")];
        let snapshot = Snapshot::new(&pods, &nodes);
        let decisions = pass(&snapshot, threshold, ts(0));
        assert_eq!(names(&decisions), set(&want), "{name}");
        assert!(patched(&decisions).is_empty(), "{name}: terminated pods are not patched");
        assert!(decisions.iter().all(|d| d.reason == Reason::Terminated), "{name}");
        // Upstream deletes in sorted order: the evicted pod, then the oldest.
        let order: Vec<&str> = decisions.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(order, want, "{name}");
    }
}

/// Upstream `TestGCTerminated`'s ordering on equal creation times: by name.
#[test]
fn gc_terminated_breaks_ties_by_name() {
    let pods =
        slim_pods(&[pod("b", "node", "Failed", 1), pod("a", "node", "Failed", 1), pod("c", "node", "Failed", 1)]);
    let nodes = [healthy("node")];
    let decisions = gc_terminated(&Snapshot::new(&pods, &nodes), 1, ts(0));
    assert_eq!(decisions.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
}

/// A pod with no phase counts as terminated (upstream `isPodTerminated`)
/// and, not being terminal, is marked Failed first.
#[test]
fn gc_terminated_counts_a_pod_without_phase() {
    let mut no_phase = pod("a", "node", "", 1);
    no_phase["status"] = json!({});
    let pods = slim_pods(&[no_phase, pod("b", "node", "Succeeded", 2)]);
    let nodes = [healthy("node")];
    let decisions = gc_terminated(&Snapshot::new(&pods, &nodes), 1, ts(0));
    assert_eq!(names(&decisions), set(&["a"]));
    assert_eq!(decisions[0].status_patch, Some(json!({"metadata": {"uid": "uid-a"}, "status": {"phase": "Failed"}})));
}

/// One case of upstream `TestGCOrphaned`: the nodes in the cache before
/// and after the delay, and those a live read finds after it (upstream's
/// client nodes before the delay are never read, so they are left out).
struct Orphans {
    name: &'static str,
    cached: Vec<&'static str>,
    delay: i64,
    cached_after: Vec<&'static str>,
    live_after: Vec<&'static str>,
    pods: Vec<Value>,
    /// The names the second pass asks to read live.
    read: Vec<&'static str>,
    deleted: Vec<&'static str>,
    patched: Vec<&'static str>,
}

/// Upstream `TestGCOrphaned` (its cases on pods without finalizers): a
/// first pass at 0 s (nothing deleted), then the node changes, then a pass
/// after the delay.
#[test]
fn gc_orphaned_waits_out_the_quarantine_then_reads_the_node_live() {
    let q = QUARANTINE_TIME.as_secs() as i64;
    let cases = vec![
        Orphans {
            name: "nodes present in lister",
            cached: vec!["existing1", "existing2"],
            delay: 2 * q,
            cached_after: vec!["existing1", "existing2"],
            live_after: vec![],
            pods: vec![
                pod("a", "existing1", "Running", 0),
                pod("b", "existing2", "Failed", 0),
                pod("c", "existing2", "Succeeded", 0),
            ],
            read: vec![],
            deleted: vec![],
            patched: vec![],
        },
        Orphans {
            name: "nodes present in client",
            cached: vec![],
            delay: 2 * q,
            cached_after: vec![],
            live_after: vec!["existing1", "existing2"],
            pods: vec![
                pod("a", "existing1", "Running", 0),
                pod("b", "existing2", "Failed", 0),
                pod("c", "existing2", "Succeeded", 0),
            ],
            read: vec!["existing1", "existing2"],
            deleted: vec![],
            patched: vec![],
        },
        Orphans {
            name: "no nodes",
            cached: vec![],
            delay: 2 * q,
            cached_after: vec![],
            live_after: vec![],
            pods: vec![pod("a", "deleted", "Failed", 0), pod("b", "deleted", "Succeeded", 0)],
            read: vec!["deleted"],
            deleted: vec!["a", "b"],
            patched: vec![],
        },
        Orphans {
            name: "no nodes, one running pod",
            cached: vec![],
            delay: 2 * q,
            cached_after: vec![],
            live_after: vec![],
            pods: vec![
                pod("a", "deleted", "Failed", 0),
                pod("b", "deleted", "Succeeded", 0),
                pod("c", "deleted", "Running", 0),
            ],
            read: vec!["deleted"],
            deleted: vec!["a", "b", "c"],
            patched: vec!["c"],
        },
        Orphans {
            name: "quarantine not finished",
            cached: vec![],
            delay: q / 2,
            cached_after: vec![],
            live_after: vec![],
            pods: vec![pod("a", "deleted", "Failed", 0)],
            read: vec![],
            deleted: vec![],
            patched: vec![],
        },
        Orphans {
            name: "wrong nodes",
            cached: vec!["existing"],
            delay: 2 * q,
            cached_after: vec!["existing"],
            live_after: vec![],
            pods: vec![pod("a", "deleted", "Running", 0)],
            read: vec!["deleted"],
            deleted: vec!["a"],
            patched: vec!["a"],
        },
        Orphans {
            name: "some nodes missing",
            cached: vec!["existing"],
            delay: 2 * q,
            cached_after: vec!["existing"],
            live_after: vec![],
            pods: vec![
                pod("a", "deleted", "Failed", 0),
                pod("b", "existing", "Failed", 0),
                pod("c", "deleted", "Succeeded", 0),
                pod("d", "deleted", "Running", 0),
            ],
            read: vec!["deleted"],
            deleted: vec!["a", "c", "d"],
            patched: vec!["d"],
        },
        Orphans {
            name: "node added to client after quarantine",
            cached: vec![],
            delay: 2 * q,
            cached_after: vec![],
            live_after: vec!["node"],
            pods: vec![pod("a", "node", "Running", 0)],
            read: vec!["node"],
            deleted: vec![],
            patched: vec![],
        },
        Orphans {
            name: "node added to informer after quarantine",
            cached: vec![],
            delay: 2 * q,
            cached_after: vec!["node"],
            live_after: vec![],
            pods: vec![pod("a", "node", "Failed", 0)],
            read: vec![],
            deleted: vec![],
            patched: vec![],
        },
        Orphans {
            // Upstream: "It shouldn't happen that client will be lagging
            // behind informer. This test case is more a sanity check."
            name: "node deleted from client after quarantine",
            cached: vec![],
            delay: 2 * q,
            cached_after: vec![],
            live_after: vec![],
            pods: vec![pod("a", "node", "Failed", 0)],
            read: vec!["node"],
            deleted: vec!["a"],
            patched: vec![],
        },
        Orphans {
            name: "node deleted from informer after quarantine",
            cached: vec!["node"],
            delay: 2 * q,
            cached_after: vec![],
            live_after: vec![],
            pods: vec![pod("a", "node", "Succeeded", 0)],
            read: vec![],
            deleted: vec![],
            patched: vec![],
        },
    ];
    for case in cases {
        let name = case.name;
        let pods = slim_pods(&case.pods);
        let mut quarantine = Quarantine::default();
        let nodes: Vec<Node> = case.cached.iter().map(|n| healthy(n)).collect();
        let snapshot = Snapshot::new(&pods, &nodes);
        let first = quarantine.observe(&snapshot, ts(0));
        assert!(first.is_empty(), "{name}: nothing is read before the quarantine ends: {first:?}");
        let later = ts(case.delay);
        let nodes: Vec<Node> = case.cached_after.iter().map(|n| healthy(n)).collect();
        let snapshot = Snapshot::new(&pods, &nodes);
        let read = quarantine.observe(&snapshot, later);
        assert_eq!(read, case.read, "{name}: nodes read live");
        let gone: BTreeSet<String> = read.into_iter().filter(|n| !case.live_after.contains(&n.as_str())).collect();
        let decisions = gc_orphaned(&snapshot, &gone, later);
        assert_eq!(names(&decisions), set(&case.deleted), "{name}: deleted");
        assert_eq!(patched(&decisions), set(&case.patched), "{name}: patched");
        assert!(decisions.iter().all(|d| d.reason == Reason::Orphaned), "{name}");
    }
}

/// A node read live after its quarantine is quarantined again by the same
/// pass: a failed read, or a node that turns out to exist, is looked at
/// again a quarantine later, not at every pass.
#[test]
fn gc_orphaned_reads_a_node_again_only_after_another_quarantine() {
    let q = QUARANTINE_TIME.as_secs() as i64;
    let pods = slim_pods(&[pod("a", "lost", "Running", 0)]);
    let snapshot = Snapshot::new(&pods, &[]);
    let mut quarantine = Quarantine::default();
    assert!(quarantine.observe(&snapshot, ts(0)).is_empty());
    assert!(quarantine.observe(&snapshot, ts(20)).is_empty(), "a name waiting keeps its earlier time");
    assert_eq!(quarantine.observe(&snapshot, ts(q)), ["lost"]);
    assert!(quarantine.observe(&snapshot, ts(q + 20)).is_empty());
    assert_eq!(quarantine.observe(&snapshot, ts(2 * q)), ["lost"]);
    // Its pods gone, the name still comes out once more, then never.
    let empty = Snapshot::default();
    assert_eq!(quarantine.observe(&empty, ts(3 * q)), ["lost"]);
    assert!(quarantine.observe(&empty, ts(4 * q)).is_empty());
}

/// Upstream `TestGCUnscheduledTerminating` (its cases on pods without
/// finalizers).
#[test]
fn gc_unscheduled_terminating_deletes_terminating_pods_bound_to_no_node() {
    type Case = (&'static str, Vec<Value>, Vec<&'static str>, Vec<&'static str>);
    let cases: Vec<Case> = vec![
        (
            "Unscheduled pod in any phase must be deleted",
            vec![
                deleting(pod("a", "", "Failed", 1)),
                deleting(pod("b", "", "Succeeded", 2)),
                deleting(pod("c", "", "Running", 3)),
            ],
            vec!["a", "b", "c"],
            vec!["c"],
        ),
        (
            "Scheduled pod in any phase must not be deleted",
            vec![pod("a", "", "Failed", 1), pod("b", "node", "Succeeded", 2), deleting(pod("c", "node", "Running", 3))],
            vec![],
            vec![],
        ),
    ];
    for (name, pods, deleted, patched_names) in cases {
        let pods = slim_pods(&pods);
        let snapshot = Snapshot::new(&pods, &[]);
        let decisions = gc_unscheduled_terminating(&snapshot, ts(0));
        assert_eq!(names(&decisions), set(&deleted), "{name}");
        assert_eq!(patched(&decisions), set(&patched_names), "{name}");
        assert!(decisions.iter().all(|d| d.reason == Reason::Unscheduled), "{name}");
    }
}

/// Upstream `TestGCTerminating` (its cases on pods without finalizers).
#[test]
fn gc_terminating_deletes_terminating_pods_of_out_of_service_nodes() {
    let oos = |effect: &str| json!([{"key": TAINT_OUT_OF_SERVICE, "effect": effect}]);
    type Case = (&'static str, Vec<Node>, Vec<Value>, Vec<&'static str>, Vec<&'static str>);
    let cases: Vec<Case> = vec![
        (
            "pods have deletion timestamp set and the corresponding nodes are not ready",
            vec![node("worker-0", "False", json!([])), node("worker-1", "False", json!([]))],
            vec![deleting(pod("a", "worker-0", "", 1)), deleting(pod("b", "worker-1", "", 2))],
            vec![],
            vec![],
        ),
        (
            "some pods have deletion timestamp and/or phase set and some of the corresponding nodes have an \
             outofservice taint that are not ready",
            vec![
                node("worker-0", "False", oos("NoExecute")),
                node("worker-1", "False", json!([])),
                node("worker-2", "True", json!([])),
                node("worker-3", "False", oos("NoSchedule")),
                node("worker-4", "False", oos("PreferNoSchedule")),
                node(
                    "worker-5",
                    "False",
                    json!([{"key": TAINT_OUT_OF_SERVICE, "value": "any-value", "effect": "NoExecute"}]),
                ),
            ],
            (0..6)
                .flat_map(|i| {
                    let worker = format!("worker-{i}");
                    // Upstream puts a5 on worker-3.
                    let a_node = if i == 4 { "worker-3".to_owned() } else { worker.clone() };
                    let n = i + 1;
                    vec![
                        pod(&format!("a{n}"), &a_node, "", 1),
                        deleting(pod(&format!("b{n}"), &worker, "", 2)),
                        pod(&format!("c{n}"), &worker, "Pending", 3),
                        pod(&format!("d{n}"), &worker, "Running", 4),
                        pod(&format!("e{n}"), &worker, "Unknown", 5),
                    ]
                })
                .collect(),
            vec!["b1", "b4", "b5", "b6"],
            vec!["b1", "b4", "b5", "b6"],
        ),
        (
            "pods deleted from node tainted out-of-service",
            vec![node("worker", "False", oos("NoExecute"))],
            vec![
                deleting(pod("a", "worker", "Running", 1)),
                deleting(pod("b", "worker", "Failed", 2)),
                deleting(pod("c", "worker", "Succeeded", 3)),
            ],
            vec!["a", "b", "c"],
            vec!["a"],
        ),
    ];
    for (name, nodes, pods, deleted, patched_names) in cases {
        let pods = slim_pods(&pods);
        let snapshot = Snapshot::new(&pods, &nodes);
        // Upstream runs the whole gc with threshold -1.
        let decisions = pass(&snapshot, -1, ts(0));
        assert_eq!(names(&decisions), set(&deleted), "{name}");
        assert_eq!(patched(&decisions), set(&patched_names), "{name}");
        assert!(decisions.iter().all(|d| d.reason == Reason::OutOfService), "{name}");
    }
}

/// Upstream `TestGCInspectingPatchedPodBeforeDeletion`: an orphaned running
/// pod gets phase Failed and the `DisruptionTarget` condition (beside its
/// Ready condition, which the patch leaves alone) before its deletion.
#[test]
fn an_orphaned_pod_is_marked_failed_with_the_disruption_target_condition() {
    let mut running = pod("testPod", "deletedNode", "Running", 0);
    running["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
    let pods = slim_pods(&[running]);
    let snapshot = Snapshot::new(&pods, &[]);
    let mut quarantine = Quarantine::default();
    quarantine.observe(&snapshot, ts(0));
    let now = ts(QUARANTINE_TIME.as_secs() as i64);
    let gone: BTreeSet<String> = quarantine.observe(&snapshot, now).into_iter().collect();
    let decisions = gc_orphaned(&snapshot, &gone, now);
    assert_eq!(decisions.len(), 1);
    let d = &decisions[0];
    assert_eq!((d.namespace.as_str(), d.name.as_str(), d.uid.as_str()), ("default", "testPod", "uid-testPod"));
    assert_eq!(
        d.status_patch,
        Some(json!({
            "metadata": {"uid": "uid-testPod"},
            "status": {"phase": "Failed", "conditions": [{
                "type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
                "message": "PodGC: node no longer exists", "lastTransitionTime": now.to_string(),
            }]},
        }))
    );
}

/// Upstream `UpdatePodCondition`: a pod that already has the condition with
/// the same status keeps its transition time.
#[test]
fn an_existing_disruption_target_keeps_its_transition_time() {
    let mut running = pod("p", "gone", "Running", 0);
    let since = ts(5).to_string();
    running["status"]["conditions"] =
        json!([{"type": "DisruptionTarget", "status": "True", "lastTransitionTime": since}]);
    let pods = slim_pods(&[running]);
    let snapshot = Snapshot::new(&pods, &[]);
    let decisions = gc_orphaned(&snapshot, &BTreeSet::from(["gone".to_owned()]), ts(100));
    let patch = decisions[0].status_patch.as_ref().expect("a patch");
    assert_eq!(patch["status"]["conditions"][0]["lastTransitionTime"], json!(since));
}

#[test]
fn reasons_are_upstreams_metric_labels() {
    let labels: Vec<&str> =
        [Reason::Terminated, Reason::OutOfService, Reason::Orphaned, Reason::Unscheduled].map(Reason::label).to_vec();
    assert_eq!(labels, ["terminated", "out-of-service", "orphaned", "unscheduled"]);
}
