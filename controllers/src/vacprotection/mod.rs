//! The VolumeAttributesClass protection controller's decisions (upstream
//! `pkg/controller/volume/vacprotection/vac_protection_controller.go`), in
//! the observe/decide shape: given the cached class and whether a cached
//! claim or volume refers to it, [`decide`] answers the one write to make,
//! if any.
//!
//! A claim refers to a class by `spec.volumeAttributesClassName`,
//! `status.currentVolumeAttributesClassName` or
//! `status.modifyVolumeStatus.targetVolumeAttributesClassName`; a volume
//! by `spec.volumeAttributesClassName` ([`pvc_class_names`],
//! [`pv_class_names`]: the keys of upstream's `volumeAttributesClassName`
//! indexes). A class being deleted keeps [`VAC_PROTECTION_FINALIZER`]
//! while one of them refers to it; upstream asks its caches only (no live
//! list). A live class without the finalizer gets it (the admission
//! plugin adds it at creation; the controller covers classes made before
//! it was on).

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::VolumeAttributesClass;

use crate::common::protection::{is_deletion_candidate, need_to_add_finalizer, with_finalizer, without_finalizer};

#[cfg(test)]
mod tests;

/// The finalizer (upstream `volumeutil.VACProtectionFinalizer`).
pub const VAC_PROTECTION_FINALIZER: &str = "kubernetes.io/vac-protection";

/// What to do with a VolumeAttributesClass.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Nothing to write.
    Nothing,
    /// Being deleted but still referred to: keep the finalizer.
    KeepInUse,
    /// Update the class to this one, its finalizer removed.
    RemoveFinalizer(Box<VolumeAttributesClass>),
    /// Update the class to this one, its finalizer added.
    AddFinalizer(Box<VolumeAttributesClass>),
}

/// The classes a claim refers to, each once (upstream
/// `getPVCReferencedVACNames`).
pub fn pvc_class_names(pvc: &PersistentVolumeClaim) -> Vec<String> {
    let spec = pvc.spec.as_ref().and_then(|s| s.volume_attributes_class_name.as_deref());
    let status = pvc.status.as_ref();
    let current = status.and_then(|s| s.current_volume_attributes_class_name.as_deref());
    let target = status
        .and_then(|s| s.modify_volume_status.as_ref())
        .and_then(|m| m.target_volume_attributes_class_name.as_deref());
    let mut names: Vec<String> = Vec::new();
    for name in [spec, current, target].into_iter().flatten().filter(|n| !n.is_empty()) {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    names
}

/// The class a volume refers to, if any (upstream
/// `getPVReferencedVACNames`).
pub fn pv_class_names(pv: &PersistentVolume) -> Vec<String> {
    let name = pv.spec.as_ref().and_then(|s| s.volume_attributes_class_name.as_deref());
    name.filter(|n| !n.is_empty()).map(str::to_owned).into_iter().collect()
}

/// The classes an update of a claim or volume no longer refers to: the
/// old object's names the new one lacks (upstream `pvcUpdated` and
/// `pvUpdated`; a delete queues every name the object had).
pub fn released(old: &[String], new: &[String]) -> Vec<String> {
    old.iter().filter(|name| !new.contains(name)).cloned().collect()
}

/// Whether an add or update event queues the class (upstream
/// `vacAddedUpdated`).
pub fn should_queue(vac: &VolumeAttributesClass) -> bool {
    need_to_add_finalizer(&vac.metadata, VAC_PROTECTION_FINALIZER)
        || is_deletion_candidate(&vac.metadata, VAC_PROTECTION_FINALIZER)
}

/// Upstream `processVAC`, for the cached class and whether a cached claim
/// or volume refers to it (`in_use`, upstream `isBeingUsed`).
pub fn decide(vac: &VolumeAttributesClass, in_use: bool) -> Decision {
    if is_deletion_candidate(&vac.metadata, VAC_PROTECTION_FINALIZER) {
        if !in_use {
            let metadata = without_finalizer(&vac.metadata, VAC_PROTECTION_FINALIZER);
            return Decision::RemoveFinalizer(Box::new(VolumeAttributesClass { metadata, ..vac.clone() }));
        }
        return Decision::KeepInUse;
    }
    if need_to_add_finalizer(&vac.metadata, VAC_PROTECTION_FINALIZER) {
        let metadata = with_finalizer(&vac.metadata, VAC_PROTECTION_FINALIZER);
        return Decision::AddFinalizer(Box::new(VolumeAttributesClass { metadata, ..vac.clone() }));
    }
    Decision::Nothing
}
