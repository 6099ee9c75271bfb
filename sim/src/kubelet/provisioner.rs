//! The simulated volume provisioner and PV controller: a new
//! PersistentVolumeClaim is bound as soon as the stand-in sees it, as a
//! cluster with a default dynamic provisioner binds one: `spec.volumeName`
//! `pvc-<uid>` (the name external provisioners give the volume), the PV
//! controller's `pv.kubernetes.io/bind-completed` and
//! `pv.kubernetes.io/bound-by-controller` annotations (`"yes"`), and status
//! `Bound` with the requested storage as its capacity and the requested
//! access modes.
//!
//! A claim annotated `kube-sim.io/provision: "pending"` is left Pending
//! (its volume never comes) until the annotation is removed or changed. A
//! claim created with a `volumeName` already set names a volume kube-sim
//! does not have, and stays Pending as it would without that volume. No
//! PersistentVolume objects exist: the claim's volume name names none.

use serde_json::{Value, json};

use super::claims::BIND_COMPLETED_ANNOTATION;
use crate::object::is_terminating;
use crate::store::{Store, Stored, TypeKey};

/// Annotation: `"pending"` keeps a claim unbound.
pub const PROVISION_ANNOTATION: &str = "kube-sim.io/provision";
/// The annotation the PV controller sets on claims it bound itself.
const BOUND_BY_CONTROLLER_ANNOTATION: &str = "pv.kubernetes.io/bound-by-controller";

/// Binds the claim `stored` (under `claim_key`) if it waits for a volume
/// and is not held.
pub(super) fn provision(store: &Store, claim_key: &TypeKey, stored: &Stored) {
    let claim = stored.value();
    if !waits_for_volume(&claim) {
        return;
    }
    let namespace = claim.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("");
    let name = claim.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
    // A claim changed meanwhile is bound as it is now, if it still waits.
    let _ = store.update::<()>(claim_key, namespace, name, |s| {
        let mut claim = s.value();
        if !waits_for_volume(&claim) {
            return Ok(None);
        }
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
}

/// Whether the claim has no volume yet, is not being deleted, and is not
/// held Pending by its annotation.
fn waits_for_volume(claim: &Value) -> bool {
    let unnamed = claim.pointer("/spec/volumeName").and_then(Value::as_str).is_none_or(str::is_empty);
    let held =
        claim.pointer("/metadata/annotations").and_then(|a| a.get(PROVISION_ANNOTATION)) == Some(&json!("pending"));
    unnamed && !held && !is_terminating(claim)
}
