//! The StorageObjectInUseProtection plugin: every new
//! PersistentVolumeClaim gets the `kubernetes.io/pvc-protection`
//! finalizer, so that deleting it leaves it Terminating until the
//! controller manager's pvc-protection controller sees no pod using it
//! and removes the finalizer. (Its PersistentVolume half has nothing to
//! act on: kube-sim serves no PersistentVolumes.)

use serde_json::{Value, json};

use crate::object::metadata_mut;

/// The finalizer the plugin adds to claims.
pub const PVC_PROTECTION_FINALIZER: &str = "kubernetes.io/pvc-protection";

/// Adds the finalizer to a claim being created, once.
pub(super) fn admit_claim(claim: &mut Value) {
    let metadata = metadata_mut(claim);
    let finalizers = metadata.entry("finalizers").or_insert_with(|| json!([]));
    if !finalizers.is_array() {
        *finalizers = json!([]);
    }
    if let Some(list) = finalizers.as_array_mut()
        && !list.iter().any(|f| f == PVC_PROTECTION_FINALIZER)
    {
        list.push(json!(PVC_PROTECTION_FINALIZER));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_claims_get_the_finalizer_once_beside_others() {
        let mut claim = json!({"metadata": {"name": "data", "finalizers": ["example.com/keep"]}});
        admit_claim(&mut claim);
        admit_claim(&mut claim);
        assert_eq!(claim["metadata"]["finalizers"], json!(["example.com/keep", PVC_PROTECTION_FINALIZER]));
        let mut bare = json!({"metadata": {"name": "data"}});
        admit_claim(&mut bare);
        assert_eq!(bare["metadata"]["finalizers"], json!([PVC_PROTECTION_FINALIZER]));
    }
}
