//! The persistent volume binder end to end: the real `kcm-rs` binary
//! against kube-sim and against the testbed, volumes, claims and classes
//! made with kubectl, as a user sees them.
//!
//! kcm-rs runs `persistentvolume-binder-controller`, and the two
//! protection controllers, so that deleted claims and volumes go. Volumes are
//! cluster-wide and the testbed is shared, so each test's volumes carry a
//! label of its namespace and its claims select it, with the class `""`
//! (static binding, as upstream's e2e does), which kube-sim's provisioner
//! leaves to the binder. Where a claim names a provisioned class, the test
//! plays the external provisioner through the API, and on kube-sim holds
//! the simulated one off with `kube-sim.io/provision: pending`.

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kube::Api;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};
use serde_json::{Value, json};

use crate::common::{Env, PATIENCE, events, on_both, start_with_flags};

const CONTROLLERS: &str = "--controllers=persistentvolume-binder-controller,persistentvolumeclaim-protection-controller,\
                           persistentvolume-protection-controller";
const LABEL: &str = "kcm-rs.test/binder";
const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
const BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
const STORAGE_PROVISIONER: &str = "volume.kubernetes.io/storage-provisioner";

// === utils ===

fn claims(env: &Env) -> Api<PersistentVolumeClaim> {
    Api::namespaced(env.client.clone(), &env.ns)
}

fn volumes(env: &Env) -> Api<PersistentVolume> {
    Api::all(env.client.clone())
}

async fn apply(env: &Env, object: &Value) {
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-n", &env.ns, "-f", "-"], &object.to_string()).await;
}

/// A volume name of this test's own.
fn volume_name(env: &Env, name: &str) -> String {
    format!("{}-{name}", env.ns)
}

/// `kubectl apply`s volume `name` of `size` (hostPath, ReadWriteOnce,
/// class `""`, this test's label) with `extra` spec fields; its full name.
async fn create_volume(env: &Env, name: &str, size: &str, policy: &str, extra: Value) -> String {
    let name = volume_name(env, name);
    let mut spec = json!({"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
        "persistentVolumeReclaimPolicy": policy, "hostPath": {"path": "/tmp/kcm-rs-pv"}});
    spec.as_object_mut().expect("spec").extend(extra.as_object().cloned().unwrap_or_default());
    apply(
        env,
        &json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": {LABEL: env.ns}}, "spec": spec}),
    )
    .await;
    name
}

/// `kubectl apply`s claim `name` of `size` selecting this test's volumes,
/// with `extra` spec fields.
async fn create_claim(env: &Env, name: &str, size: &str, extra: Value) {
    let mut spec = json!({"accessModes": ["ReadWriteOnce"], "storageClassName": "",
        "selector": {"matchLabels": {LABEL: env.ns}}, "resources": {"requests": {"storage": size}}});
    spec.as_object_mut().expect("spec").extend(extra.as_object().cloned().unwrap_or_default());
    apply(env, &json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": spec}))
        .await;
}

/// `kubectl apply`s the StorageClass `<ns>-<name>` of `provisioner` and
/// binding `mode`, and the claim `data` (1Gi) of that class, held from
/// kube-sim's simulated provisioner; the class's name.
async fn create_class_and_claim(env: &Env, name: &str, provisioner: &str, mode: &str) -> String {
    let class = format!("{}-{name}", env.ns);
    apply(
        env,
        &json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": class},
            "provisioner": provisioner, "reclaimPolicy": "Delete", "volumeBindingMode": mode}),
    )
    .await;
    apply(
        env,
        &json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "annotations": {"kube-sim.io/provision": "pending"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class,
                "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
    class
}

/// Waits until claim `name` is `Bound` to volume `volume`, both ways, and
/// returns both.
async fn bound(env: &Env, name: &str, volume: &str) -> (PersistentVolumeClaim, PersistentVolume) {
    wait_for(&env.cluster, PATIENCE, &format!("claim {name} bound to {volume}"), || async {
        let claim = claims(env).get(name).await.map_err(|e| e.to_string())?;
        let pv = volumes(env).get(volume).await.map_err(|e| e.to_string())?;
        let claim_phase = claim.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
        let volume_phase = pv.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
        let named = claim.spec.as_ref().and_then(|s| s.volume_name.as_deref()) == Some(volume);
        let claim_ref = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
        let refers = claim_ref.is_some_and(|r| r.uid == claim.metadata.uid && r.name.as_deref() == Some(name));
        if claim_phase == "Bound" && volume_phase == "Bound" && named && refers {
            Ok((claim, pv))
        } else {
            Err(format!("claim {claim_phase} named {named}, volume {volume_phase} refers {refers}"))
        }
    })
    .await
}

fn annotation<'a>(meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

fn capacity(claim: &PersistentVolumeClaim) -> Option<String> {
    Some(claim.status.as_ref()?.capacity.as_ref()?.get("storage")?.0.clone())
}

async fn volume_phase(env: &Env, name: &str, phase: &str) -> PersistentVolume {
    wait_for(&env.cluster, PATIENCE, &format!("volume {name} {phase}"), || async {
        let pv = volumes(env).get(name).await.map_err(|e| e.to_string())?;
        let now = pv.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
        if now == phase { Ok(pv) } else { Err(format!("phase {now}")) }
    })
    .await
}

async fn event(env: &Env, name: &str, reason: &str) -> String {
    wait_for(&env.cluster, PATIENCE, &format!("a {reason} event about {name}"), || async {
        let found = events(env, &env.ns, name, reason).await;
        found.first().and_then(|e| e.message.clone()).ok_or_else(|| "none yet".to_owned())
    })
    .await
}

/// The sum of `metric`'s series whose labels contain `labels`, as a user
/// scraping `/metrics` reads it.
async fn scraped(env: &Env, metric: &str, labels: &[&str]) -> f64 {
    let (_, body) = env.scrape("/metrics").await;
    let ours = |line: &&str| line.starts_with(&format!("{metric}{{")) && labels.iter().all(|l| line.contains(l));
    body.lines().filter(ours).filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok()).sum()
}

/// Waits until `/metrics` counts the test's claims as `want` (unbound,
/// bound).
async fn claims_counted(env: &Env, want: (f64, f64)) {
    let namespace = format!("namespace=\"{}\"", env.ns);
    wait_for(&env.cluster, PATIENCE, &format!("the claims counted (unbound, bound) {want:?}"), || async {
        let unbound = scraped(env, "pv_collector_unbound_pvc_count", &[&namespace]).await;
        let bound = scraped(env, "pv_collector_bound_pvc_count", &[&namespace]).await;
        if (unbound, bound) == want { Ok(()) } else { Err(format!("{:?}", (unbound, bound))) }
    })
    .await;
}

// === tests ===

on_both!(
    a_claim_binds_to_the_smallest_volume_that_fits,
    a_claim_binds_to_the_volume_it_names_or_that_names_it,
    a_released_volume_is_kept_under_retain,
    a_claim_of_a_provisioned_class_waits_for_its_provisioner,
    a_claim_of_a_wait_for_first_consumer_class_waits_for_one,
    metrics_count_a_claim_unbound_then_bound,
);

/// Of three available volumes, the claim binds to the smallest that holds
/// its request; both turn `Bound`, the claim reports the volume's capacity,
/// and the annotations say the controller bound them.
async fn a_claim_binds_to_the_smallest_volume_that_fits() {
    let env = start_with_flags(&[CONTROLLERS]).await;
    create_volume(&env, "tiny", "500Mi", "Retain", json!({})).await;
    let small = create_volume(&env, "small", "2Gi", "Retain", json!({})).await;
    create_volume(&env, "big", "5Gi", "Retain", json!({})).await;
    create_claim(&env, "data", "1Gi", json!({})).await;
    let (claim, _) = bound(&env, "data", &small).await;
    assert_eq!(capacity(&claim).as_deref(), Some("2Gi"));
    assert_eq!(annotation(&claim.metadata, BIND_COMPLETED), Some("yes"));
    assert_eq!(annotation(&claim.metadata, BOUND_BY_CONTROLLER), Some("yes"));
    for other in ["tiny", "big"] {
        volume_phase(&env, &volume_name(&env, other), "Available").await;
    }
}

/// A claim naming a volume binds to it though a smaller one fits; a volume
/// naming a claim (its claimRef, by name only) gets that claim.
async fn a_claim_binds_to_the_volume_it_names_or_that_names_it() {
    let env = start_with_flags(&[CONTROLLERS]).await;
    create_volume(&env, "small", "1Gi", "Retain", json!({})).await;
    let named = create_volume(&env, "named", "5Gi", "Retain", json!({})).await;
    let reserved =
        create_volume(&env, "reserved", "3Gi", "Retain", json!({"claimRef": {"namespace": env.ns, "name": "second"}}))
            .await;
    create_claim(&env, "first", "1Gi", json!({"volumeName": named})).await;
    let (claim, volume) = bound(&env, "first", &named).await;
    assert_eq!(capacity(&claim).as_deref(), Some("5Gi"));
    assert_eq!(annotation(&volume.metadata, BOUND_BY_CONTROLLER), Some("yes"), "the volume was not pre-bound");
    assert_eq!(annotation(&claim.metadata, BOUND_BY_CONTROLLER), None, "the claim was");
    create_claim(&env, "second", "1Gi", json!({})).await;
    let (_, volume) = bound(&env, "second", &reserved).await;
    assert_eq!(annotation(&volume.metadata, BOUND_BY_CONTROLLER), None, "the volume was pre-bound");
    volume_phase(&env, &volume_name(&env, "small"), "Available").await;
}

/// Deleting a bound claim releases its volume; under `Retain` the volume
/// stays, `Released`, still naming the claim.
async fn a_released_volume_is_kept_under_retain() {
    let env = start_with_flags(&[CONTROLLERS]).await;
    let kept = create_volume(&env, "kept", "1Gi", "Retain", json!({})).await;
    create_claim(&env, "data", "1Gi", json!({})).await;
    let (claim, _) = bound(&env, "data", &kept).await;
    kubectl_ok(&env.kubeconfig, &["delete", "pvc", "data", "-n", &env.ns, "--wait=false"]).await;
    let released = volume_phase(&env, &kept, "Released").await;
    let claim_ref = released.spec.and_then(|s| s.claim_ref).expect("claimRef kept");
    assert_eq!(claim_ref.uid, claim.metadata.uid);
}

/// A claim of a class served by an external provisioner is annotated for
/// it, with upstream's event; once the provisioner's volume appears,
/// bound to the claim, the claim binds to it; deleted, the claim leaves the
/// volume `Released` for the provisioner to delete.
async fn a_claim_of_a_provisioned_class_waits_for_its_provisioner() {
    let env = start_with_flags(&[CONTROLLERS]).await;
    let provisioner = format!("{}.example.com", env.ns);
    let class = create_class_and_claim(&env, "external", &provisioner, "Immediate").await;
    let message = event(&env, "data", "ExternalProvisioning").await;
    assert!(message.contains(&format!("external provisioner '{provisioner}'")), "{message}");
    let claim = claims(&env).get("data").await.expect("claim");
    assert_eq!(annotation(&claim.metadata, STORAGE_PROVISIONER), Some(provisioner.as_str()));
    assert_eq!(claim.status.and_then(|s| s.phase).as_deref(), Some("Pending"));
    // The provisioner's part: a volume bound to the claim.
    let uid = claim.metadata.uid.clone().expect("uid");
    let volume = format!("pvc-{uid}");
    apply(
        &env,
        &json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": volume, "annotations": {"pv.kubernetes.io/provisioned-by": provisioner}},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": class,
                "persistentVolumeReclaimPolicy": "Delete", "csi": {"driver": provisioner, "volumeHandle": uid},
                "claimRef": {"namespace": env.ns, "name": "data", "uid": uid}}}),
    )
    .await;
    bound(&env, "data", &volume).await;
    let plugin = format!("plugin_name=\"{provisioner}\"");
    timed(&env, &plugin, "provision").await;
    kubectl_ok(&env.kubeconfig, &["delete", "pvc", "data", "-n", &env.ns, "--wait=false"]).await;
    volume_phase(&env, &volume, "Released").await;
    kubectl_ok(&env.kubeconfig, &["delete", "pv", &volume, "--wait=false"]).await;
    timed(&env, &plugin, "delete").await;
}

/// Waits until `/metrics` shows one `operation` of `plugin` timed end to
/// end (`volume_operation_total_seconds`).
async fn timed(env: &Env, plugin: &str, operation: &str) {
    let labels = [plugin, &format!("operation_name=\"{operation}\"")];
    wait_for(&env.cluster, PATIENCE, &format!("one {operation} timed"), || async {
        let count = scraped(env, "volume_operation_total_seconds_count", &labels).await;
        if count == 1.0 { Ok(()) } else { Err(format!("{count} timed")) }
    })
    .await;
}

/// A claim of a class that waits for its first consumer stays `Pending`,
/// with upstream's event, while no pod uses it.
async fn a_claim_of_a_wait_for_first_consumer_class_waits_for_one() {
    let env = start_with_flags(&[CONTROLLERS]).await;
    create_class_and_claim(&env, "wait", "kubernetes.io/no-provisioner", "WaitForFirstConsumer").await;
    let message = event(&env, "data", "WaitForFirstConsumer").await;
    assert_eq!(message, "waiting for first consumer to be created before binding");
    let claim = claims(&env).get("data").await.expect("claim");
    assert_eq!(claim.status.and_then(|s| s.phase).as_deref(), Some("Pending"));
}

/// A user scraping `/metrics` sees the test's claim counted unbound, then,
/// once a volume is there for it, bound, and the host-path volume counted
/// by its plugin (`pv_collector_*`, upstream's names and labels).
async fn metrics_count_a_claim_unbound_then_bound() {
    let env = start_with_flags(&[CONTROLLERS]).await;
    create_claim(&env, "data", "1Gi", json!({})).await;
    claims_counted(&env, (1.0, 0.0)).await;
    let volume = create_volume(&env, "data", "1Gi", "Retain", json!({})).await;
    bound(&env, "data", &volume).await;
    claims_counted(&env, (0.0, 1.0)).await;
    let host_path = ["plugin_name=\"kubernetes.io/host-path\"", "volume_mode=\"Filesystem\""];
    let volumes = scraped(&env, "pv_collector_total_pv_count", &host_path).await;
    assert!(volumes >= 1.0, "{volumes} host-path volumes counted");
}
