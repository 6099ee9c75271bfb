//! Upstream's `daemon_controller_test.go` and `update_test.go` cases, by
//! their names (snake_cased), as far as they concern the decisions: each
//! builds the cluster a test builds, syncs, and checks what upstream's fake
//! pod control and event recorder would have seen (creates, deletes,
//! events), the status written, and for updates the pods after each
//! applied sync. The handler, queue and informer tests are the driver's.

use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Toleration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

use super::Action;
use super::testing::*;
use super::*;
use crate::testing::{labels, ts};

// === utils ===

/// Upstream `expectSyncDaemonSets`: the creates, deletes and events of one
/// sync.
#[track_caller]
fn expect_sync(w: &World, creates: usize, deletes: usize, events: usize) -> Outcome {
    let out = w.sync();
    assert_eq!(counts(&out.plan), (creates, deletes, events), "{:#?}", crate::testing::describe_plan(&out.plan));
    out
}

fn tainted(name: &str, taints: serde_json::Value) -> kcm_objects::Node {
    node_from(json!({"metadata": {"name": name}, "spec": {"taints": taints}}))
}

fn no_schedule_tolerations() -> Vec<Toleration> {
    vec![Toleration {
        key: Some("dedicated".into()),
        value: Some("user1".into()),
        effect: Some("NoSchedule".into()),
        ..Default::default()
    }]
}

fn set_tolerations(ds: &mut DaemonSet, tolerations: Vec<Toleration>) {
    ds.spec.template.spec.get_or_insert_default().tolerations = Some(tolerations);
}

fn node_selector(ds: &mut DaemonSet, pairs: &[(&str, &str)]) {
    ds.spec.template.spec.get_or_insert_default().node_selector = Some(labels(pairs));
}

fn node_name(ds: &mut DaemonSet, name: &str) {
    ds.spec.template.spec.get_or_insert_default().node_name = Some(name.into());
}

// === daemon_controller_test.go ===

/// DaemonSets without node selectors should launch pods on every node.
#[test]
fn simple_daemon_set_launches_pods() {
    for ds in strategies("foo") {
        let mut w = World::new(ds);
        w.add_nodes(0, 5, &[]);
        expect_sync(&w, 5, 0, 0);
    }
}

/// Every pod is bound to its node by node affinity (`metadata.name In`),
/// not by `nodeName`, and carries the DaemonSet's controller reference,
/// hash label and daemon tolerations.
#[test]
fn simple_daemon_set_schedule_daemon_set_pods_launches_pods() {
    for ds in strategies("foo") {
        let mut w = World::new(ds);
        w.add_nodes(0, 5, &[]);
        let out = expect_sync(&w, 5, 0, 0);
        let mut nodes = created_on(&out.plan);
        nodes.sort();
        assert_eq!(nodes, ["node-0", "node-1", "node-2", "node-3", "node-4"]);
        for action in out.plan.actions() {
            let Action::CreatePod { pod, .. } = action else { continue };
            let spec = pod.spec.as_ref().unwrap();
            assert_eq!(spec.node_name, None);
            let terms = &spec.affinity.as_ref().unwrap().node_affinity.as_ref().unwrap();
            let terms =
                &terms.required_during_scheduling_ignored_during_execution.as_ref().unwrap().node_selector_terms;
            assert_eq!(terms.len(), 1);
            let owner = &pod.metadata.owner_references.as_ref().unwrap()[0];
            assert_eq!(
                (owner.api_version.as_str(), owner.kind.as_str(), owner.controller),
                ("apps/v1", "DaemonSet", Some(true))
            );
            let labels = pod.metadata.labels.as_ref().unwrap();
            assert_eq!(labels.get(CONTROLLER_REVISION_HASH_LABEL), Some(&hash_of(&w.ds)));
            assert_eq!(spec.tolerations.as_ref().unwrap().len(), 6);
            assert_eq!(pod.metadata.generate_name.as_deref(), Some("foo-"));
        }
    }
}

/// Simulate a cluster with 100 nodes and a quota of 10 pods: creations run
/// in slow-start steps, so a failing step stops the rest (the executor's
/// side); the plan holds 100 creations in steps 1, 2, 4, ... and the
/// status counts what the cache shows.
#[test]
fn simple_daemon_set_pod_create_errors() {
    for ds in strategies("foo") {
        let mut w = World::new(ds);
        w.add_nodes(0, 100, &[]);
        let out = expect_sync(&w, 100, 0, 0);
        let creates = |s: &crate::plan::Step<super::Write>| {
            s.actions.iter().filter(|a| matches!(a, Action::CreatePod { .. })).count()
        };
        let sizes: Vec<usize> = out.plan.steps.iter().map(creates).filter(|n| *n > 0).collect();
        assert_eq!(sizes, [1, 2, 4, 8, 16, 32, 37]);
        // With a quota of 10 the executor stops after the step of 8 (1 + 2 +
        // 4 + 3 created): the expectations drop what was never sent.
        let step_of_8 = out.plan.steps.iter().position(|s| creates(s) == 8).unwrap();
        assert_eq!(out.plan.steps[step_of_8 + 1..].iter().map(creates).sum::<usize>(), 100 - 15);
        let status = status(&out.plan).unwrap();
        assert_eq!((status.desired_number_scheduled, status.current_number_scheduled), (100, 0));
    }
}

/// Upstream `TestSimpleDaemonSetUpdatesStatusAfterLaunchingPods`: once the
/// pods are in the cache the status counts them.
#[test]
fn simple_daemon_set_updates_status_after_launching_pods() {
    for ds in strategies("foo") {
        let mut w = World::new(ds);
        w.add_nodes(0, 5, &[]);
        w.sync_and_apply();
        let out = expect_sync(&w, 0, 0, 0);
        let status = status(&out.plan).unwrap_or_else(|| w.ds.status.clone().unwrap());
        assert_eq!(status.current_number_scheduled, 5);
        assert_eq!(status.updated_number_scheduled, Some(5));
    }
}

/// Upstream `TestSimpleDaemonSetUpdatesStatusError`: after a failed create
/// the status is still written ([`after_manage_error`]).
#[test]
fn simple_daemon_set_updates_status_error() {
    for ds in strategies("foo") {
        let mut w = World::new(ds);
        w.add_nodes(0, 1, &[]);
        expect_sync(&w, 1, 0, 0);
        let plan = after_manage_error(&w.snapshot());
        let written = status(&plan).unwrap();
        assert_eq!((written.desired_number_scheduled, written.observed_generation), (1, Some(1)));
    }
}

/// DaemonSets should do nothing if there aren't any nodes.
#[test]
fn no_nodes_does_nothing() {
    for ds in strategies("foo") {
        expect_sync(&World::new(ds), 0, 0, 0);
    }
}

/// A single node gets its pod whatever its conditions say (upstream
/// `TestOneNodeDaemonLaunchesPod`, `TestNotReadyNodeDaemonDoesLaunchPod`,
/// `TestNetworkUnavailableNodeDaemonLaunchesPod`): only taints count.
#[test]
fn one_node_daemon_launches_pod() {
    for condition in ["Ready:True", "Ready:False", "NetworkUnavailable:True"] {
        let (type_, status) = condition.split_once(':').unwrap();
        for ds in strategies("foo") {
            let mut w = World::new(ds);
            w.add_node(node_from(json!({"metadata": {"name": "only-node"},
                "status": {"conditions": [{"type": type_, "status": status}]}})));
            expect_sync(&w, 1, 0, 0);
        }
    }
}

/// Resources and host ports are the scheduler's concern: a node named by
/// the template gets its pod whatever else runs there and whatever it has
/// left, and keeps the DaemonSet's own (upstream
/// `TestInsufficientCapacityNodeDaemonDoesNotUnscheduleRunningPod`,
/// `TestPortConflictWithSameDaemonPodDoesNotDeletePod`,
/// `TestNoPortConflictNodeDaemonLaunchesPod`).
#[test]
fn other_pods_and_resources_do_not_matter() {
    for (name, own_pod, creates) in [
        ("InsufficientCapacityNodeDaemonDoesNotUnscheduleRunningPod", false, 1),
        ("PortConflictWithSameDaemonPodDoesNotDeletePod", true, 0),
        ("NoPortConflictNodeDaemonLaunchesPod", false, 1),
    ] {
        for mut ds in strategies("foo") {
            node_name(&mut ds, "the-node");
            let mut w = World::new(ds.clone());
            w.add_node(node_from(json!({"metadata": {"name": "the-node"},
                "status": {"allocatable": {"cpu": "200m", "memory": "100M"}}})));
            let pod = if own_pod {
                new_pod("foo-1", "the-node", SIMPLE_DAEMON_SET_LABEL, Some(&ds))
            } else {
                new_pod("other", "the-node", &[], None)
            };
            w.add_pod(pod);
            assert_eq!(counts(&w.sync().plan), (creates, 0, 0), "{name}");
        }
    }
}

/// Upstream `TestInsufficientCapacityNodeSufficientCapacityWithNodeLabelDaemonLaunchPod`.
#[test]
fn insufficient_capacity_node_sufficient_capacity_with_node_label_daemon_launch_pod() {
    let mut ds = new_daemon_set("foo");
    node_selector(&mut ds, SIMPLE_NODE_LABEL);
    let mut w = World::new(ds);
    w.add_node(new_node("not-enough-resource", &[]));
    w.add_node(new_node("enough-resource", SIMPLE_NODE_LABEL));
    let out = expect_sync(&w, 1, 0, 0);
    assert_eq!(created_on(&out.plan), ["enough-resource"]);
}

/// DaemonSets take no action while being deleted, not even a status write.
#[test]
fn dont_do_anything_if_being_deleted() {
    for mut ds in strategies("foo") {
        ds.metadata.deletion_timestamp = Some(Time(ts(0)));
        let mut w = World::new(ds);
        w.add_nodes(0, 1, &[]);
        assert_eq!(w.sync(), Outcome::default());
    }
}

/// The cache says the DaemonSet is not being deleted, the API server says
/// it is: adopting the matching orphan needs the live re-check, which comes
/// before every other write, so its failure blocks them all.
#[test]
fn dont_do_anything_if_being_deleted_race() {
    for ds in strategies("foo") {
        let mut w = World::new(ds);
        w.add_nodes(0, 5, &[]);
        w.add_pod(new_pod("pod1", "node-0", SIMPLE_DAEMON_SET_LABEL, None));
        let out = w.sync();
        let first_write = out.plan.actions().position(|a| !matches!(a, Action::PatchPodOwnerRefs { .. }));
        assert!(matches!(out.plan.actions().nth(first_write.unwrap()), Some(Action::RecheckOwner { .. })));
        assert_eq!(counts(&out.plan), (4, 0, 0), "node-0 has the orphan once adopted");
    }
}

/// A DaemonSet selecting every pod gets the Warning `SelectingAll` and
/// nothing else (upstream
/// `TestPodIsNotDeletedByDaemonsetWithEmptyLabelSelector`).
#[test]
fn pod_is_not_deleted_by_daemonset_with_empty_label_selector() {
    for mut ds in strategies("foo") {
        ds.spec.selector = LabelSelector::default();
        node_selector(&mut ds, &[("foo", "bar")]);
        let mut w = World::new(ds);
        w.add_node(new_node("node1", &[]));
        w.add_pod(new_pod("bang", "node1", &[("bang", "boom")], None));
        let out = expect_sync(&w, 0, 0, 1);
        let Some(Action::Event(e)) = out.plan.actions().next() else { panic!() };
        assert_eq!((e.reason.as_str(), e.type_), (SELECTING_ALL, crate::plan::EventType::Warning));
        assert_eq!(e.message, "This daemon set is selecting all pods. A non-empty selector is required.");
    }
}

/// Controller should not create pods on nodes which have daemon pods, and
/// should remove excess pods from nodes that have extra pods; pods it owns
/// that no longer match are released; with surge too (upstream
/// `TestDealsWithExistingPods`, `TestSurgeDealsWithExistingPods`).
#[test]
fn deals_with_existing_pods() {
    for ds in strategies("foo").into_iter().chain([surge("foo", 1)]) {
        let mut w = World::new(ds.clone());
        w.add_nodes(0, 5, &[]);
        w.add_pod_table(
            &ds,
            &[
                ("node-1", SIMPLE_DAEMON_SET_LABEL, 1),
                ("node-2", SIMPLE_DAEMON_SET_LABEL, 2),
                ("node-3", SIMPLE_DAEMON_SET_LABEL, 5),
                ("node-4", SIMPLE_DAEMON_SET_LABEL2, 2),
            ],
        );
        let out = expect_sync(&w, 2, 5, 0);
        let released = out.plan.actions().filter(|a| matches!(a, Action::PatchPodOwnerRefs { .. })).count();
        assert_eq!(released, 2);
        assert_eq!(
            deleted(&out.plan),
            ["node-2-3", "node-3-5", "node-3-6", "node-3-7", "node-3-8"],
            "all but the oldest (by name)"
        );
    }
}

/// Daemons with a node selector, over five plain nodes and five labelled
/// `SIMPLE_NODE_LABEL` (upstream `TestSelectorDaemonLaunchesPods`,
/// `TestSelectorDaemonDeletesUnselectedPods`,
/// `TestSelectorDaemonDealsWithExistingPods`,
/// `TestBadSelectorDaemonDoesNothing`): pods on matching nodes only, one
/// each; the DaemonSet's pods it no longer selects are released.
#[test]
fn selector_daemon_table() {
    type Labels = &'static [(&'static str, &'static str)];
    const L1: &[(&str, &str)] = SIMPLE_DAEMON_SET_LABEL;
    const L2: &[(&str, &str)] = SIMPLE_DAEMON_SET_LABEL2;
    let cases: [(&str, Labels, PodRows<'static>, (usize, usize)); 4] = [
        ("SelectorDaemonLaunchesPods", SIMPLE_NODE_LABEL, &[], (5, 0)),
        (
            "SelectorDaemonDeletesUnselectedPods",
            SIMPLE_NODE_LABEL,
            &[("node-0", L2, 2), ("node-1", L1, 3), ("node-1", L2, 1), ("node-4", L1, 1)],
            (5, 4),
        ),
        (
            "SelectorDaemonDealsWithExistingPods",
            SIMPLE_NODE_LABEL,
            &[
                ("node-0", L1, 1),
                ("node-1", L1, 3),
                ("node-1", L2, 2),
                ("node-2", L1, 4),
                ("node-6", L1, 13),
                ("node-7", L2, 4),
                ("node-9", L1, 1),
                ("node-9", L2, 1),
            ],
            (3, 20),
        ),
        ("BadSelectorDaemonDoesNothing", SIMPLE_NODE_LABEL2, &[], (0, 0)),
    ];
    for (name, selector, rows, (creates, deletes)) in cases {
        for mut ds in strategies("foo") {
            node_selector(&mut ds, selector);
            let mut w = World::new(ds.clone());
            w.add_nodes(0, 5, &[]);
            w.add_nodes(5, 5, SIMPLE_NODE_LABEL);
            w.add_pod_table(&ds, rows);
            assert_eq!(counts(&w.sync().plan), (creates, deletes, 0), "{name}");
        }
    }
}

/// DaemonSet with node name should launch pod on node with corresponding
/// name; with a node name that does not exist, nowhere.
#[test]
fn name_daemon_set_launches_pods_and_bad_name_daemon_set_does_nothing() {
    for (name, creates) in [("node-0", 1), ("node-10", 0)] {
        for mut ds in strategies("foo") {
            node_name(&mut ds, name);
            let mut w = World::new(ds);
            w.add_nodes(0, 5, &[]);
            expect_sync(&w, creates, 0, 0);
        }
    }
}

/// Upstream `TestNameAndSelectorDaemonSetLaunchesPods` and
/// `TestInconsistentNameSelectorDaemonSetDoesNothing`.
#[test]
fn name_and_selector_daemon_set_launches_pods() {
    for (name, creates) in [("node-6", 1), ("node-0", 0)] {
        for mut ds in strategies("foo") {
            node_selector(&mut ds, SIMPLE_NODE_LABEL);
            node_name(&mut ds, name);
            let mut w = World::new(ds);
            w.add_nodes(0, 4, &[]);
            w.add_nodes(4, 3, SIMPLE_NODE_LABEL);
            expect_sync(&w, creates, 0, 0);
        }
    }
}

/// Daemon with node affinity should launch pods on nodes matching affinity.
#[test]
fn node_affinity_daemon_launches_pods() {
    for mut ds in strategies("foo") {
        ds.spec.template.spec.get_or_insert_default().affinity = Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: vec![NodeSelectorTerm {
                        match_expressions: Some(vec![NodeSelectorRequirement {
                            key: "color".into(),
                            operator: "In".into(),
                            values: Some(vec!["blue".into()]),
                        }]),
                        match_fields: None,
                    }],
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        let mut w = World::new(ds);
        w.add_nodes(0, 4, &[]);
        w.add_nodes(4, 3, SIMPLE_NODE_LABEL);
        expect_sync(&w, 3, 0, 0);
    }
}

#[test]
fn number_ready_status() {
    for ds in strategies("foo") {
        let mut w = World::new(ds.clone());
        w.add_nodes(0, 2, SIMPLE_NODE_LABEL);
        w.add_pods("node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds), 1);
        w.add_pods("node-1", SIMPLE_DAEMON_SET_LABEL, Some(&ds), 1);
        w.sync_and_apply();
        assert_eq!(w.ds.status.as_ref().unwrap().number_ready, 0);
        w.mark_pods_ready(ts(0));
        let out = expect_sync(&w, 0, 0, 0);
        assert_eq!(status(&out.plan).unwrap().number_ready, 2);
    }
}

#[test]
fn observed_generation() {
    for mut ds in strategies("foo") {
        ds.metadata.generation = Some(1);
        let mut w = World::new(ds.clone());
        w.add_nodes(0, 1, SIMPLE_NODE_LABEL);
        w.add_pods("node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds), 1);
        let out = expect_sync(&w, 0, 0, 0);
        assert_eq!(status(&out.plan).unwrap().observed_generation, Some(1));
    }
}

/// DaemonSet controller should kill all failed pods and create at most 1
/// pod on every node.
#[test]
fn daemon_kill_failed_pods() {
    let cases = [
        (0, 1, 0, 0, 0, "normal (do nothing)"),
        (0, 0, 1, 0, 0, "no pods (create 1)"),
        (1, 0, 0, 1, 1, "1 failed pod (kill 1), 0 normal pod (create 0; will create in the next sync)"),
        (1, 3, 0, 3, 1, "1 failed pod (kill 1), 3 normal pods (kill 2)"),
    ];
    for (failed, normal, creates, deletes, events, name) in cases {
        for ds in strategies("foo") {
            let mut w = World::new(ds.clone());
            w.add_nodes(0, 1, &[]);
            w.add_failed_pods("node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds), failed);
            w.add_pods("node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds), normal);
            let out = w.sync();
            assert_eq!(counts(&out.plan), (creates, deletes, events), "{name}");
        }
    }
}

/// DaemonSet controller needs to backoff when killing failed pods to avoid
/// hot looping and fighting with kubelet.
#[test]
fn daemon_kill_failed_pods_backoff() {
    for ds in strategies("foo") {
        let mut w = World::new(ds.clone());
        w.add_nodes(0, 1, &[]);
        w.add_pod(phase(new_pod("node-0-1", "node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds)), "Failed"));
        let key = failed_pods_backoff_key(&ds, "node-0");

        // The first sync deletes the pod and steps the backoff.
        let out = expect_sync(&w, 0, 1, 1);
        let Some(Action::Event(e)) = out.plan.actions().find(|a| matches!(a, Action::Event(_))) else { panic!() };
        assert_eq!(e.reason, FAILED_DAEMON_POD);
        assert_eq!(e.message, "Found failed daemon pod default/node-0-1 on node node-0, will try to kill it");
        assert_eq!(out.backoff_next, std::slice::from_ref(&key));
        w.backoff.next(&key, w.now);
        let delay = w.backoff.get(&key);
        assert!(delay > std::time::Duration::ZERO);

        // An immediate second sync is held back and requeues after the delay.
        let out = expect_sync(&w, 0, 0, 0);
        assert_eq!(out.plan.requeue_after, Some(delay));
        assert!(out.backoff_next.is_empty());

        // Just before the end of the delay it still is; at the end it is not.
        let delay_ns = i64::try_from(delay.as_nanos()).unwrap();
        w.now += jiff::SignedDuration::from_nanos(delay_ns - 1);
        assert!(w.backoff.in_backoff_since_update(&key, w.now));
        w.now += jiff::SignedDuration::from_nanos(1);
        assert!(!w.backoff.in_backoff_since_update(&key, w.now));
        expect_sync(&w, 0, 1, 1);
    }
}

/// A running pod that does not tolerate a new taint stays for
/// `NoSchedule` and goes for `NoExecute` (upstream
/// `TestNoScheduleTaintedDoesntEvicitRunningIntolerantPod`,
/// `TestNoExecuteTaintedDoesEvicitRunningIntolerantPod`).
#[test]
fn tainted_node_evicts_running_intolerant_pod_for_no_execute_only() {
    for (effect, deletes) in [("NoSchedule", 0), ("NoExecute", 1)] {
        for ds in strategies("intolerant") {
            let mut w = World::new(ds.clone());
            w.add_node(tainted("tainted", json!([{"key": "dedicated", "value": "user1", "effect": effect}])));
            w.add_pod(new_pod("running", "tainted", SIMPLE_DAEMON_SET_LABEL, Some(&ds)));
            expect_sync(&w, 0, deletes, 0);
        }
    }
}

/// A tainted node gets no pod that does not tolerate the taint, and one
/// that does (upstream `TestTaintedNodeDaemonDoesNotLaunchIntolerantPod`,
/// `TestTaintedNodeDaemonLaunchesToleratePod`,
/// `TestNodeDaemonLaunchesToleratePod`).
#[test]
fn tainted_node_daemon_launches_tolerate_pod_only() {
    let taint = json!([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}]);
    for (tolerate, node, creates) in [
        (false, tainted("tainted", taint.clone()), 0),
        (true, tainted("tainted", taint), 1),
        (true, new_node("node-0", &[]), 1),
    ] {
        for mut ds in strategies("tolerate") {
            if tolerate {
                set_tolerations(&mut ds, no_schedule_tolerations());
            }
            let mut w = World::new(ds);
            w.add_node(node.clone());
            expect_sync(&w, creates, 0, 0);
        }
    }
}

/// DaemonSet should launch a pod on a not ready node with taint
/// notReady:NoExecute, and on an unreachable one (upstream
/// `TestNotReadyNodeDaemonLaunchesPod`, `TestUnreachableNodeDaemonLaunchesPod`).
#[test]
fn not_ready_and_unreachable_node_daemon_launches_pod() {
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        for ds in strategies("simple") {
            let mut w = World::new(ds);
            w.add_node(tainted(
                "tainted",
                json!([{"key": key, "effect": "NoExecute", "timeAdded": "2026-12-01T00:00:00Z"}]),
            ));
            expect_sync(&w, 1, 0, 0);
        }
    }
}

/// A pod being deleted holds its node: no replacement yet (upstream
/// `TestDaemonSetRespectsTermination`).
#[test]
fn daemon_set_respects_termination() {
    for ds in strategies("foo") {
        let mut w = World::new(ds.clone());
        w.add_nodes(0, 1, SIMPLE_NODE_LABEL);
        let mut pod = new_pod("node-0-1", "node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds));
        pod.metadata.deletion_timestamp = Some(Time(ts(0)));
        w.add_pod(pod);
        expect_sync(&w, 0, 0, 0);
    }
}

/// DaemonSet should launch a pod even when the node has MemoryPressure,
/// DiskPressure and PIDPressure taints.
#[test]
fn taint_pressure_node_daemon_launches_pod() {
    for mut ds in strategies("critical") {
        ds.metadata.namespace = Some("kube-system".into());
        let mut w = World::new(ds);
        w.add_node(tainted(
            "resources-pressure",
            json!([{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/pid-pressure", "effect": "NoSchedule"}]),
        ));
        expect_sync(&w, 1, 0, 0);
    }
}

#[test]
fn node_should_run_daemon_pod() {
    let affinity = |value: &str| Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_expressions: Some(vec![NodeSelectorRequirement {
                        key: "type".into(),
                        operator: "In".into(),
                        values: Some(vec![value.into()]),
                    }]),
                    match_fields: None,
                }],
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    type Edit = Box<dyn Fn(&mut DaemonSet)>;
    let cases: Vec<(&str, Edit, bool, (bool, bool))> = vec![
        ("ShouldRunDaemonPod", Box::new(|_| {}), false, (true, true)),
        ("ErrPodNotMatchHostName", Box::new(|ds| node_name(ds, "other-node")), false, (false, false)),
        ("ErrNodeSelectorNotMatch", Box::new(|ds| node_selector(ds, SIMPLE_DAEMON_SET_LABEL2)), false, (false, false)),
        (
            "ShouldRunDaemonPod (selector)",
            Box::new(|ds| node_selector(ds, SIMPLE_DAEMON_SET_LABEL)),
            false,
            (true, true),
        ),
        (
            "ErrPodAffinityNotMatch",
            Box::new(move |ds| ds.spec.template.spec.get_or_insert_default().affinity = Some(affinity("test"))),
            false,
            (false, false),
        ),
        (
            "ShouldRunDaemonPod (affinity)",
            Box::new(move |ds| ds.spec.template.spec.get_or_insert_default().affinity = Some(affinity("production"))),
            false,
            (true, true),
        ),
        ("ShouldRunDaemonPodOnUnschedulableNode", Box::new(|_| {}), true, (true, true)),
    ];
    for (name, edit, unschedulable, want) in cases {
        for mut ds in strategies("foo") {
            edit(&mut ds);
            let node = node_from(json!({"metadata": {"name": "test-node", "labels": labels(SIMPLE_DAEMON_SET_LABEL)},
                "spec": {"unschedulable": unschedulable}}));
            assert_eq!(super::node_should_run_daemon_pod(&node, &ds), want, "{name}");
        }
    }
}

/// Pending pods bound by affinity to a node that no longer exists are
/// deleted; a scheduled pod on a missing node is the pod GC's (upstream
/// `TestDeleteUnscheduledPodForNotExistingNode`).
#[test]
fn delete_unscheduled_pod_for_not_existing_node() {
    for ds in strategies("foo") {
        let mut w = World::new(ds.clone());
        w.add_nodes(0, 1, &[]);
        w.add_pods("node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds), 1);
        w.add_pods("node-1", SIMPLE_DAEMON_SET_LABEL, Some(&ds), 1);
        let mut pending = new_pod("pod1-node-3", "", SIMPLE_DAEMON_SET_LABEL, Some(&ds));
        pending.spec.as_mut().unwrap().affinity = Some(replace_daemon_set_pod_node_name_node_affinity(None, "node-2"));
        w.add_pod(pending);
        let out = expect_sync(&w, 0, 1, 0);
        assert_eq!(deleted(&out.plan), ["pod1-node-3"]);
    }
}

/// Upstream `TestGetNodesToDaemonPods`: owned and adopted pods, terminal
/// ones included unless being deleted (or when asked to include them).
#[test]
fn get_nodes_to_daemon_pods() {
    let ds = new_daemon_set("foo");
    let ds2 = new_daemon_set("foo2");
    let dying = |pod: k8s_openapi::api::core::v1::Pod| {
        let mut pod = pod;
        pod.metadata.deletion_timestamp = Some(Time(ts(0)));
        pod
    };
    let always = [
        new_pod("matching-owned-0", "node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds)),
        new_pod("matching-orphan-0", "node-0", SIMPLE_DAEMON_SET_LABEL, None),
        new_pod("matching-owned-1", "node-1", SIMPLE_DAEMON_SET_LABEL, Some(&ds)),
        new_pod("matching-orphan-1", "node-1", SIMPLE_DAEMON_SET_LABEL, None),
        phase(new_pod("matching-owned-succeeded-pod-0", "node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds)), "Succeeded"),
        phase(new_pod("matching-owned-failed-pod-1", "node-1", SIMPLE_DAEMON_SET_LABEL, Some(&ds)), "Failed"),
    ];
    let deleted_terminal = [
        dying(phase(
            new_pod("matching-owned-succeeded-deleted-pod-0", "node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds)),
            "Succeeded",
        )),
        dying(phase(
            new_pod("matching-owned-failed-deleted-pod-1", "node-1", SIMPLE_DAEMON_SET_LABEL, Some(&ds)),
            "Failed",
        )),
    ];
    let never = [
        new_pod("non-matching-owned-0", "node-0", SIMPLE_DAEMON_SET_LABEL2, Some(&ds)),
        new_pod("non-matching-orphan-1", "node-1", SIMPLE_DAEMON_SET_LABEL2, None),
        new_pod("matching-owned-by-other-0", "node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds2)),
    ];
    for include in [false, true] {
        let pods: Vec<kcm_objects::Pod> =
            always.iter().chain(&deleted_terminal).chain(&never).map(crate::testing::slim).collect();
        let selector = crate::common::selector::Selector::new(Some(&ds.spec.selector)).unwrap();
        let claims = crate::common::controller_ref::claim_all(&ds.metadata, &selector, pods.iter());
        let by_node = manage::nodes_to_daemon_pods(&claims.claimed, include);
        let mut got: Vec<String> = by_node
            .iter()
            .flat_map(|(node, pods)| {
                pods.iter()
                    .inspect(move |p| assert_eq!(p.node_name(), Some(*node)))
                    .map(|p| p.metadata.name.to_string())
            })
            .collect();
        got.sort();
        let mut want: Vec<String> = always.iter().map(|p| p.metadata.name.clone().unwrap()).collect();
        if include {
            want.extend(deleted_terminal.iter().map(|p| p.metadata.name.clone().unwrap()));
        }
        want.sort();
        assert_eq!(got, want, "include deleted terminal: {include}");
    }
}

// === surge (daemon_controller_test.go) ===

/// Upstream `newUpdateSurge`: RollingUpdate, maxUnavailable 0, this maxSurge.
fn surge(name: &str, max_surge: i32) -> DaemonSet {
    let mut ds = new_daemon_set(name);
    rolling_update(&mut ds, IntOrString::Int(0), Some(IntOrString::Int(max_surge)));
    ds
}

/// An old pod of `ds` (no hash label) created at `created`, Ready or not.
fn old_pod(
    name: &str,
    node: &str,
    ds: &DaemonSet,
    created: i64,
    is_ready: Option<bool>,
) -> k8s_openapi::api::core::v1::Pod {
    let mut pod = new_pod(name, node, SIMPLE_DAEMON_SET_LABEL, Some(ds));
    pod.metadata.labels.as_mut().unwrap().remove(CONTROLLER_REVISION_HASH_LABEL);
    with_created_and_ready(pod, created, is_ready, None)
}

fn with_created_and_ready(
    mut pod: k8s_openapi::api::core::v1::Pod,
    created: i64,
    is_ready: Option<bool>,
    since: Option<i64>,
) -> k8s_openapi::api::core::v1::Pod {
    pod.metadata.creation_timestamp = Some(Time(ts(created)));
    if let Some(is_ready) = is_ready {
        pod.status.get_or_insert_default().conditions = Some(vec![k8s_openapi::api::core::v1::PodCondition {
            type_: "Ready".into(),
            status: if is_ready { "True" } else { "False" }.into(),
            last_transition_time: since.map(|s| Time(ts(s))),
            ..Default::default()
        }]);
    }
    pod
}

#[test]
fn surge_creates_new_pod_when_at_max_surge_and_old_pod_deleted() {
    let ds = surge("foo", 1);
    let mut w = World::new(ds.clone());
    w.add_nodes(0, 5, &[]);
    w.add_pod(with_created_and_ready(
        new_pod("node-0-new", "node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds)),
        100,
        Some(false),
        None,
    ));
    w.add_pod(old_pod("node-0-old-ready", "node-0", &ds, 50, Some(true)));
    for i in 1..5 {
        let mut pod = old_pod(&format!("node-{i}-preserve"), &format!("node-{i}"), &ds, 1, Some(true));
        if i == 4 {
            pod.metadata.deletion_timestamp = Some(Time(ts(31)));
            pod.metadata.deletion_grace_period_seconds = Some(30);
        }
        w.add_pod(pod);
    }
    let out = expect_sync(&w, 1, 0, 0);
    assert_eq!(created_on(&out.plan), ["node-4"]);
}

/// node-1 holds a new pod, the oldest old pod (created 50, Ready or not)
/// and a younger Ready old one (60); nodes 0, 3 and 4 get a pod. The
/// younger old pod goes in every case; the oldest goes when it is not
/// Ready, or when the new pod is available: with minReadySeconds 15 and
/// the new pod Ready since 50, not at 60 but at 70 (upstream
/// `TestSurgePreservesReadyOldPods`, `TestSurgeDeletesUnreadyOldPods`,
/// `TestSurgePreservesOldReadyWithUnsatisfiedMinReady`,
/// `TestSurgeDeletesOldReadyWithUnsatisfiedMinReady`).
#[test]
fn surge_keeps_or_deletes_old_pods() {
    let only_younger = vec!["node-1-delete"];
    let both = vec!["node-1-delete", "node-1-old"];
    let cases = [
        ("PreservesReadyOldPods", true, None, only_younger.clone()),
        ("DeletesUnreadyOldPods", false, None, both.clone()),
        ("PreservesOldReadyWithUnsatisfiedMinReady", true, Some(60), only_younger),
        ("DeletesOldReadyWithUnsatisfiedMinReady", true, Some(70), both),
    ];
    for (name, oldest_ready, min_ready_at, want) in cases {
        let mut ds = surge("foo", 1);
        let mut w = World::new(ds.clone());
        let mut new = new_pod("node-1-new", "node-1", SIMPLE_DAEMON_SET_LABEL, Some(&ds));
        if let Some(now) = min_ready_at {
            ds.spec.min_ready_seconds = Some(15);
            w = World::new(ds.clone());
            w.now = ts(now);
            new = with_created_and_ready(new, 100, Some(true), Some(50));
        } else {
            new = with_created_and_ready(new, 100, None, None);
        }
        w.add_nodes(0, 5, &[]);
        w.add_pod(new);
        w.add_pod(old_pod("node-1-old", "node-1", &ds, 50, Some(oldest_ready)));
        w.add_pod(old_pod("node-1-delete", "node-1", &ds, 60, Some(true)));
        w.add_pods("node-2", SIMPLE_DAEMON_SET_LABEL, Some(&ds), 1);
        let out = expect_sync(&w, 3, want.len(), 0);
        let mut gone = deleted(&out.plan);
        gone.sort();
        assert_eq!(gone, want, "{name}");
    }
}

/// Upstream `TestStoreDaemonSetStatus` is the executor's retry; here: the
/// status is written once when a count changes and not at all when nothing
/// does.
#[test]
fn store_daemon_set_status() {
    let ds = new_daemon_set("foo");
    let mut w = World::new(ds.clone());
    w.add_nodes(0, 2, &[]);
    w.add_pods("node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds), 1);
    w.add_pods("node-1", SIMPLE_DAEMON_SET_LABEL, Some(&ds), 1);
    let out = w.sync_and_apply();
    assert_eq!(
        crate::testing::describe_plan(&out.plan).last().map(String::as_str),
        Some("status 2/2/0/0/2/0/2 gen=1 collisions=0")
    );
    let again = w.sync();
    assert!(status(&again.plan).is_none(), "{:?}", crate::testing::describe_plan(&again.plan));
}

// === update_test.go ===
//
// Upstream's fake pod control observes its own creates and deletes at
// once, so in its tests the rolling update runs in the same sync as a
// manage that deleted or created pods. With real informers (and here) the
// expectations hold the update back until those writes are observed, so
// the same rollout takes a sync more wherever manage acted first.

/// Syncs, checks the creates and deletes, and applies the plan.
#[track_caller]
fn step(w: &mut World, creates: usize, deletes: usize) {
    let out = w.sync();
    let (c, d, _) = counts(&out.plan);
    assert_eq!((c, d), (creates, deletes), "{:#?}\n{:#?}", w.pods_by_node(), crate::testing::describe_plan(&out.plan));
    w.sync_and_apply();
}

/// [`step`] for each `(creates, deletes)`.
#[track_caller]
fn steps(w: &mut World, expected: &[(usize, usize)]) {
    for &(creates, deletes) in expected {
        step(w, creates, deletes);
    }
}

/// Five nodes with ready pods of the first template, then a new image.
fn rolled_out(max_unavailable: IntOrString, max_surge: Option<IntOrString>, ready: bool) -> World {
    let mut w = World::new(new_daemon_set("foo"));
    w.add_nodes(0, 5, &[]);
    step(&mut w, 5, 0);
    if ready {
        w.mark_pods_ready(ts(0));
    }
    let spec = w.ds.spec.template.spec.as_mut().unwrap();
    spec.containers[0].image = Some("foo2/bar2".into());
    rolling_update(&mut w.ds, max_unavailable, max_surge);
    w.ds.metadata.generation = Some(2);
    w
}

#[test]
fn daemon_set_updates_pods() {
    let mut w = rolled_out(IntOrString::Int(2), None, true);
    for (deletes, creates) in [(2, 2), (2, 2), (1, 1)] {
        step(&mut w, 0, deletes);
        step(&mut w, creates, 0);
        w.mark_pods_ready(ts(0));
    }
    step(&mut w, 0, 0);
    let status = w.ds.status.clone().unwrap();
    assert_eq!((status.updated_number_scheduled, status.number_available), (Some(5), Some(5)));
}

#[test]
fn daemon_set_updates_pods_with_max_surge() {
    let mut w = rolled_out(IntOrString::Int(0), Some(IntOrString::Int(2)), true);
    steps(&mut w, &[(2, 0), (0, 0)]);
    w.mark_pods_ready(ts(0));
    steps(&mut w, &[(0, 2), (2, 0), (0, 0)]);
    w.mark_pods_ready(ts(0));
    steps(&mut w, &[(0, 2), (1, 0), (0, 0)]);
    w.mark_pods_ready(ts(0));
    steps(&mut w, &[(0, 1), (0, 0)]);
    assert!(w.pods_by_node().values().all(|pods| pods.len() == 1));
}

/// New pods that never become ready stop the update at maxUnavailable.
#[test]
fn daemon_set_updates_when_new_pos_is_not_ready() {
    let mut w = rolled_out(IntOrString::Int(3), None, true);
    steps(&mut w, &[(0, 3), (3, 0), (0, 0)]);
}

/// Old pods that are not ready are all replaced at once.
#[test]
fn daemon_set_updates_all_old_pods_not_ready() {
    let mut w = rolled_out(IntOrString::Int(3), None, false);
    steps(&mut w, &[(0, 5), (5, 0), (0, 0)]);
}

/// With surge, unready old pods get their replacement at once, whatever
/// the surge budget, and go as soon as it exists: of two pods neither of
/// which is ready, the new one is kept.
#[test]
fn daemon_set_updates_all_old_pods_not_ready_max_surge() {
    let mut w = rolled_out(IntOrString::Int(0), Some(IntOrString::Int(2)), false);
    steps(&mut w, &[(5, 0), (0, 5), (0, 0)]);
}

/// A new strategy but the same template: nothing to roll.
#[test]
fn daemon_set_updates_no_template_changed() {
    let mut w = World::new(new_daemon_set("foo"));
    w.add_nodes(0, 5, &[]);
    step(&mut w, 5, 0);
    rolling_update(&mut w.ds, IntOrString::Int(3), None);
    step(&mut w, 0, 0);
}

/// Upstream `TestDaemonSetUpdatesPodsNotMatchTainstWithMaxSurge`: with
/// surge, an old pod on a node the DaemonSet no longer fits (a new
/// `NoSchedule` taint: it may keep running) goes only while more pods are
/// available than nodes need one: five available for four nodes, so it
/// goes at once, and one surge pod starts elsewhere.
#[test]
fn daemon_set_updates_pods_not_match_taints_with_max_surge() {
    let mut w = rolled_out(IntOrString::Int(0), Some(IntOrString::Int(1)), true);
    let taint = json!([{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]);
    w.nodes[0] = std::sync::Arc::new(tainted("node-0", taint));
    let out = w.sync();
    assert_eq!(deleted(&out.plan), ["foo-1"]);
    assert_eq!(created_on(&out.plan), ["node-1"]);
    let with_deletes =
        out.plan.steps.iter().find(|s| s.actions.iter().any(|a| matches!(a, Action::DeletePod { .. }))).unwrap();
    assert!(
        with_deletes.actions.iter().any(|a| matches!(a, Action::CreatePod { .. })),
        "deletions run with the first creations"
    );
    w.sync_and_apply();
    // Four available for four nodes now: nothing more goes until the surge
    // pod is available.
    step(&mut w, 0, 0);
    assert!(!w.pods_by_node().contains_key("node-0"));
}

/// Upstream `TestGetUnavailableNumbers` (now `updatedDesiredNodeCounts`):
/// the budgets out of the nodes that should run a pod, and an entry for
/// every such node.
#[test]
fn get_unavailable_numbers() {
    type Case = (&'static str, usize, IntOrString, Option<IntOrString>, (i32, i32, i32));
    let cases: [Case; 5] = [
        ("No nodes", 0, IntOrString::Int(0), None, (0, 0, 0)),
        ("Two nodes", 2, IntOrString::Int(1), None, (0, 1, 2)),
        ("Two nodes, both zero: unavailability 1", 2, IntOrString::Int(0), None, (0, 1, 2)),
        ("Two nodes, MaxUnavailable in percents", 2, IntOrString::String("50%".into()), None, (0, 1, 2)),
        ("Three nodes, surge in percents", 3, IntOrString::Int(0), Some(IntOrString::String("50%".into())), (2, 0, 3)),
    ];
    for (name, nodes, unavailable, surge, want) in cases {
        let mut ds = new_daemon_set("x");
        rolling_update(&mut ds, unavailable, surge);
        let mut w = World::new(ds);
        w.add_nodes(0, nodes, &[]);
        let backoff = FailedPodsBackoff::default();
        let cx = manage::Context { ds: &w.ds, hash: "h", backoff: &backoff, now: w.now };
        let mut by_node = std::collections::BTreeMap::new();
        assert_eq!(update::updated_desired_node_counts(&cx, &w.nodes, &mut by_node), Ok(want), "{name}");
        assert_eq!(by_node.len(), nodes, "{name}");
    }
    let mut ds = new_daemon_set("x");
    rolling_update(&mut ds, IntOrString::String("fifty".into()), None);
    let w = World::new(ds);
    let backoff = FailedPodsBackoff::default();
    let cx = manage::Context { ds: &w.ds, hash: "h", backoff: &backoff, now: w.now };
    assert!(update::updated_desired_node_counts(&cx, &w.nodes, &mut Default::default()).is_err());
}

// === history (update.go constructHistory, dedupCurHistories, cleanupHistory, snapshot) ===

fn revision_lines(plan: &Plan) -> Vec<String> {
    crate::testing::describe_plan(plan)
        .into_iter()
        .filter(|l| l.starts_with("revision") || l.starts_with("relabel"))
        .collect()
}

/// A revision of `ds`'s current template, as [`history::snapshot`] makes it.
fn current_revision(ds: &DaemonSet, number: i64) -> k8s_openapi::api::apps::v1::ControllerRevision {
    let mut cr = history::snapshot(ds, number);
    cr.metadata.uid = cr.metadata.name.clone();
    cr
}

#[test]
fn construct_history_creates_the_current_revision() {
    let mut w = World::new(new_daemon_set("foo"));
    w.add_nodes(0, 1, &[]);
    let hash = hash_of(&w.ds);
    let out = w.sync_and_apply();
    assert_eq!(revision_lines(&out.plan), [format!("revision create foo-{hash} 1")]);
    let Some(Action::ControllerRevision(crate::common::history::Write::Create { revision })) =
        out.plan.actions().find(|a| matches!(a, Action::ControllerRevision(_)))
    else {
        panic!()
    };
    let labels = revision.metadata.labels.as_ref().unwrap();
    assert_eq!(labels.get(CONTROLLER_REVISION_HASH_LABEL), Some(&hash));
    assert_eq!(labels.get("type").map(String::as_str), Some("production"), "the template's labels");
    assert_eq!(revision.data.0, get_patch(&w.ds));
    assert_eq!(revision.data.0["spec"]["template"]["$patch"], "replace");
    // The next sync finds it and writes no revision.
    assert!(revision_lines(&w.sync().plan).is_empty());
}

/// Rolling back to an older template reuses its revision with a number
/// above every other (upstream `constructHistory`'s revision bump).
#[test]
fn construct_history_bumps_a_reused_revision() {
    let ds = new_daemon_set("foo");
    let old = current_revision(&ds, 1);
    let mut newer = ds.clone();
    newer.spec.template.spec.as_mut().unwrap().containers[0].image = Some("foo2/bar2".into());
    let mut w = World::new(ds);
    w.revisions = vec![std::sync::Arc::new(old.clone()), std::sync::Arc::new(current_revision(&newer, 2))];
    let out = w.sync();
    assert_eq!(revision_lines(&out.plan), [format!("revision update {} 3", old.metadata.name.unwrap())]);
}

/// A revision kube-controller-manager wrote holds Go's zero fields
/// (`"creationTimestamp":null`, `"resources":{}`): it is still the current
/// one, and its hash (not ours) stays the pods' label.
#[test]
fn construct_history_matches_upstream_revisions_semantically() {
    let ds = new_daemon_set("foo");
    let mut upstream = current_revision(&ds, 1);
    upstream.metadata.name = Some("foo-5d8f6c9b7".into());
    upstream.metadata.labels.as_mut().unwrap().insert(CONTROLLER_REVISION_HASH_LABEL.into(), "5d8f6c9b7".into());
    let template = &mut upstream.data.0["spec"]["template"];
    template["metadata"]["creationTimestamp"] = serde_json::Value::Null;
    template["spec"]["containers"][0]["resources"] = json!({});
    assert!(matches_revision(&ds, &upstream));
    let mut w = World::new(ds);
    w.add_nodes(0, 1, &[]);
    w.revisions = vec![std::sync::Arc::new(upstream)];
    let out = w.sync();
    assert!(revision_lines(&out.plan).is_empty());
    let Some(Action::CreatePod { pod, .. }) = out.plan.actions().find(|a| matches!(a, Action::CreatePod { .. })) else {
        panic!()
    };
    assert_eq!(
        pod.metadata.labels.as_ref().unwrap().get(CONTROLLER_REVISION_HASH_LABEL).map(String::as_str),
        Some("5d8f6c9b7")
    );
}

/// A revision without the hash label gets its name as the label (upstream
/// uses the name so that no hash collision can arise).
#[test]
fn construct_history_labels_revisions_missing_the_hash() {
    let ds = new_daemon_set("foo");
    let mut old = ds.clone();
    old.spec.template.spec.as_mut().unwrap().containers[0].image = Some("foo0/bar0".into());
    let mut unlabelled = current_revision(&old, 1);
    unlabelled.metadata.labels.as_mut().unwrap().remove(CONTROLLER_REVISION_HASH_LABEL);
    let name = unlabelled.metadata.name.clone().unwrap();
    let mut w = World::new(ds.clone());
    w.revisions = vec![std::sync::Arc::new(unlabelled)];
    let out = w.sync();
    let lines = revision_lines(&out.plan);
    assert_eq!(lines[0], format!("revision update {name} 1"));
    assert_eq!(lines[1], format!("revision create foo-{} 2", hash_of(&ds)));
}

/// Two revisions of the current template: the higher number stays, the
/// pods get its hash, the other goes (upstream `dedupCurHistories`).
#[test]
fn dedup_cur_histories() {
    let ds = new_daemon_set("foo");
    let keep = current_revision(&ds, 3);
    let mut duplicate = current_revision(&ds, 1);
    duplicate.metadata.name = Some("foo-duplicate".into());
    duplicate.metadata.labels.as_mut().unwrap().insert(CONTROLLER_REVISION_HASH_LABEL.into(), "duplicate".into());
    let mut w = World::new(ds.clone());
    w.add_nodes(0, 2, &[]);
    w.revisions = vec![std::sync::Arc::new(duplicate), std::sync::Arc::new(keep)];
    w.add_pods("node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds), 1);
    let mut stale = new_pod("node-1-stale", "node-1", SIMPLE_DAEMON_SET_LABEL, Some(&ds));
    stale.metadata.labels.as_mut().unwrap().insert(CONTROLLER_REVISION_HASH_LABEL.into(), "duplicate".into());
    w.add_pod(stale);
    let out = w.sync_and_apply();
    assert_eq!(
        revision_lines(&out.plan),
        [format!("relabel node-1-stale {}", hash_of(&ds)), "revision delete foo-duplicate".into()]
    );
    assert_eq!(w.revisions.len(), 1);
}

/// Old revisions beyond `revisionHistoryLimit` (2) go oldest first, except
/// those a pod still runs (upstream `cleanupHistory`).
#[test]
fn cleanup_history() {
    let ds = new_daemon_set("foo");
    let mut w = World::new(ds.clone());
    w.add_nodes(0, 1, &[]);
    let mut olds = Vec::new();
    for (i, image) in ["v1", "v2", "v3", "v4"].into_iter().enumerate() {
        let mut old = ds.clone();
        old.spec.template.spec.as_mut().unwrap().containers[0].image = Some(image.into());
        olds.push(old.clone());
        w.revisions.push(std::sync::Arc::new(current_revision(&old, i as i64 + 1)));
    }
    w.revisions.push(std::sync::Arc::new(current_revision(&ds, 5)));
    // A pod of revision 1 still runs on node-0.
    w.add_pods("node-0", SIMPLE_DAEMON_SET_LABEL, Some(&olds[0]), 1);
    let out = w.sync();
    let name = |i: usize| format!("foo-{}", hash_of(&olds[i]));
    assert_eq!(
        revision_lines(&out.plan),
        [format!("revision delete {}", name(1)), format!("revision delete {}", name(2))]
    );
}

/// The current revision's name was taken: by the same template (a stale
/// cache) nothing is written; by another, a hash collision bumps
/// `status.collisionCount`, without retry, and the next snapshot is named
/// with the new count (upstream `snapshot`).
#[test]
fn snapshot_collision_bumps_the_collision_count() {
    let ds = new_daemon_set("foo");
    let same = current_revision(&ds, 1);
    assert!(after_already_exists(&ds, &same).is_empty());
    let mut other = ds.clone();
    other.spec.template.spec.as_mut().unwrap().containers[0].image = Some("other".into());
    let plan = after_already_exists(&ds, &current_revision(&other, 1));
    let Some(Action::Own(Write::UpdateStatus { status, retry, .. })) = plan.actions().next() else { panic!() };
    assert_eq!((status.collision_count, *retry), (Some(1), false));
    let mut bumped = ds.clone();
    bumped.status = Some((**status).clone());
    assert_ne!(history::snapshot(&bumped, 1).metadata.name, same.metadata.name);
}

/// Upstream `TestControlledHistories`: an orphan revision the selector
/// matches is adopted after the live re-check; an owned one it no longer
/// matches is released; another DaemonSet's is left alone.
#[test]
fn controlled_histories() {
    let ds = new_daemon_set("foo");
    let mut orphan = current_revision(&ds, 1);
    orphan.metadata.owner_references = None;
    let mut unmatched = current_revision(&ds, 2);
    unmatched.metadata.name = Some("foo-unmatched".into());
    unmatched.metadata.labels = Some(labels(&[("name", "other")]));
    let mut others = current_revision(&new_daemon_set("bar"), 1);
    others.metadata.name = Some("bar-1".into());
    let mut w = World::new(ds);
    w.revisions = [orphan.clone(), unmatched, others].into_iter().map(std::sync::Arc::new).collect();
    let lines = crate::testing::describe_plan(&w.sync().plan);
    let orphan_name = orphan.metadata.name.unwrap();
    assert_eq!(
        lines[..3],
        ["revision release foo-unmatched".to_string(), "recheck".into(), format!("revision adopt {orphan_name}")]
    );
}

// === status ===

/// Misscheduled pods count, expectations still pending write the status
/// without raising observedGeneration, and Ready pods waiting for
/// minReadySeconds bring the DaemonSet back after it.
#[test]
fn update_daemon_set_status() {
    let mut ds = new_daemon_set("foo");
    node_selector(&mut ds, SIMPLE_NODE_LABEL);
    ds.spec.min_ready_seconds = Some(30);
    ds.metadata.generation = Some(4);
    let mut w = World::new(ds.clone());
    w.add_nodes(0, 1, SIMPLE_NODE_LABEL);
    w.add_nodes(1, 1, &[]);
    w.add_pod(ready(new_pod("node-0-1", "node-0", SIMPLE_DAEMON_SET_LABEL, Some(&ds)), ts(NOW - 10)));
    w.add_pod(new_pod("node-1-1", "node-1", SIMPLE_DAEMON_SET_LABEL, Some(&ds)));
    let out = w.sync();
    assert_eq!(
        crate::testing::describe_plan(&out.plan).last().map(String::as_str),
        Some("status 1/1/1/1/1/0/1 gen=4 collisions=0")
    );
    assert_eq!(out.plan.requeue_after, Some(std::time::Duration::from_secs(30)));
    assert_eq!(deleted(&out.plan), ["node-1-1"], "the misscheduled pod goes");

    w.expectations.expect_creations(&key(&ds), 1, w.now);
    let held = w.sync();
    assert_eq!(counts(&held.plan), (0, 0, 0));
    assert_eq!(status(&held.plan).unwrap().observed_generation, None, "not raised while held back");
}
