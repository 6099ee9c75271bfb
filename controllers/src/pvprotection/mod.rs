//! The PV protection controller's decisions (upstream
//! `pkg/controller/volume/pvprotection/pv_protection_controller.go`), in
//! the observe/decide shape: given the cached PersistentVolume, [`decide`]
//! answers the one write to make, if any.
//!
//! A PersistentVolume being deleted keeps [`PV_PROTECTION_FINALIZER`]
//! while its phase is `Bound`; any other phase (`Available`, `Released`,
//! `Failed`, `Pending`, none) lets it go. A live PersistentVolume without
//! the finalizer gets it (the admission plugin adds it at creation; the
//! controller covers volumes made before it was on).

use k8s_openapi::api::core::v1::PersistentVolume;

use crate::common::protection::{is_deletion_candidate, need_to_add_finalizer, with_finalizer, without_finalizer};

/// The finalizer (upstream `volumeutil.PVProtectionFinalizer`).
pub const PV_PROTECTION_FINALIZER: &str = "kubernetes.io/pv-protection";

/// What to do with a PersistentVolume.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Nothing to write.
    Nothing,
    /// Being deleted but still bound: keep the finalizer.
    KeepBound,
    /// Update the volume to this one, its finalizer removed.
    RemoveFinalizer(Box<PersistentVolume>),
    /// Update the volume to this one, its finalizer added.
    AddFinalizer(Box<PersistentVolume>),
}

/// Whether an add or update event queues the volume (upstream
/// `pvAddedUpdated`).
pub fn should_queue(pv: &PersistentVolume) -> bool {
    need_to_add_finalizer(&pv.metadata, PV_PROTECTION_FINALIZER)
        || is_deletion_candidate(&pv.metadata, PV_PROTECTION_FINALIZER)
}

/// Whether the volume is in use: its phase is `Bound` (upstream
/// `isBeingUsed`; the claimRef alone does not count).
pub fn is_being_used(pv: &PersistentVolume) -> bool {
    pv.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound")
}

/// Upstream `processPV`, for the cached volume.
pub fn decide(pv: &PersistentVolume) -> Decision {
    if is_deletion_candidate(&pv.metadata, PV_PROTECTION_FINALIZER) {
        if !is_being_used(pv) {
            let metadata = without_finalizer(&pv.metadata, PV_PROTECTION_FINALIZER);
            return Decision::RemoveFinalizer(Box::new(PersistentVolume { metadata, ..pv.clone() }));
        }
        return Decision::KeepBound;
    }
    if need_to_add_finalizer(&pv.metadata, PV_PROTECTION_FINALIZER) {
        let metadata = with_finalizer(&pv.metadata, PV_PROTECTION_FINALIZER);
        return Decision::AddFinalizer(Box::new(PersistentVolume { metadata, ..pv.clone() }));
    }
    Decision::Nothing
}

#[cfg(test)]
mod tests;
