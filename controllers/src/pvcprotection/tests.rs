//! Upstream's `TestPVCProtectionController`, row by row: each row's PVC
//! and pod events go through [`should_queue`] and [`claims_to_queue`],
//! each queued claim through [`process`] as the driver runs it (the cached
//! pods the index gives, then the live list when asked), and the calls
//! made are compared with upstream's expected actions. The rows about a
//! failing write or list are the driver's retry, left to the runtime's
//! tests; upstream's per-namespace batching shares one live list between
//! claims, which changes no decision here.

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;

// === fixtures (upstream's helpers) ===

const NS: &str = "default";

/// Upstream `pod()`: `pod1` in `default`, uid `uid1`, on `node1`, Pending.
fn pod() -> Value {
    json!({
        "metadata": {"name": "pod1", "namespace": NS, "uid": "uid1"},
        "spec": {"nodeName": "node1", "volumes": []},
        "status": {"phase": "Pending"}
    })
}

fn with_pvc(name: &str, mut pod: Value) -> Value {
    pod["spec"]["volumes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": name, "persistentVolumeClaim": {"claimName": name}}));
    pod
}

fn with_empty_dir(mut pod: Value) -> Value {
    pod["spec"]["volumes"].as_array_mut().unwrap().push(json!({"name": "emptyDir", "emptyDir": {}}));
    pod
}

fn with_ephemeral(volume: &str, mut pod: Value) -> Value {
    pod["spec"]["volumes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": volume, "ephemeral": {"volumeClaimTemplate": {}}}));
    pod
}

fn with_status(phase: &str, mut pod: Value) -> Value {
    pod["status"]["phase"] = json!(phase);
    pod
}

fn with_uid(uid: &str, mut pod: Value) -> Value {
    pod["metadata"]["uid"] = json!(uid);
    pod
}

fn unscheduled(mut pod: Value) -> Value {
    pod["spec"]["nodeName"] = json!("");
    pod
}

fn named(name: &str, ns: &str, mut pod: Value) -> Value {
    pod["metadata"]["name"] = json!(name);
    pod["metadata"]["namespace"] = json!(ns);
    pod
}

fn force_deleted(mut pod: Value) -> Value {
    pod["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    pod["metadata"]["deletionGracePeriodSeconds"] = json!(0);
    pod
}

fn to_pod(pod: &Value) -> Pod {
    serde_json::from_value(pod.clone()).expect("a pod")
}

/// Upstream `pvc()` / `pvcWithConfig`.
fn pvc(name: &str, ns: &str) -> Value {
    json!({"metadata": {"name": name, "namespace": ns}, "spec": {}, "status": {}})
}

fn protected(mut pvc: Value) -> Value {
    pvc["metadata"]["finalizers"] = json!([PVC_PROTECTION_FINALIZER]);
    pvc
}

fn deleted(mut pvc: Value) -> Value {
    pvc["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    pvc
}

fn bound(mut pvc: Value) -> Value {
    pvc["status"]["phase"] = json!("Bound");
    pvc
}

fn with_unused(status: &str, pvc: Value) -> Value {
    let mut pvc = pvc;
    let (reason, message) = if status == "True" {
        ("NoPodsUsingPVC", "No pods are currently referencing this PVC")
    } else {
        ("PodUsingPVC", "A pod is currently referencing this PVC")
    };
    pvc["status"]["conditions"] = json!([{
        "type": "Unused", "status": status, "lastTransitionTime": "1970-01-01T00:01:40Z",
        "reason": reason, "message": message
    }]);
    pvc
}

fn owned_by(pod: &Value, mut pvc: Value) -> Value {
    pvc["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"],
        "controller": true
    }]);
    pvc
}

fn to_pvc(pvc: &Value) -> PersistentVolumeClaim {
    serde_json::from_value(pvc.clone()).expect("a PVC")
}

fn now() -> Time {
    Time(jiff::Timestamp::from_second(123).unwrap())
}

// === the harness ===

/// A row: the cluster's objects and the events to simulate.
#[derive(Default)]
struct Row {
    unused_since: bool,
    /// Objects in the API server (pods and claims), also cached unless
    /// `informers_are_late`.
    initial: Vec<Value>,
    informers_are_late: bool,
    updated_pvcs: Vec<Value>,
    updated_pod: Option<Value>,
    deleted_pod: Option<Value>,
}

/// The calls a row makes, as upstream's expected actions: `list <ns>`,
/// `status <ns>/<name> <Unused status>`, `update <ns>/<name> <finalizers>`.
fn run(row: Row) -> Vec<String> {
    let is_pod = |o: &&Value| o["spec"].get("nodeName").is_some();
    let mut api_pods: Vec<Value> = row.initial.iter().filter(is_pod).cloned().collect();
    let mut api_pvcs: Vec<Value> = row.initial.iter().filter(|o| !is_pod(o)).cloned().collect();
    api_pvcs.extend(row.updated_pvcs.iter().cloned());
    if let Some(pod) = &row.updated_pod {
        api_pods.push(pod.clone());
    }
    let cached_pods = if row.informers_are_late { Vec::new() } else { api_pods.clone() };

    let mut queue: Vec<String> = Vec::new();
    let mut add = |key: String| {
        if !queue.contains(&key) {
            queue.push(key);
        }
    };
    for pvc in &row.updated_pvcs {
        if should_queue(&to_pvc(pvc), row.unused_since) {
            add(format!(
                "{}/{}",
                pvc["metadata"]["namespace"].as_str().unwrap(),
                pvc["metadata"]["name"].as_str().unwrap()
            ));
        }
    }
    let updated = row.updated_pod.as_ref().map(to_pod);
    let old = row.deleted_pod.as_ref().map(to_pod);
    match (&updated, &old) {
        (Some(new), old) => claims_to_queue(old.as_ref(), new, false, row.unused_since).into_iter().for_each(&mut add),
        (None, Some(gone)) => claims_to_queue(None, gone, true, row.unused_since).into_iter().for_each(&mut add),
        (None, None) => {}
    }

    let mut calls = Vec::new();
    for key in queue {
        let Some(pvc) = api_pvcs.iter().find(|p| {
            format!("{}/{}", p["metadata"]["namespace"].as_str().unwrap(), p["metadata"]["name"].as_str().unwrap())
                == key
        }) else {
            continue;
        };
        let pvc = to_pvc(pvc);
        let cached: Vec<Arc<Pod>> =
            cached_pods.iter().map(to_pod).filter(|p| pod_pvc_keys(p).contains(&key)).map(Arc::new).collect();
        let ns = pvc.metadata.namespace.clone().unwrap();
        let mut answer = process(&pvc, &cached, None, row.unused_since, now());
        if answer == Answer::ListPods {
            calls.push(format!("list {ns}"));
            let live: Vec<Pod> = api_pods.iter().map(to_pod).filter(|p| *p.metadata.namespace == *ns).collect();
            answer = process(&pvc, &cached, Some(&live), row.unused_since, now());
        }
        let Answer::Writes(outcome) = answer else { panic!("asked for the live list twice") };
        for write in outcome.writes {
            calls.push(match write {
                Write::UnusedCondition(p, status) => {
                    let condition = &p.status.as_ref().unwrap().conditions.as_ref().unwrap()[0];
                    assert_eq!(condition.last_transition_time, Some(now()));
                    assert_eq!(condition.status, status);
                    format!("status {key} {status}")
                }
                Write::RemoveFinalizer(p) | Write::AddFinalizer(p) => {
                    format!("update {key} {:?}", p.metadata.finalizers.unwrap_or_default())
                }
            });
        }
    }
    calls
}

fn calls(expected: &[&str]) -> Vec<String> {
    expected.iter().map(|s| (*s).to_owned()).collect()
}

const ADDED: &str = "[\"kubernetes.io/pvc-protection\"]";

// === PVC events ===

#[test]
fn pvc_without_finalizer_gets_it() {
    let row = Row { updated_pvcs: vec![pvc("pvc1", NS), pvc("pvc2", "namespace-2")], ..Row::default() };
    assert_eq!(
        run(row),
        calls(&[&format!("update default/pvc1 {ADDED}"), &format!("update namespace-2/pvc2 {ADDED}")])
    );
}

#[test]
fn pvc_with_finalizer_needs_nothing() {
    let row =
        Row { updated_pvcs: vec![protected(pvc("pvc1", NS)), protected(pvc("pvc2", "namespace-2"))], ..Row::default() };
    assert_eq!(run(row), calls(&[]));
}

#[test]
fn deleted_pvcs_across_namespaces_lose_finalizer() {
    let row = Row {
        updated_pvcs: vec![deleted(protected(pvc("pvc1", NS))), deleted(protected(pvc("pvc2", "namespace-2")))],
        ..Row::default()
    };
    let expected = ["list default", "update default/pvc1 []", "list namespace-2", "update namespace-2/pvc2 []"];
    assert_eq!(run(row), calls(&expected));
}

#[test]
fn deleted_pvcs_of_one_namespace_without_pods_lose_finalizer() {
    let row = Row {
        updated_pvcs: vec![deleted(protected(pvc("pvc1", NS))), deleted(protected(pvc("pvc2", NS)))],
        ..Row::default()
    };
    let expected = ["list default", "update default/pvc1 []", "list default", "update default/pvc2 []"];
    assert_eq!(run(row), calls(&expected));
}

#[test]
fn deleted_pvc_used_by_a_pod_keeps_finalizer() {
    let row = Row {
        initial: vec![with_pvc("pvc1", pod())],
        updated_pvcs: vec![deleted(protected(pvc("pvc1", NS)))],
        ..Row::default()
    };
    assert_eq!(run(row), calls(&[]));
}

#[test]
fn deleted_pvc_beside_unrelated_volumes_loses_finalizer() {
    let row = Row {
        initial: vec![with_empty_dir(with_pvc("unrelatedPVC", pod()))],
        updated_pvcs: vec![deleted(protected(pvc("pvc1", NS))), deleted(protected(pvc("pvc2", NS)))],
        ..Row::default()
    };
    let expected = ["list default", "update default/pvc1 []", "list default", "update default/pvc2 []"];
    assert_eq!(run(row), calls(&expected));
}

#[test]
fn deleted_pvc_of_a_finished_pod_not_deleted_keeps_finalizer() {
    let row = Row {
        initial: vec![with_status("Failed", with_pvc("pvc1", pod()))],
        updated_pvcs: vec![deleted(protected(pvc("pvc1", NS)))],
        ..Row::default()
    };
    assert_eq!(run(row), calls(&[]));
}

#[test]
fn deleted_pvc_of_a_pod_not_yet_cached_keeps_finalizer_after_the_live_list() {
    let row = Row {
        initial: vec![with_pvc("pvc1", pod())],
        informers_are_late: true,
        updated_pvcs: vec![deleted(protected(pvc("pvc1", NS)))],
        ..Row::default()
    };
    assert_eq!(run(row), calls(&["list default"]));
}

#[test]
fn only_the_unused_of_several_deleted_pvcs_lose_finalizer() {
    let row = Row {
        initial: vec![with_pvc("pvc1", pod()), with_pvc("pvc3", named("pod2", "namespace-3", pod()))],
        informers_are_late: true,
        updated_pvcs: vec![
            deleted(protected(pvc("pvc1", NS))),
            deleted(protected(pvc("pvc2", NS))),
            deleted(protected(pvc("pvc3", "namespace-3"))),
        ],
        ..Row::default()
    };
    let expected = ["list default", "list default", "update default/pvc2 []", "list namespace-3"];
    assert_eq!(run(row), calls(&expected));
}

// === the Unused condition (PersistentVolumeClaimUnusedSinceTime) ===

#[test]
fn unused_bound_pvc_gets_unused_true() {
    let row = Row { unused_since: true, updated_pvcs: vec![bound(protected(pvc("pvc1", NS)))], ..Row::default() };
    assert_eq!(run(row), calls(&["list default", "status default/pvc1 True"]));
}

#[test]
fn pending_pvc_gets_no_condition() {
    let row = Row { unused_since: true, updated_pvcs: vec![protected(pvc("pvc1", NS))], ..Row::default() };
    assert_eq!(run(row), calls(&[]));
}

#[test]
fn pvc_already_unused_is_not_queued() {
    let row = Row {
        unused_since: true,
        updated_pvcs: vec![bound(with_unused("True", protected(pvc("pvc1", NS))))],
        ..Row::default()
    };
    assert_eq!(run(row), calls(&[]));
}

#[test]
fn running_pod_turns_unused_false() {
    let row = Row {
        unused_since: true,
        initial: vec![bound(with_unused("True", protected(pvc("pvc1", NS))))],
        updated_pod: Some(with_status("Running", with_pvc("pvc1", pod()))),
        ..Row::default()
    };
    assert_eq!(run(row), calls(&["status default/pvc1 False"]));
}

#[test]
fn used_bound_pvc_without_condition_gets_unused_false() {
    for user in [with_status("Running", with_pvc("pvc1", pod())), unscheduled(with_pvc("pvc1", pod()))] {
        let row = Row {
            unused_since: true,
            initial: vec![user],
            updated_pvcs: vec![bound(protected(pvc("pvc1", NS)))],
            ..Row::default()
        };
        assert_eq!(run(row), calls(&["status default/pvc1 False"]));
    }
}

#[test]
fn deleting_pvc_gets_no_condition_and_loses_finalizer() {
    let row = Row { unused_since: true, updated_pvcs: vec![deleted(protected(pvc("pvc1", NS)))], ..Row::default() };
    assert_eq!(run(row), calls(&["list default", "update default/pvc1 []"]));
    let with_condition = deleted(with_unused("True", protected(pvc("pvc1", NS))));
    let Answer::Writes(outcome) = process(&to_pvc(&with_condition), &[], Some(&[]), true, now()) else { panic!() };
    let [Write::RemoveFinalizer(released)] = &outcome.writes[..] else { panic!("{outcome:?}") };
    assert_eq!(released.status, to_pvc(&with_condition).status, "the condition is kept");
}

#[test]
fn gate_off_writes_no_condition() {
    let row = Row { updated_pvcs: vec![bound(protected(pvc("pvc1", NS)))], ..Row::default() };
    assert_eq!(run(row), calls(&[]));
}

#[test]
fn terminated_pod_leaves_bound_pvc_unused() {
    for phase in ["Succeeded", "Failed"] {
        let row = Row {
            unused_since: true,
            initial: vec![with_status(phase, with_pvc("pvc1", pod()))],
            updated_pvcs: vec![bound(protected(pvc("pvc1", NS)))],
            ..Row::default()
        };
        assert_eq!(run(row), calls(&["list default", "status default/pvc1 True"]), "{phase}");
    }
}

#[test]
fn pod_only_in_the_api_turns_unused_false() {
    let row = Row {
        unused_since: true,
        initial: vec![with_pvc("pvc1", pod())],
        informers_are_late: true,
        updated_pvcs: vec![bound(protected(pvc("pvc1", NS)))],
        ..Row::default()
    };
    assert_eq!(run(row), calls(&["list default", "status default/pvc1 False"]));
}

#[test]
fn remaining_pod_keeps_bound_pvc_used() {
    let row = Row {
        unused_since: true,
        initial: vec![with_pvc("pvc1", pod()), bound(protected(pvc("pvc1", NS)))],
        deleted_pod: Some(with_pvc("pvc1", with_uid("uid2", named("pod2", NS, pod())))),
        ..Row::default()
    };
    assert_eq!(run(row), calls(&["status default/pvc1 False"]));
}

#[test]
fn deleted_pod_leaves_bound_pvc_unused() {
    let row = Row {
        unused_since: true,
        initial: vec![bound(protected(pvc("pvc1", NS)))],
        deleted_pod: Some(with_pvc("pvc1", pod())),
        ..Row::default()
    };
    assert_eq!(run(row), calls(&["list default", "status default/pvc1 True"]));
}

#[test]
fn used_bound_pvc_without_finalizer_gets_condition_then_finalizer() {
    let row = Row {
        unused_since: true,
        initial: vec![with_pvc("pvc1", pod())],
        updated_pvcs: vec![bound(pvc("pvc1", NS))],
        ..Row::default()
    };
    assert_eq!(run(row), calls(&["status default/pvc1 False", &format!("update default/pvc1 {ADDED}")]));
}

#[test]
fn gate_on_deleted_pvc_used_by_a_pod_keeps_finalizer() {
    let row = Row {
        unused_since: true,
        initial: vec![with_pvc("pvc1", pod())],
        updated_pvcs: vec![deleted(protected(pvc("pvc1", NS)))],
        ..Row::default()
    };
    assert_eq!(run(row), calls(&[]));
}

// === pod events ===

#[test]
fn updated_running_or_finished_pod_queues_nothing() {
    for phase in ["Running", "Succeeded"] {
        let row = Row {
            initial: vec![deleted(protected(pvc("pvc1", NS)))],
            updated_pod: Some(with_status(phase, with_pvc("pvc1", pod()))),
            ..Row::default()
        };
        assert_eq!(run(row), calls(&[]), "{phase}");
    }
}

#[test]
fn updated_unscheduled_pod_releases_the_claim() {
    let row = Row {
        initial: vec![deleted(protected(pvc("pvc1", NS)))],
        updated_pod: Some(unscheduled(with_pvc("pvc1", pod()))),
        ..Row::default()
    };
    assert_eq!(run(row), calls(&["list default", "update default/pvc1 []"]));
}

#[test]
fn deleted_running_pod_releases_the_claim() {
    let row = Row {
        initial: vec![deleted(protected(pvc("pvc1", NS)))],
        deleted_pod: Some(with_status("Running", with_pvc("pvc1", pod()))),
        ..Row::default()
    };
    assert_eq!(run(row), calls(&["list default", "update default/pvc1 []"]));
}

#[test]
fn pod_replaced_under_the_same_name() {
    // The old pod used the deleted claim, the new one does not.
    let row = Row {
        initial: vec![deleted(protected(pvc("pvc1", NS)))],
        deleted_pod: Some(with_pvc("pvc1", pod())),
        updated_pod: Some(with_uid("uid2", pod())),
        ..Row::default()
    };
    assert_eq!(run(row), calls(&["list default", "update default/pvc1 []"]));
    // The old pod used a claim not being deleted.
    let row = Row {
        initial: vec![protected(pvc("pvc1", NS))],
        deleted_pod: Some(with_pvc("pvc1", pod())),
        updated_pod: Some(with_uid("uid2", pod())),
        ..Row::default()
    };
    assert_eq!(run(row), calls(&[]));
    // Both use the deleted claim.
    let row = Row {
        initial: vec![deleted(protected(pvc("pvc1", NS)))],
        deleted_pod: Some(with_pvc("pvc1", pod())),
        updated_pod: Some(with_uid("uid2", with_pvc("pvc1", pod()))),
        ..Row::default()
    };
    assert_eq!(run(row), calls(&[]));
}

#[test]
fn pod_scheduled_with_a_deleted_claim_keeps_it() {
    let row = Row {
        initial: vec![deleted(protected(pvc("pvc1", NS)))],
        deleted_pod: Some(unscheduled(with_pvc("pvc1", pod()))),
        updated_pod: Some(with_pvc("pvc1", pod())),
        ..Row::default()
    };
    assert_eq!(run(row), calls(&[]));
}

// === generic ephemeral volumes ===

#[test]
fn ephemeral_volume_claim_is_used_only_when_the_pod_controls_it() {
    let user = with_ephemeral("scratch", pod());
    let claim =
        |pvc: Value| Row { initial: vec![user.clone()], updated_pvcs: vec![deleted(protected(pvc))], ..Row::default() };
    assert_eq!(run(claim(owned_by(&user, pvc("pod1-scratch", NS)))), calls(&[]));
    let stranger = owned_by(&with_uid("other", pod()), pvc("pod1-scratch", NS));
    assert_eq!(run(claim(stranger)), calls(&["list default", "update default/pod1-scratch []"]));
    assert_eq!(pod_pvc_keys(&to_pod(&user)), ["default/pod1-scratch"]);
}

#[test]
fn force_deleted_pod_no_longer_holds_its_ephemeral_claim() {
    let user = force_deleted(with_ephemeral("scratch", pod()));
    let row = Row {
        initial: vec![user.clone()],
        updated_pvcs: vec![deleted(protected(owned_by(&user, pvc("pod1-scratch", NS))))],
        ..Row::default()
    };
    assert_eq!(run(row), calls(&["list default", "update default/pod1-scratch []"]));
}
