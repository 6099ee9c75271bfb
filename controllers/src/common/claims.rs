//! The claims a pod refers to (upstream `pkg/controller/volume/common`'s
//! pod index by claim, and `ephemeral.VolumeClaimName`), shared by the
//! storage controllers that look pods up by claim.

use kcm_objects::Pod;

/// The name of the shared pod informer's index by claim key (upstream
/// `common.PodPVCIndex`).
pub const POD_PVC_INDEX: &str = "pod-pvc-index";

/// The PVC keys (`namespace/name`) a pod refers to, ephemeral volumes'
/// claims included: the index function of [`POD_PVC_INDEX`] (upstream
/// `common.PodPVCIndexFunc`).
pub fn claim_keys(pod: &Pod) -> Vec<String> {
    let ns = &pod.metadata.namespace;
    (pod.spec.claim_volumes.iter().map(|v| format!("{ns}/{}", v.claim_name)))
        .chain(pod.spec.ephemeral_volumes.iter().map(|v| format!("{ns}/{}", ephemeral_claim_name(pod, v))))
        .collect()
}

/// The claim of a pod's generic ephemeral volume (upstream
/// `ephemeral.VolumeClaimName`).
pub fn ephemeral_claim_name(pod: &Pod, volume: &str) -> String {
    format!("{}-{volume}", pod.metadata.name)
}
