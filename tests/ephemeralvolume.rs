//! The ephemeral volume controller end to end: the real `kcm-rs` binary
//! against kube-sim and against the testbed, pods and claims made and
//! deleted with kubectl, as a user sees them.
//!
//! kcm-rs runs `ephemeral-volume-controller`, with the garbage collector
//! (which deletes a pod's claim after the pod) and the PVC protection
//! controller (which lets a deleted claim go once no scheduled pod uses
//! it: the API server's StorageObjectInUseProtection admission gives every
//! claim its finalizer). No PV controller runs: claims stay Pending, which
//! changes nothing here. Pods are kept off every node with a scheduler
//! name no scheduler answers to, or name a node (`spec.nodeName`) as the
//! scheduler would have.

use k8s_openapi::api::core::v1::{Event, PersistentVolumeClaim, Pod};
use kube::Api;
use kube::api::ListParams;
use kube_sim::testing::{kubectl_ok, wait_for};
use serde_json::{Value, json};

use crate::common::storage::{apply, claim_gone, claims};
use crate::common::{Env, PATIENCE, on_both, start_provisioned};

const CONTROLLERS: &str = "--controllers=ephemeral-volume-controller,garbage-collector-controller,persistentvolumeclaim-protection-controller";

// === utils ===

async fn env() -> Env {
    start_provisioned(&[CONTROLLERS]).await
}

/// The claim spec of the tests' templates and claims.
fn claim_spec() -> Value {
    json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}})
}

/// `kubectl apply`s pod `name` with the generic ephemeral volume
/// `scratch` (template labelled `app: <name>`), on `node-1` or, when
/// `scheduled` is false, left unscheduled.
async fn create_pod(env: &Env, name: &str, scheduled: bool) {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "busybox",
            "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}]}],
            "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
                "metadata": {"labels": {"app": name}}, "spec": claim_spec()}}}]}});
    if scheduled {
        pod["spec"]["nodeName"] = json!("node-1");
    } else {
        pod["spec"]["schedulerName"] = json!("no-such-scheduler");
    }
    apply(env, &pod).await;
}

/// The claim `name`, once it exists and is owned by pod `pod`.
async fn owned_claim(env: &Env, name: &str, pod: &str) -> PersistentVolumeClaim {
    let uid = Api::<Pod>::namespaced(env.client.clone(), &env.ns).get(pod).await.expect("the pod").metadata.uid;
    wait_for(&env.cluster, PATIENCE, &format!("claim {name} owned by pod {pod}"), || async {
        let claim = claims(env).get_opt(name).await.map_err(|e| e.to_string())?.ok_or("no claim yet")?;
        let owners = claim.metadata.owner_references.clone().unwrap_or_default();
        match owners.as_slice() {
            [owner] if owner.uid == *uid.as_deref().unwrap_or_default() && owner.kind == "Pod" => Ok(claim),
            _ => Err(format!("owners {owners:?}")),
        }
    })
    .await
}

// === tests ===

on_both!(
    a_pods_ephemeral_volume_gets_its_claim_which_goes_with_the_pod,
    a_claim_of_that_name_not_the_pods_is_left_alone_and_reported,
    a_claim_deleted_under_its_pod_is_made_again,
);

/// A pod's generic ephemeral volume `scratch` gets the claim
/// `<pod>-scratch`, from its template, controlled by the pod; deleting the
/// pod deletes the claim (the garbage collector, then the PVC protection
/// controller once the pod is gone).
async fn a_pods_ephemeral_volume_gets_its_claim_which_goes_with_the_pod() {
    let env = env().await;
    create_pod(&env, "app", true).await;
    let claim = owned_claim(&env, "app-scratch", "app").await;
    let owner = &claim.metadata.owner_references.as_ref().expect("owners")[0];
    assert_eq!((owner.api_version.as_str(), owner.name.as_str()), ("v1", "app"));
    assert_eq!((owner.controller, owner.block_owner_deletion), (Some(true), Some(true)));
    let labels = claim.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("app").map(String::as_str), Some("app"), "{labels:?}");
    let spec = claim.spec.expect("spec");
    assert_eq!(spec.access_modes, Some(vec!["ReadWriteOnce".to_owned()]));
    let storage = spec.resources.and_then(|r| r.requests).and_then(|r| r.get("storage").cloned());
    assert_eq!(storage.map(|q| q.0), Some("1Gi".to_owned()));
    kubectl_ok(&env.kubeconfig, &["delete", "pod", "app", "-n", &env.ns, "--grace-period=0", "--force"]).await;
    claim_gone(&env, "app-scratch").await;
}

/// A claim named `<pod>-<volume>` made before the pod, not by it, is left
/// as it is; the pod gets upstream's `FailedBinding` warning.
async fn a_claim_of_that_name_not_the_pods_is_left_alone_and_reported() {
    let env = env().await;
    apply(
        &env,
        &json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "app-scratch"},
        "spec": claim_spec()}),
    )
    .await;
    create_pod(&env, "app", false).await;
    let ns = &env.ns;
    let expected =
        format!("ephemeral volume scratch: PVC {ns}/app-scratch was not created for pod {ns}/app (pod is not owner)");
    let events: Api<Event> = Api::namespaced(env.client.clone(), ns);
    let event = wait_for(&env.cluster, PATIENCE, "the pod's FailedBinding event", || async {
        let list = events.list(&ListParams::default()).await.map_err(|e| e.to_string())?;
        let found = list
            .items
            .into_iter()
            .find(|e| e.reason.as_deref() == Some("FailedBinding") && e.involved_object.name.as_deref() == Some("app"));
        found.ok_or_else(|| "no FailedBinding event yet".to_owned())
    })
    .await;
    assert_eq!(event.message.as_deref(), Some(expected.as_str()));
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.involved_object.kind.as_deref(), Some("Pod"));
    assert_eq!(event.source.and_then(|s| s.component).as_deref(), Some("ephemeral_volume"));
    let claim = claims(&env).get("app-scratch").await.expect("the claim");
    assert_eq!(claim.metadata.owner_references, None, "left alone");
}

/// A claim deleted while its pod is not scheduled (no pod keeps it, so
/// the PVC protection controller lets it go) is made again for the pod.
async fn a_claim_deleted_under_its_pod_is_made_again() {
    let env = env().await;
    create_pod(&env, "app", false).await;
    let first = owned_claim(&env, "app-scratch", "app").await.metadata.uid;
    kubectl_ok(&env.kubeconfig, &["delete", "pvc", "app-scratch", "-n", &env.ns, "--wait=false"]).await;
    wait_for(&env.cluster, PATIENCE, "claim app-scratch made again", || async {
        let claim = claims(&env).get_opt("app-scratch").await.map_err(|e| e.to_string())?;
        match claim.map(|c| c.metadata.uid) {
            Some(uid) if uid != first => Ok(()),
            other => Err(format!("claim {other:?}, the first was {first:?}")),
        }
    })
    .await;
    owned_claim(&env, "app-scratch", "app").await;
}
