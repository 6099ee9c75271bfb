//! The VolumeAttributesClass protection controller end to end: the real
//! `kcm-rs` binary against kube-sim and against the testbed, classes and
//! claims made and deleted with kubectl, as a user sees them.
//!
//! kcm-rs runs `volumeattributesclass-protection-controller` and the PVC
//! protection controller (so that a deleted claim no pod uses goes). The
//! API server's StorageObjectInUseProtection admission gives every new
//! class `kubernetes.io/vac-protection`. Classes are cluster-wide and the
//! testbed is shared: each test's are named after its namespace. Whether a
//! class is kept is checked after the controller's one worker handled a
//! later deletion (a second, unused class, gone), never after a wait of
//! some length.

use k8s_openapi::api::storage::v1::VolumeAttributesClass;
use kube::Api;
use kube_sim::testing::{kubectl_ok, wait_for};
use serde_json::json;

use crate::common::storage::{apply, claim_gone, delete};
use crate::common::{Env, PATIENCE, on_both, start_provisioned};

const CONTROLLERS: &str =
    "--controllers=volumeattributesclass-protection-controller,persistentvolumeclaim-protection-controller";
const VAC_FINALIZER: &str = "kubernetes.io/vac-protection";

// === utils ===

async fn env() -> Env {
    start_provisioned(&[CONTROLLERS]).await
}

fn classes(env: &Env) -> Api<VolumeAttributesClass> {
    Api::all(env.client.clone())
}

/// `kubectl apply`s class `<ns>-<name>` and returns its full name.
async fn create_class(env: &Env, name: &str) -> String {
    let name = format!("{}-{name}", env.ns);
    apply(
        env,
        &json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass", "metadata": {"name": name},
        "driverName": "csi.example.com", "parameters": {"iops": "3000"}}),
    )
    .await;
    name
}

async fn class_gone(env: &Env, name: &str) {
    wait_for(&env.cluster, PATIENCE, &format!("class {name} deleted"), || async {
        match classes(env).get_opt(name).await.map_err(|e| e.to_string())? {
            None => Ok(()),
            Some(c) => Err(format!("still there: {:?}, {:?}", c.metadata.deletion_timestamp, c.metadata.finalizers)),
        }
    })
    .await;
}

// === tests ===

on_both!(
    an_unused_class_goes_at_once_and_a_used_one_when_its_claim_is_deleted,
    a_finalizer_taken_off_a_class_is_put_back,
);

/// A class no claim refers to is deleted at once (its finalizer removed);
/// a class a claim names in `spec.volumeAttributesClassName` stays
/// Terminating, with its finalizer, until the claim is deleted, then goes.
async fn an_unused_class_goes_at_once_and_a_used_one_when_its_claim_is_deleted() {
    let env = env().await;
    let used = create_class(&env, "gold").await;
    let free = create_class(&env, "silver").await;
    apply(
        &env,
        &json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
            "volumeAttributesClassName": used}}),
    )
    .await;
    let named = classes(&env).get(&used).await.expect("the used class");
    assert_eq!(named.metadata.finalizers, Some(vec![VAC_FINALIZER.to_owned()]), "given at creation");
    delete(&env, "volumeattributesclass", &used).await;
    delete(&env, "volumeattributesclass", &free).await;
    class_gone(&env, &free).await;
    // The worker took the used class before the free one: it is kept.
    let kept = classes(&env).get(&used).await.expect("the used class");
    assert!(kept.metadata.deletion_timestamp.is_some(), "Terminating");
    assert_eq!(kept.metadata.finalizers, Some(vec![VAC_FINALIZER.to_owned()]));
    delete(&env, "pvc", "data").await;
    claim_gone(&env, "data").await;
    class_gone(&env, &used).await;
}

/// A class whose protection finalizer was taken off gets it back
/// (upstream adds it to classes made before the admission plugin).
async fn a_finalizer_taken_off_a_class_is_put_back() {
    let env = env().await;
    let class = create_class(&env, "bronze").await;
    let clear = json!({"metadata": {"finalizers": null}}).to_string();
    kubectl_ok(&env.kubeconfig, &["patch", "volumeattributesclass", &class, "--type=merge", "-p", &clear]).await;
    wait_for(&env.cluster, PATIENCE, "the finalizer back", || async {
        let finalizers = classes(&env).get(&class).await.map_err(|e| e.to_string())?.metadata.finalizers;
        if finalizers == Some(vec![VAC_FINALIZER.to_owned()]) { Ok(()) } else { Err(format!("{finalizers:?}")) }
    })
    .await;
    delete(&env, "volumeattributesclass", &class).await;
    class_gone(&env, &class).await;
}
