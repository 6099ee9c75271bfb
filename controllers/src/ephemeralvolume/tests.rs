//! Upstream's `TestSyncHandler`, row by row: each row's cached pods and
//! claims, one sync of `my-namespace/test-pod` run as the driver runs it
//! (the steps in order, each create answered as the row's fake client
//! answers it, stopping at the first failure), then the claims that exist
//! afterwards, whether the sync failed, and the two counters
//! (`create_total`, `create_failures_total`).

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;

// === fixtures (upstream's) ===

const NS: &str = "my-namespace";
const OTHER_NS: &str = "not-my-namespace";
const POD: &str = "test-pod";
const UID: &str = "uidpod1";
const VOLUME: &str = "ephemeral-volume";

fn pod(volumes: Value) -> Value {
    json!({"metadata": {"name": POD, "namespace": NS, "uid": UID}, "spec": {"volumes": volumes}})
}

/// `testPodWithEphemeral`: one generic ephemeral volume, empty template.
fn pod_with_ephemeral() -> Value {
    pod(json!([{"name": VOLUME, "ephemeral": {"volumeClaimTemplate": {}}}]))
}

/// `makePVC`: a claim with no spec fields, and `owner` if any.
fn claim(name: &str, namespace: &str, owner: Option<Value>) -> PersistentVolumeClaim {
    let mut claim = json!({"metadata": {"name": name, "namespace": namespace}, "spec": {}});
    if let Some(owner) = owner {
        claim["metadata"]["ownerReferences"] = json!([owner]);
    }
    serde_json::from_value(claim).expect("a claim")
}

/// `testPodEphemeralClaim`: the claim the controller makes.
fn ephemeral_claim() -> PersistentVolumeClaim {
    let owner = json!({
        "apiVersion": "v1", "kind": "Pod", "name": POD, "uid": UID,
        "controller": true, "blockOwnerDeletion": true,
    });
    claim(&format!("{POD}-{VOLUME}"), NS, Some(owner))
}

/// `conflictingClaim`: that name, in the pod's namespace, no owner.
fn conflicting_claim() -> PersistentVolumeClaim {
    claim(&format!("{POD}-{VOLUME}"), NS, None)
}

/// `otherNamespaceClaim`: that name in another namespace.
fn other_namespace_claim() -> PersistentVolumeClaim {
    claim(&format!("{POD}-{VOLUME}"), OTHER_NS, None)
}

fn key(claim: &PersistentVolumeClaim) -> (String, String) {
    (claim.metadata.namespace.clone().unwrap_or_default(), claim.metadata.name.clone().unwrap_or_default())
}

// === the harness ===

/// What a row expects.
#[derive(Debug, PartialEq)]
struct Outcome {
    /// The claims afterwards, whole, by namespace and name.
    claims: Vec<Value>,
    failed: bool,
    created: u32,
    failures: u32,
}

/// One sync of the row's pod (if cached), creates failing when
/// `creates_conflict`, as upstream's reactor makes them.
fn sync(pods: &[Value], claims: Vec<PersistentVolumeClaim>, creates_conflict: bool) -> Outcome {
    let mut claims = claims;
    let (mut created, mut failures, mut failed) = (0, 0, false);
    let pod = pods
        .iter()
        .map(|p| serde_json::from_value::<Pod>(p.clone()).expect("a pod"))
        .find(|p| &*p.metadata.namespace == NS && &*p.metadata.name == POD);
    if let Some(pod) = pod {
        let cached = claims.clone();
        let lookup =
            |name: &str| cached.iter().find(|c| key(c) == (NS.to_owned(), name.to_owned())).cloned().map(Arc::new);
        for step in plan(&pod, lookup) {
            match step {
                Step::Create { claim, .. } => {
                    created += 1;
                    if creates_conflict {
                        failures += 1;
                        failed = true;
                        break;
                    }
                    let mut claim = *claim;
                    claim.metadata.namespace = Some(NS.to_owned());
                    claims.push(claim);
                }
                Step::NotOwner { .. } => {
                    failed = true;
                    break;
                }
            }
        }
    }
    let claims = listing(claims);
    Outcome { claims, failed, created, failures }
}

fn expected(claims: &[PersistentVolumeClaim], failed: bool, created: u32, failures: u32) -> Outcome {
    let claims = listing(claims.to_vec());
    Outcome { claims, failed, created, failures }
}

/// The claims, sorted as upstream's `sortPVCs`, as JSON.
fn listing(mut claims: Vec<PersistentVolumeClaim>) -> Vec<Value> {
    claims.sort_by_key(key);
    claims.iter().map(|c| serde_json::to_value(c).expect("JSON")).collect()
}

// === upstream's rows ===

#[test]
fn create() {
    assert_eq!(sync(&[pod_with_ephemeral()], vec![], false), expected(&[ephemeral_claim()], false, 1, 0));
}

#[test]
fn no_such_pod() {
    assert_eq!(sync(&[], vec![], false), expected(&[], false, 0, 0));
}

#[test]
fn pod_deleted() {
    let mut deleted = pod_with_ephemeral();
    deleted["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    assert!(!should_queue(&serde_json::from_value(deleted.clone()).unwrap()));
    assert_eq!(sync(&[deleted], vec![], false), expected(&[], false, 0, 0));
}

#[test]
fn no_volumes() {
    let plain = pod(json!([]));
    assert!(!should_queue(&serde_json::from_value(plain.clone()).unwrap()));
    assert_eq!(sync(&[plain], vec![], false), expected(&[], false, 0, 0));
}

#[test]
fn create_with_other_pvc() {
    assert_eq!(
        sync(&[pod_with_ephemeral()], vec![other_namespace_claim()], false),
        expected(&[other_namespace_claim(), ephemeral_claim()], false, 1, 0)
    );
}

#[test]
fn wrong_pvc_owner() {
    assert_eq!(
        sync(&[pod_with_ephemeral()], vec![conflicting_claim()], false),
        expected(&[conflicting_claim()], true, 0, 0)
    );
}

#[test]
fn create_conflict() {
    assert_eq!(sync(&[pod_with_ephemeral()], vec![], true), expected(&[], true, 1, 1));
}

// === beyond upstream's table ===

#[test]
fn an_owned_claim_needs_nothing() {
    assert!(should_queue(&serde_json::from_value(pod_with_ephemeral()).unwrap()));
    assert_eq!(
        sync(&[pod_with_ephemeral()], vec![ephemeral_claim()], false),
        expected(&[ephemeral_claim()], false, 0, 0)
    );
}

#[test]
fn the_claim_takes_the_templates_labels_annotations_and_spec_only() {
    let pod: Pod = serde_json::from_value(pod(json!([{"name": VOLUME, "ephemeral": {"volumeClaimTemplate": {
        "metadata": {"labels": {"app": "web"}, "annotations": {"note": "x"}, "finalizers": ["f"], "name": "ignored"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "fast"},
    }}}])))
    .unwrap();
    let claim = claim_for(&pod, &pod.spec.rare().ephemeral_volumes[0]);
    assert_eq!(
        serde_json::to_value(&claim).unwrap(),
        json!({
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "test-pod-ephemeral-volume",
                "labels": {"app": "web"},
                "annotations": {"note": "x"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": POD, "uid": UID, "controller": true, "blockOwnerDeletion": true}],
            },
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "fast"},
        })
    );
}

#[test]
fn volumes_are_walked_in_order_and_a_foreign_claim_stops_the_walk() {
    let volumes = json!([
        {"name": "a", "ephemeral": {"volumeClaimTemplate": {}}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
        {"name": "b", "ephemeral": {"volumeClaimTemplate": {}}},
        {"name": "c", "ephemeral": {"volumeClaimTemplate": {}}},
    ]);
    let pod: Pod = serde_json::from_value(pod(volumes)).unwrap();
    let foreign = claim("test-pod-b", NS, None);
    let steps = plan(&pod, |name| (name == "test-pod-b").then(|| Arc::new(foreign.clone())));
    let [Step::Create { volume: a, .. }, Step::NotOwner { volume: b, message }] = steps.as_slice() else {
        panic!("a create then the foreign claim: {steps:?}")
    };
    assert_eq!((&**a, &**b), ("a", "b"));
    assert_eq!(
        failed_binding_message(b, message),
        "ephemeral volume b: PVC my-namespace/test-pod-b was not created for pod my-namespace/test-pod (pod is not owner)"
    );
    assert_eq!(create_error("test-pod-a", "boom"), "create PVC test-pod-a: boom");
}
