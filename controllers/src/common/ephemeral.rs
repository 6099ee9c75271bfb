//! Generic ephemeral volumes and the pod index by claim, as the storage
//! controllers share them (upstream `k8s.io/component-helpers/storage/ephemeral`
//! and `pkg/controller/volume/common`).
//!
//! A pod's volume `scratch` with `ephemeral.volumeClaimTemplate` stands
//! for the claim `<pod>-scratch` in the pod's namespace: pod `web` gets
//! claim `web-scratch`. That claim is the pod's only when the pod controls
//! it (its ownerReference with `controller: true` carries the pod's uid);
//! a claim of that name made by anyone else is not used for the pod.

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kcm_objects::Pod;

/// The name of the pod index by claim key (upstream `common.PodPVCIndex`):
/// the PVC protection and ephemeral volume controllers share one index on
/// the shared pod informer.
pub const POD_PVC_INDEX: &str = "pod-pvc-index";

/// The claim of a pod's generic ephemeral volume (upstream
/// `ephemeral.VolumeClaimName`).
pub fn volume_claim_name(pod: &Pod, volume: &str) -> String {
    format!("{}-{volume}", pod.metadata.name)
}

/// Whether the claim was made for the pod: same namespace, controlled by
/// it (upstream `ephemeral.VolumeIsForPod`); if not, upstream's error
/// message.
pub fn volume_is_for_pod(pod: &Pod, pvc: &PersistentVolumeClaim) -> Result<(), String> {
    let controller = pvc.metadata.owner_references.iter().flatten().find(|r| r.controller == Some(true));
    let namespace = pvc.metadata.namespace.as_deref().unwrap_or_default();
    if namespace == &*pod.metadata.namespace && controller.is_some_and(|r| pod.metadata.uid == *r.uid) {
        return Ok(());
    }
    Err(format!(
        "PVC {namespace}/{} was not created for pod {}/{} (pod is not owner)",
        pvc.metadata.name.as_deref().unwrap_or_default(),
        pod.metadata.namespace,
        pod.metadata.name,
    ))
}

/// The PVC keys (`namespace/name`) a pod refers to, ephemeral volumes'
/// claims included: the keys of [`POD_PVC_INDEX`] (upstream
/// `common.PodPVCIndexFunc`).
pub fn pod_pvc_keys(pod: &Pod) -> Vec<String> {
    let ns = &pod.metadata.namespace;
    (pod.spec.rare().claim_volumes.iter().map(|v| format!("{ns}/{}", v.claim_name)))
        .chain(pod.spec.rare().ephemeral_volumes.iter().map(|v| format!("{ns}/{}", volume_claim_name(pod, &v.name))))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "uid1"},
            "spec": {"volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "claim"}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                {"name": "tmp", "emptyDir": {}},
            ]},
        }))
        .expect("a pod")
    }

    fn claim(namespace: &str, owner_uid: Option<&str>, controller: bool) -> PersistentVolumeClaim {
        let owners: Vec<_> = owner_uid
            .map(|uid| json!({"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": uid, "controller": controller}))
            .into_iter()
            .collect();
        serde_json::from_value(
            json!({"metadata": {"name": "web-scratch", "namespace": namespace, "ownerReferences": owners}}),
        )
        .expect("a claim")
    }

    #[test]
    fn index_keys_name_claims_and_ephemeral_claims() {
        assert_eq!(pod_pvc_keys(&pod()), ["ns/claim", "ns/web-scratch"]);
    }

    #[test]
    fn only_a_claim_the_pod_controls_is_for_it() {
        assert_eq!(volume_is_for_pod(&pod(), &claim("ns", Some("uid1"), true)), Ok(()));
        let not_owner = Err("PVC ns/web-scratch was not created for pod ns/web (pod is not owner)".to_owned());
        assert_eq!(volume_is_for_pod(&pod(), &claim("ns", None, true)), not_owner);
        assert_eq!(volume_is_for_pod(&pod(), &claim("ns", Some("uid1"), false)), not_owner);
        assert_eq!(volume_is_for_pod(&pod(), &claim("ns", Some("other"), true)), not_owner);
        assert!(volume_is_for_pod(&pod(), &claim("other", Some("uid1"), true)).is_err());
    }
}
