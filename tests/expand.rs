//! The volume expander end to end: the real `kcm-rs` binary against
//! kube-sim and against the testbed, volumes, claims and classes made
//! with kubectl, a claim's request raised with `kubectl patch`, as a user
//! sees it.
//!
//! kcm-rs runs `persistentvolume-expander-controller` with the binder (each
//! claim names its volume, which names the claim back, so they bind at
//! once) and the two protection controllers, so that deleted claims go. A
//! claim may grow only when bound and of a class that allows expansion
//! (kube-apiserver's PersistentVolumeClaimResize admission), so each test
//! makes its own such class; volumes are cluster-wide and carry the test's
//! namespace in their names.

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::Api;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};
use serde_json::{Value, json};

use crate::common::{Env, PATIENCE, events, on_both, start_with_flags};

const CONTROLLERS: &str = "--controllers=persistentvolume-expander-controller,persistentvolume-binder-controller,\
                           persistentvolumeclaim-protection-controller,persistentvolume-protection-controller";
const RESIZER: &str = "volume.kubernetes.io/storage-resizer";
const EXTERNAL_EXPANDING: &str = "ExternalExpanding";

// === utils ===

async fn apply(env: &Env, object: &Value) {
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-n", &env.ns, "-f", "-"], &object.to_string()).await;
}

/// `kubectl apply`s the test's class `<ns>-expandable`, which allows
/// expansion; its name.
async fn expandable_class(env: &Env) -> String {
    let class = format!("{}-expandable", env.ns);
    apply(
        env,
        &json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": class},
            "provisioner": "kubernetes.io/no-provisioner", "allowVolumeExpansion": true}),
    )
    .await;
    class
}

/// `kubectl apply`s claim `name` (1Gi, of `class`) and the volume
/// `<ns>-<name>` (1Gi, `source`, Retain) it names and that names it; waits
/// until the binder has bound them.
async fn bound_claim(env: &Env, class: &str, name: &str, source: Value) {
    let volume = format!("{}-{name}", env.ns);
    let mut spec = json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": class,
        "persistentVolumeReclaimPolicy": "Retain", "claimRef": {"namespace": env.ns, "name": name}});
    spec.as_object_mut().expect("spec").extend(source.as_object().cloned().unwrap_or_default());
    apply(env, &json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": volume}, "spec": spec}))
        .await;
    apply(
        env,
        &json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class, "volumeName": volume,
                "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
    wait_for(&env.cluster, PATIENCE, &format!("claim {name} bound"), || async {
        let claim = claim(env, name).await?;
        let phase = claim.status.and_then(|s| s.phase).unwrap_or_default();
        if phase == "Bound" { Ok(()) } else { Err(format!("phase {phase}")) }
    })
    .await;
}

async fn claim(env: &Env, name: &str) -> Result<PersistentVolumeClaim, String> {
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(env.client.clone(), &env.ns);
    claims.get(name).await.map_err(|e| e.to_string())
}

fn resizer(claim: &PersistentVolumeClaim) -> Option<String> {
    claim.metadata.annotations.as_ref()?.get(RESIZER).cloned()
}

/// Raises claim `name`'s request to 2Gi, as a user does.
async fn grow(env: &Env, name: &str) {
    let patch = json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}}).to_string();
    kubectl_ok(&env.kubeconfig, &["patch", "pvc", name, "-n", &env.ns, "--type=merge", "-p", &patch]).await;
}

/// The messages of the `ExternalExpanding` events about claim `name`, once
/// there is one.
async fn expanding(env: &Env, name: &str) -> Vec<String> {
    wait_for(&env.cluster, PATIENCE, &format!("an ExternalExpanding event about {name}"), || async {
        let found = events(env, &env.ns, name, EXTERNAL_EXPANDING).await;
        let messages: Vec<String> = found.into_iter().filter_map(|e| e.message).collect();
        if messages.is_empty() { Err("none yet".to_owned()) } else { Ok(messages) }
    })
    .await
}

/// Waits until claim `name` names its resizer; which.
async fn resizer_named(env: &Env, name: &str) -> String {
    wait_for(&env.cluster, PATIENCE, &format!("claim {name}'s resizer"), || async {
        resizer(&claim(env, name).await?).ok_or_else(|| "no resizer yet".to_owned())
    })
    .await
}

fn ebs(volume_id: &str) -> Value {
    json!({"awsElasticBlockStore": {"volumeID": volume_id, "fsType": "ext4"}})
}

// === tests ===

on_both!(
    a_grown_csi_claim_waits_for_an_external_controller,
    a_grown_claim_on_an_in_tree_volume_names_its_csi_resizer,
    a_claim_not_grown_gets_nothing,
);

/// A bound claim on a CSI volume whose request is raised gets upstream's
/// `ExternalExpanding` event, and no resizer annotation: the CSI driver's
/// external resizer needs none.
async fn a_grown_csi_claim_waits_for_an_external_controller() {
    let env = start_with_flags(&[CONTROLLERS]).await;
    let class = expandable_class(&env).await;
    let driver = format!("{}.csi.example.com", env.ns);
    bound_claim(&env, &class, "data", json!({"csi": {"driver": driver, "volumeHandle": "data"}})).await;
    grow(&env, "data").await;
    let messages = expanding(&env, "data").await;
    assert_eq!(messages, ["waiting for an external controller to expand this PVC"]);
    assert_eq!(resizer(&claim(&env, "data").await.expect("claim")), None);
}

/// A bound claim on an `awsElasticBlockStore` volume (an in-tree plugin
/// migrated to CSI) whose request is raised is handed to the EBS CSI
/// driver's resizer: the annotation names it, and the event says why.
async fn a_grown_claim_on_an_in_tree_volume_names_its_csi_resizer() {
    let env = start_with_flags(&[CONTROLLERS]).await;
    let class = expandable_class(&env).await;
    bound_claim(&env, &class, "data", ebs("vol-0123456789abcdef0")).await;
    grow(&env, "data").await;
    assert_eq!(resizer_named(&env, "data").await, "ebs.csi.aws.com");
    let messages = expanding(&env, "data").await;
    assert_eq!(
        messages,
        ["CSI migration enabled for kubernetes.io/aws-ebs; waiting for external resizer to expand the pvc"]
    );
    let claim = claim(&env, "data").await.expect("claim");
    let request = claim.spec.and_then(|s| s.resources).and_then(|r| r.requests).and_then(|r| r.get("storage").cloned());
    assert_eq!(request.map(|q| q.0).as_deref(), Some("2Gi"), "the status patch left the spec alone");
}

/// A bound claim whose request is not raised (only relabelled) gets no
/// event and no annotation, while a claim beside it that grew, synced
/// after it, does.
async fn a_claim_not_grown_gets_nothing() {
    let env = start_with_flags(&[CONTROLLERS]).await;
    let class = expandable_class(&env).await;
    bound_claim(&env, &class, "still", ebs("vol-still")).await;
    kubectl_ok(&env.kubeconfig, &["label", "pvc", "still", "-n", &env.ns, "touched=yes"]).await;
    bound_claim(&env, &class, "grown", ebs("vol-grown")).await;
    grow(&env, "grown").await;
    assert_eq!(resizer_named(&env, "grown").await, "ebs.csi.aws.com");
    assert_eq!(resizer(&claim(&env, "still").await.expect("claim")), None);
    assert!(events(&env, &env.ns, "still", EXTERNAL_EXPANDING).await.is_empty());
}
