//! The PVC and PV protection controllers end to end: the real `kcm-rs`
//! binary against kube-sim and against the testbed, claims, volumes and
//! pods made and deleted with kubectl, as a user sees them.
//!
//! kcm-rs runs `persistentvolumeclaim-protection-controller` and
//! `persistentvolume-protection-controller` only. The API server's
//! StorageObjectInUseProtection admission gives every new claim and volume
//! its finalizer. Pods name a node (`spec.nodeName`), as the scheduler
//! would have: on the testbed no kubelet runs them and they stay Pending,
//! which counts as using a claim as much as Running does. No PV controller
//! runs either: the test plays its part and writes a volume's or a claim's
//! phase through the status subresource (`kubectl patch
//! --subresource=status`). Whether a claim or volume is kept is checked
//! after the controller's one worker handled a later deletion (a second,
//! unused one, gone), never after a wait of some length.

use k8s_openapi::api::core::v1::PersistentVolume;
use kube::Api;
use kube_sim::testing::{kubectl_ok, wait_for};
use serde_json::json;

use crate::common::storage::{apply, claim_gone, claims, delete};
use crate::common::{Env, PATIENCE, on_both, start_provisioned};

const CONTROLLERS: &str =
    "--controllers=persistentvolumeclaim-protection-controller,persistentvolume-protection-controller";
const PVC_FINALIZER: &str = "kubernetes.io/pvc-protection";
const PV_FINALIZER: &str = "kubernetes.io/pv-protection";

// === utils ===

async fn env() -> Env {
    start_provisioned(&[CONTROLLERS]).await
}

fn volumes(env: &Env) -> Api<PersistentVolume> {
    Api::all(env.client.clone())
}

/// `kubectl apply`s claim `name` (1Gi, ReadWriteOnce).
async fn create_claim(env: &Env, name: &str) {
    apply(
        env,
        &json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
}

/// `kubectl apply`s pod `name` on `node-1`, mounting claim `claim`.
async fn create_pod(env: &Env, name: &str, claim: &str) {
    apply(
        env,
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "busybox",
            "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}}),
    )
    .await;
}

/// A volume name of this test's own: volumes are cluster-wide, and the
/// testbed is shared.
fn volume_name(env: &Env, name: &str) -> String {
    format!("{}-{name}", env.ns)
}

/// `kubectl apply`s volume `name` (1Gi hostPath) and returns its full name.
async fn create_volume(env: &Env, name: &str) -> String {
    let name = volume_name(env, name);
    apply(
        env,
        &json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": "/tmp/kcm-rs-pv"}}}),
    )
    .await;
    name
}

/// Writes `phase` into the status of `kind` `name`, as a PV controller would.
async fn set_phase(env: &Env, kind: &str, name: &str, phase: &str) {
    let patch = json!({"status": {"phase": phase}}).to_string();
    kubectl_ok(
        &env.kubeconfig,
        &["patch", kind, name, "-n", &env.ns, "--subresource=status", "--type=merge", "-p", &patch],
    )
    .await;
}

async fn volume_gone(env: &Env, name: &str) {
    wait_for(&env.cluster, PATIENCE, &format!("volume {name} deleted"), || async {
        match volumes(env).get_opt(name).await.map_err(|e| e.to_string())? {
            None => Ok(()),
            Some(v) => Err(format!("still there: {:?}, {:?}", v.metadata.deletion_timestamp, v.metadata.finalizers)),
        }
    })
    .await;
}

/// The claim's `Unused` condition status, waited for until it is `status`.
async fn unused_condition(env: &Env, name: &str, status: &str) {
    wait_for(&env.cluster, PATIENCE, &format!("claim {name} Unused={status}"), || async {
        let claim = claims(env).get(name).await.map_err(|e| e.to_string())?;
        let conditions = claim.status.and_then(|s| s.conditions).unwrap_or_default();
        let unused = conditions.iter().find(|c| c.type_ == "Unused");
        match unused {
            Some(c) if c.status == status => {
                let expected = if status == "True" { "NoPodsUsingPVC" } else { "PodUsingPVC" };
                assert_eq!(c.reason.as_deref(), Some(expected));
                assert!(c.last_transition_time.is_some(), "{c:?}");
                Ok(())
            }
            _ => Err(format!("conditions {conditions:?}")),
        }
    })
    .await;
}

// === tests ===

on_both!(
    an_unused_claim_goes_at_once_and_a_used_one_when_its_pod_is_deleted,
    a_bound_claim_says_whether_a_pod_uses_it,
    a_volume_goes_once_it_is_not_bound,
    a_finalizer_taken_off_is_put_back,
);

/// A claim no pod uses is deleted at once (its finalizer removed); a claim
/// a running pod mounts stays Terminating, with its finalizer, until the
/// pod is deleted, then goes.
async fn an_unused_claim_goes_at_once_and_a_used_one_when_its_pod_is_deleted() {
    let env = env().await;
    for name in ["used", "free"] {
        create_claim(&env, name).await;
    }
    create_pod(&env, "app", "used").await;
    delete(&env, "pvc", "used").await;
    delete(&env, "pvc", "free").await;
    claim_gone(&env, "free").await;
    // The worker took "used" before "free": it is kept.
    let used = claims(&env).get("used").await.expect("the used claim");
    assert!(used.metadata.deletion_timestamp.is_some(), "Terminating");
    assert_eq!(used.metadata.finalizers, Some(vec![PVC_FINALIZER.to_owned()]));
    kubectl_ok(&env.kubeconfig, &["delete", "pod", "app", "-n", &env.ns, "--grace-period=0", "--force"]).await;
    claim_gone(&env, "used").await;
}

/// Under PersistentVolumeClaimUnusedSinceTime (on in 1.37) a bound claim
/// carries `Unused=True` while no pod uses it, and `Unused=False` once one
/// does.
async fn a_bound_claim_says_whether_a_pod_uses_it() {
    let env = env().await;
    create_claim(&env, "data").await;
    // kube-sim's provisioner binds it; on the testbed the test does.
    set_phase(&env, "pvc", "data", "Bound").await;
    unused_condition(&env, "data", "True").await;
    create_pod(&env, "app", "data").await;
    unused_condition(&env, "data", "False").await;
    kubectl_ok(&env.kubeconfig, &["delete", "pod", "app", "-n", &env.ns, "--grace-period=0", "--force"]).await;
    unused_condition(&env, "data", "True").await;
}

/// A volume not bound is deleted at once; a bound one stays Terminating
/// until its phase says it was released.
async fn a_volume_goes_once_it_is_not_bound() {
    let env = env().await;
    let bound = create_volume(&env, "bound").await;
    let free = create_volume(&env, "free").await;
    set_phase(&env, "pv", &bound, "Bound").await;
    delete(&env, "pv", &bound).await;
    delete(&env, "pv", &free).await;
    volume_gone(&env, &free).await;
    let kept = volumes(&env).get(&bound).await.expect("the bound volume");
    assert!(kept.metadata.deletion_timestamp.is_some(), "Terminating");
    assert_eq!(kept.metadata.finalizers, Some(vec![PV_FINALIZER.to_owned()]));
    set_phase(&env, "pv", &bound, "Released").await;
    volume_gone(&env, &bound).await;
}

/// A claim or volume whose protection finalizer was taken off gets it
/// back (upstream adds it to objects made before the admission plugin).
async fn a_finalizer_taken_off_is_put_back() {
    let env = env().await;
    create_claim(&env, "data").await;
    let volume = create_volume(&env, "spare").await;
    let clear = json!({"metadata": {"finalizers": null}}).to_string();
    kubectl_ok(&env.kubeconfig, &["patch", "pvc", "data", "-n", &env.ns, "--type=merge", "-p", &clear]).await;
    kubectl_ok(&env.kubeconfig, &["patch", "pv", &volume, "--type=merge", "-p", &clear]).await;
    wait_for(&env.cluster, PATIENCE, "both finalizers back", || async {
        let claim = claims(&env).get("data").await.map_err(|e| e.to_string())?.metadata.finalizers;
        let pv = volumes(&env).get(&volume).await.map_err(|e| e.to_string())?.metadata.finalizers;
        if claim == Some(vec![PVC_FINALIZER.to_owned()]) && pv == Some(vec![PV_FINALIZER.to_owned()]) {
            Ok(())
        } else {
            Err(format!("claim {claim:?}, volume {pv:?}"))
        }
    })
    .await;
    delete(&env, "pv", &volume).await;
    volume_gone(&env, &volume).await;
}
