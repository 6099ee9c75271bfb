//! The PersistentVolume binder's decisions (upstream
//! `pkg/controller/volume/persistentvolume/`, `pv_controller.go`): a
//! claim's sync ([`sync_claim`]) binds it to the best matching volume, to
//! the volume it names, or asks an external provisioner for one; a
//! volume's sync ([`sync_volume`]) keeps its phase and, once its claim is
//! gone, reclaims it by its policy.
//!
//! A sync is written straight through as upstream's is and asks for its
//! writes through a [`Cx`] (the replay protocol of [`cx`]); it reads the
//! controller's caches through a fixed [`View`].
//!
//! kcm-rs runs no in-tree volume plugin: volumes are provisioned and
//! deleted by external provisioners (CSI), as every in-tree plugin that
//! provisioned has been migrated to CSI in 1.37. The in-tree paths left
//! (the host-path provisioner and deleter, host-path and NFS recycling)
//! fail with a clear event instead, see [`reclaim`].
//!
//! What its metrics count, and what a sync asks them to record, is
//! [`metrics`].

use std::sync::Arc;

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use kcm_objects::Pod;

mod claim;
pub mod cx;
mod matching;
pub mod metrics;
mod migration;
mod provision;
mod reclaim;
mod status;
mod volume;

#[cfg(test)]
mod tests;

pub use claim::sync_claim;
pub use cx::{Cx, Flow, Reply, Request, Step};
pub use matching::{claim_class, volume_class};
pub use volume::sync_volume;

/// The claim has been bound by the controller's whole sequence (upstream
/// `AnnBindCompleted`).
pub const ANN_BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
/// The binding was made by the controller, not pre-set by a user
/// (upstream `AnnBoundByController`).
pub const ANN_BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
/// The node the scheduler chose for a delayed-binding claim (upstream
/// `AnnSelectedNode`).
pub const ANN_SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
/// The provisioner that made a volume (upstream `AnnDynamicallyProvisioned`).
pub const ANN_DYNAMICALLY_PROVISIONED: &str = "pv.kubernetes.io/provisioned-by";
/// The CSI driver an in-tree volume or claim is migrated to.
pub const ANN_MIGRATED_TO: &str = "pv.kubernetes.io/migrated-to";
/// The provisioner asked to provision a claim.
pub const ANN_STORAGE_PROVISIONER: &str = "volume.kubernetes.io/storage-provisioner";
/// Its beta spelling, still written beside it.
pub const ANN_BETA_STORAGE_PROVISIONER: &str = "volume.beta.kubernetes.io/storage-provisioner";
/// The finalizer an in-tree deleter keeps on a volume until it is deleted
/// (upstream `PVDeletionInTreeProtectionFinalizer`).
pub const IN_TREE_DELETION_FINALIZER: &str = "kubernetes.io/pv-controller";
/// The external provisioner's finalizer (upstream
/// `PVDeletionProtectionFinalizer`).
pub const EXTERNAL_DELETION_FINALIZER: &str = "external-provisioner.volume.kubernetes.io/finalizer";

/// What the controller reads: its caches, fixed for one sync.
pub trait View {
    /// Every volume.
    fn volumes(&self) -> Vec<Arc<PersistentVolume>>;
    /// The volume of this name.
    fn volume(&self, name: &str) -> Option<Arc<PersistentVolume>>;
    /// The claim of this key (`namespace/name`).
    fn claim(&self, key: &str) -> Option<Arc<PersistentVolumeClaim>>;
    /// The StorageClass of this name.
    fn class(&self, name: &str) -> Option<Arc<StorageClass>>;
    /// Every StorageClass.
    fn classes(&self) -> Vec<Arc<StorageClass>>;
    /// The pods that refer to the claim of this key (upstream's pod index
    /// by claim).
    fn pods_of_claim(&self, key: &str) -> Vec<Arc<Pod>>;
}

/// What the controller was started with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `--enable-dynamic-provisioning` (default true).
    pub dynamic_provisioning: bool,
    /// The `VolumeAttributesClass` feature gate.
    pub vac_enabled: bool,
}

/// `namespace/name` of a claim.
pub fn claim_key(claim: &PersistentVolumeClaim) -> String {
    format!(
        "{}/{}",
        claim.metadata.namespace.as_deref().unwrap_or_default(),
        claim.metadata.name.as_deref().unwrap_or_default()
    )
}

/// `namespace/name` of the claim a volume refers to, if it refers to one.
pub fn claim_ref_key(volume: &PersistentVolume) -> Option<String> {
    let claim_ref = volume.spec.as_ref()?.claim_ref.as_ref()?;
    Some(format!(
        "{}/{}",
        claim_ref.namespace.as_deref().unwrap_or_default(),
        claim_ref.name.as_deref().unwrap_or_default()
    ))
}

fn has_annotation(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta, key: &str) -> bool {
    meta.annotations.as_ref().is_some_and(|a| a.contains_key(key))
}

fn annotation<'a>(meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

fn set_annotation(meta: &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta, key: &str, value: &str) {
    meta.annotations.get_or_insert_with(Default::default).insert(key.to_owned(), value.to_owned());
}

fn volume_name(volume: &PersistentVolume) -> &str {
    volume.metadata.name.as_deref().unwrap_or_default()
}

fn volume_phase(volume: &PersistentVolume) -> &str {
    volume.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default()
}

fn claim_phase(claim: &PersistentVolumeClaim) -> &str {
    claim.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default()
}

fn claim_volume_name(claim: &PersistentVolumeClaim) -> &str {
    claim.spec.as_ref().and_then(|s| s.volume_name.as_deref()).unwrap_or_default()
}

fn reclaim_policy(volume: &PersistentVolume) -> &str {
    volume.spec.as_ref().and_then(|s| s.persistent_volume_reclaim_policy.as_deref()).unwrap_or_default()
}
