//! The StorageObjectInUseProtection plugin: every new
//! PersistentVolumeClaim gets the `kubernetes.io/pvc-protection`
//! finalizer, so that deleting it leaves it Terminating until the
//! controller manager's pvc-protection controller sees no pod using it
//! and removes the finalizer; every new PersistentVolume gets
//! `kubernetes.io/pv-protection`, which the pv-protection controller
//! removes once the volume is not bound; every new VolumeAttributesClass
//! gets `kubernetes.io/vac-protection` (the API server's plugin does so
//! while the `VolumeAttributesClass` gate is on, as it is from 1.34), which
//! the volumeattributesclass-protection controller removes once no claim
//! or volume refers to the class.

use serde_json::{Value, json};

use crate::object::metadata_mut;

/// The finalizer the plugin adds to claims.
pub const PVC_PROTECTION_FINALIZER: &str = "kubernetes.io/pvc-protection";

/// The finalizer the plugin adds to volumes.
pub const PV_PROTECTION_FINALIZER: &str = "kubernetes.io/pv-protection";

/// The finalizer the plugin adds to VolumeAttributesClasses.
pub const VAC_PROTECTION_FINALIZER: &str = "kubernetes.io/vac-protection";

/// Adds the finalizer to a claim being created, once.
pub(super) fn admit_claim(claim: &mut Value) {
    add_finalizer(claim, PVC_PROTECTION_FINALIZER);
}

/// Adds the finalizer to a volume being created, once.
pub(super) fn admit_volume(volume: &mut Value) {
    add_finalizer(volume, PV_PROTECTION_FINALIZER);
}

/// Adds the finalizer to a VolumeAttributesClass being created, once.
pub(super) fn admit_volume_attributes_class(class: &mut Value) {
    add_finalizer(class, VAC_PROTECTION_FINALIZER);
}

fn add_finalizer(object: &mut Value, finalizer: &str) {
    let metadata = metadata_mut(object);
    let finalizers = metadata.entry("finalizers").or_insert_with(|| json!([]));
    if !finalizers.is_array() {
        *finalizers = json!([]);
    }
    if let Some(list) = finalizers.as_array_mut()
        && !list.iter().any(|f| f == finalizer)
    {
        list.push(json!(finalizer));
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

    #[test]
    fn new_volumes_get_theirs() {
        let mut volume = json!({"metadata": {"name": "pv1"}});
        admit_volume(&mut volume);
        admit_volume(&mut volume);
        assert_eq!(volume["metadata"]["finalizers"], json!([PV_PROTECTION_FINALIZER]));
        let mut class = json!({"metadata": {"name": "gold"}});
        admit_volume_attributes_class(&mut class);
        admit_volume_attributes_class(&mut class);
        assert_eq!(class["metadata"]["finalizers"], json!([VAC_PROTECTION_FINALIZER]));
    }
}
