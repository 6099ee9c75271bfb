//! The simulated external provisioner: a new PersistentVolumeClaim gets a
//! volume of its own as soon as the stand-in sees it, as a cluster with a
//! default dynamic provisioner provisions one, and the claim is bound to
//! it at once, as the PV controller would:
//! - the PersistentVolume `pvc-<uid>` (the name external provisioners
//!   give), a CSI volume of the driver [`PROVISIONER`], with the claim's
//!   requested storage, access modes, volume mode and class, reclaim policy
//!   `Delete`, `pv.kubernetes.io/provisioned-by` naming the provisioner,
//!   `claimRef` naming the claim and its uid, and status `Bound`;
//! - the claim's `spec.volumeName`, the PV controller's
//!   `pv.kubernetes.io/bind-completed` and
//!   `pv.kubernetes.io/bound-by-controller` annotations (`"yes"`), and
//!   status `Bound` with the requested storage as its capacity and the
//!   requested access modes.
//!
//! Binding at once keeps claims usable when no PV controller runs; when
//! one does (kcm-rs's persistentvolume-binder-controller), it finds both
//! objects bound to each other and has nothing to write. The claim is
//! bound first: a PV controller that sees a bound claim before its volume
//! reads the volume live (kcm-rs's does), while one that saw the volume
//! first would bind the claim itself, racing with the binding here. A volume of the
//! provisioner's that the PV controller marks `Released` is deleted, as
//! an external provisioner deletes a released volume of reclaim policy
//! `Delete`.
//!
//! Not provisioned: a claim annotated `kube-sim.io/provision: "pending"`
//! (until the annotation is removed or changed), a claim created with a
//! `volumeName` (it names a volume of its own), and a claim of the class
//! `""`, which asks for a pre-created volume only and is left to the PV
//! controller.

use serde_json::{Value, json};

use super::claims::BIND_COMPLETED_ANNOTATION;
use crate::object::is_terminating;
use crate::resources::ResourceType;
use crate::store::{Store, Stored, TypeKey};
use crate::strategy::mark_for_deletion;

/// Annotation: `"pending"` keeps a claim unbound.
pub const PROVISION_ANNOTATION: &str = "kube-sim.io/provision";
/// The provisioner's name, and the CSI driver of its volumes.
pub const PROVISIONER: &str = "kube-sim.io/provisioner";
/// The annotation the PV controller sets on claims it bound itself.
const BOUND_BY_CONTROLLER_ANNOTATION: &str = "pv.kubernetes.io/bound-by-controller";
/// The annotation naming the provisioner of a volume.
const PROVISIONED_BY_ANNOTATION: &str = "pv.kubernetes.io/provisioned-by";
/// The beta class annotation, read before `storageClassName`.
const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// Provisions and binds the claim `stored` (under `claim_key`) if it waits
/// for a volume and is not held; the volume goes under `volume_key`.
pub(super) fn provision(store: &Store, claim_key: &TypeKey, volume_key: &TypeKey, stored: &Stored) {
    let claim = stored.value();
    if !waits_for_volume(&claim) {
        return;
    }
    let namespace = claim.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("");
    let name = claim.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
    // A claim changed meanwhile is bound as it is now, if it still waits.
    let mut binds = false;
    let bound = store.update::<()>(claim_key, namespace, name, |s| {
        let mut claim = s.value();
        if !waits_for_volume(&claim) {
            return Ok(None);
        }
        binds = true;
        let uid = claim.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("").to_owned();
        claim["spec"]["volumeName"] = json!(format!("pvc-{uid}"));
        if !claim["metadata"].get("annotations").is_some_and(Value::is_object) {
            claim["metadata"]["annotations"] = json!({});
        }
        claim["metadata"]["annotations"][BIND_COMPLETED_ANNOTATION] = json!("yes");
        claim["metadata"]["annotations"][BOUND_BY_CONTROLLER_ANNOTATION] = json!("yes");
        let storage = claim.pointer("/spec/resources/requests/storage").cloned().unwrap_or(Value::Null);
        let modes = claim.pointer("/spec/accessModes").cloned().unwrap_or_else(|| json!([]));
        claim["status"] = json!({"phase": "Bound", "accessModes": modes, "capacity": {"storage": storage}});
        Ok(Some(claim))
    });
    if let (Ok(bound), true) = (&bound, binds) {
        let volume = volume_for(&bound.value());
        let name = volume.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_owned();
        if store.get(volume_key, "", &name).is_none() {
            let _ = store.create(volume_key, "", &name, volume);
        }
    }
}

/// The volume provisioned for a claim just bound, bound to it.
fn volume_for(claim: &Value) -> Value {
    let uid = claim.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("");
    let name = format!("pvc-{uid}");
    let spec = |pointer: &str| claim.pointer(pointer).cloned();
    let class = claim_class(claim).unwrap_or("");
    json!({
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": name,
            "annotations": {PROVISIONED_BY_ANNOTATION: PROVISIONER},
            "finalizers": ["kubernetes.io/pv-protection"],
        },
        "spec": {
            "capacity": {"storage": spec("/spec/resources/requests/storage").unwrap_or(Value::Null)},
            "accessModes": spec("/spec/accessModes").unwrap_or_else(|| json!([])),
            "volumeMode": spec("/spec/volumeMode").unwrap_or_else(|| json!("Filesystem")),
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": class,
            "csi": {"driver": PROVISIONER, "volumeHandle": name},
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": spec("/metadata/namespace"),
                "name": spec("/metadata/name"),
                "uid": uid,
            },
        },
        "status": {"phase": "Bound"},
    })
}

/// Deletes the volume `stored` (of type `rt`, under `volume_key`) if the
/// provisioner made it and the PV controller released it under reclaim
/// policy `Delete`; its finalizers, if any, hold it until removed.
pub(super) fn reclaim(store: &Store, rt: &ResourceType, volume_key: &TypeKey, stored: &Stored) {
    let volume = stored.value();
    let ours = volume.pointer(&format!("/metadata/annotations/{}", PROVISIONED_BY_ANNOTATION.replace('/', "~1")))
        == Some(&json!(PROVISIONER));
    let released = volume.pointer("/status/phase") == Some(&json!("Released"));
    let delete = volume.pointer("/spec/persistentVolumeReclaimPolicy") == Some(&json!("Delete"));
    if !(ours && released && delete) || is_terminating(&volume) {
        return;
    }
    let name = volume.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
    match mark_for_deletion(rt, &volume, None, None) {
        None => {
            let _ = store.delete(volume_key, "", name, Some(stored.rv));
        }
        Some(marked) => {
            let expected = stored.rv;
            let _ = store.update::<()>(volume_key, "", name, |now| Ok((now.rv == expected).then_some(marked)));
        }
    }
}

/// The claim's class: the beta annotation, else `storageClassName`.
fn claim_class(claim: &Value) -> Option<&str> {
    claim
        .pointer(&format!("/metadata/annotations/{}", BETA_CLASS_ANNOTATION.replace('/', "~1")))
        .or_else(|| claim.pointer("/spec/storageClassName"))
        .and_then(Value::as_str)
}

/// Whether the claim has no volume yet, is not being deleted, is not held
/// Pending by its annotation, and does not ask for the class `""`.
fn waits_for_volume(claim: &Value) -> bool {
    let unnamed = claim.pointer("/spec/volumeName").and_then(Value::as_str).is_none_or(str::is_empty);
    let held =
        claim.pointer("/metadata/annotations").and_then(|a| a.get(PROVISION_ANNOTATION)) == Some(&json!("pending"));
    unnamed && !held && !is_terminating(claim) && claim_class(claim) != Some("")
}
