//! What the scheduler's VolumeBinding plugin checks before it looks at any
//! node (its PreFilter): every PersistentVolumeClaim a pod's volumes name
//! must exist, not be being deleted, and be fully bound (a volume name and
//! the PV controller's `pv.kubernetes.io/bind-completed` annotation), else
//! the pod is unschedulable with upstream's message. Claims kube-sim
//! serves have no storage class to delay binding, so an unbound claim is
//! always an immediate one. Ephemeral volumes' claims are not looked at.

use serde_json::Value;

use crate::object::is_terminating;
use crate::store::{Store, TypeKey};

/// The annotation the PV controller sets once it has bound a claim.
pub(super) const BIND_COMPLETED_ANNOTATION: &str = "pv.kubernetes.io/bind-completed";

/// Why the claims of `pod` (in `namespace`) keep it from being scheduled.
pub(super) fn claims_blocking(store: &Store, claim_key: &TypeKey, pod: &Value, namespace: &str) -> Option<String> {
    let volumes = pod.pointer("/spec/volumes").and_then(Value::as_array).into_iter().flatten();
    let mut unbound = false;
    for name in volumes.filter_map(|v| v.pointer("/persistentVolumeClaim/claimName").and_then(Value::as_str)) {
        let Some(stored) = store.get(claim_key, namespace, name) else {
            return Some(format!("persistentvolumeclaim \"{name}\" not found"));
        };
        let claim = stored.value();
        if is_terminating(&claim) {
            return Some(format!("persistentvolumeclaim \"{name}\" is being deleted"));
        }
        let named = claim.pointer("/spec/volumeName").and_then(Value::as_str).is_some_and(|v| !v.is_empty());
        let completed = claim.pointer("/metadata/annotations").and_then(|a| a.get(BIND_COMPLETED_ANNOTATION)).is_some();
        unbound |= !(named && completed);
    }
    unbound.then(|| "pod has unbound immediate PersistentVolumeClaims".to_owned())
}
