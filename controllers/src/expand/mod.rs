//! The volume expander's decisions (upstream
//! `pkg/controller/volume/expand/expand_controller.go`): what a bound claim
//! whose storage request grew needs from kube-controller-manager, now that
//! volumes are expanded by external resizers.
//!
//! Upstream's `syncHandler`, for a cached claim:
//! 1. reads its volume live (`spec.volumeName`); a failed read fails the
//!    sync, retried with backoff ([`volume_name`] answers the name, or the
//!    error of an empty one);
//! 2. a volume not bound to the claim (its `claimRef` names another
//!    namespace or uid, or nothing) fails the sync, retried;
//! 3. a claim whose request is not above its status capacity, on a volume
//!    without `volume.alpha.kubernetes.io/pre-resize-capacity`, needs
//!    nothing;
//! 4. a volume of an in-tree plugin migrated to CSI (all seven in 1.37):
//!    a Normal `ExternalExpanding` event ("CSI migration enabled for
//!    <plugin>; waiting for external resizer to expand the pvc"), then the
//!    annotation `volume.kubernetes.io/storage-resizer: <CSI driver>` set
//!    on the claim by a strategic-merge patch of its `status` carrying the
//!    claim's resourceVersion ([`resizer_patch`]), which the external
//!    resizer of that driver waits for;
//! 5. any other volume (CSI, NFS, ...): no in-tree plugin expands it in
//!    1.37, so a Normal `ExternalExpanding` event ("waiting for an external
//!    controller to expand this PVC"), not retried;
//! 6. a FlexVolume volume: upstream hands it to a no-op "kubelet
//!    expandable" plugin that resizes the claim's status and the volume's
//!    capacity in the control plane and leaves the filesystem to the
//!    kubelet. kcm-rs does not run that path: the claim gets a Warning
//!    `VolumeResizeFailed` naming it, not retried ([`Decision::Flex`]).
//!
//! [`decide`] answers steps 2 to 6 for the claim and the volume read.

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kcm_objects::EventType;
use serde_json::{Value, json};

use crate::common::csi_migration::migrated_plugin;
use crate::common::object::{key, object_ref};
use crate::common::quantity;
use crate::plan::Event;

#[cfg(test)]
mod tests;

/// The reason of the expander's events (upstream `events.ExternalExpanding`).
pub const EXTERNAL_EXPANDING: &str = "ExternalExpanding";
/// The reason of a failed expansion (upstream `events.VolumeResizeFailed`).
pub const VOLUME_RESIZE_FAILED: &str = "VolumeResizeFailed";
/// The claim's capacity before an expansion that needs the node, set on
/// the volume by the external resizer (upstream `AnnPreResizeCapacity`).
pub const ANN_PRE_RESIZE_CAPACITY: &str = "volume.alpha.kubernetes.io/pre-resize-capacity";
/// The resizer a claim waits for (upstream `VolumeResizerKey`).
pub const ANN_STORAGE_RESIZER: &str = "volume.kubernetes.io/storage-resizer";

/// What a claim's sync does, once its volume is read.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Nothing to expand.
    Nothing,
    /// The volume is bound to another claim, or to none: the sync fails
    /// with this error and is retried.
    NotBound(String),
    /// Record the event; an external controller expands the volume. Not
    /// retried.
    External(Event),
    /// Record the event, then set the resizer annotation: the patch, or
    /// `None` when the claim already names this resizer.
    Migrated {
        /// The Normal `ExternalExpanding` event.
        event: Event,
        /// The CSI driver that resizes the volume.
        resizer: &'static str,
        /// The strategic-merge patch of the claim's `status`.
        patch: Option<Value>,
    },
    /// A FlexVolume volume, which kcm-rs does not expand: the Warning to
    /// record; not retried.
    Flex(Event),
}

/// Whether a claim event queues the claim (upstream `enqueuePVC`): it is
/// `Bound`.
pub fn should_queue(claim: &PersistentVolumeClaim) -> bool {
    claim.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound")
}

/// Whether an update queues the claim (upstream's `UpdateFunc`): its
/// storage request grew (a volume to expand) or its status capacity grew
/// (an expansion that finished), and it is bound.
pub fn update_queues(old: &PersistentVolumeClaim, new: &PersistentVolumeClaim) -> bool {
    let grew = request(new) > request(old) || capacity(new) > capacity(old);
    grew && should_queue(new)
}

/// The volume to read for the claim (its `spec.volumeName`); the error of
/// upstream's read when it names none.
///
/// # Errors
/// The claim names no volume.
pub fn volume_name(claim: &PersistentVolumeClaim) -> Result<&str, String> {
    match claim.spec.as_ref().and_then(|s| s.volume_name.as_deref()) {
        Some(name) if !name.is_empty() => Ok(name),
        _ => Err("failed to get PV \"\": resource name may not be empty".to_owned()),
    }
}

/// What the sync of the claim (`namespace/name`) does with its volume,
/// read live (upstream `syncHandler` after the read).
pub fn decide(claim: &PersistentVolumeClaim, volume: &PersistentVolume) -> Decision {
    let claim_key = key(&claim.metadata);
    let claim_ref = volume.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
    let bound = claim_ref.is_some_and(|r| {
        r.namespace.as_deref().unwrap_or_default() == claim.metadata.namespace.as_deref().unwrap_or_default()
            && r.uid.as_deref().unwrap_or_default() == claim.metadata.uid.as_deref().unwrap_or_default()
    });
    if !bound {
        return Decision::NotBound(format!("persistent Volume is not bound to PVC being updated : {claim_key}"));
    }
    let pre_resize = volume.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(ANN_PRE_RESIZE_CAPACITY));
    if request(claim) <= capacity(claim) && !pre_resize {
        return Decision::Nothing;
    }
    if let Some((plugin, resizer)) = migrated_plugin(volume) {
        let message = format!("CSI migration enabled for {plugin}; waiting for external resizer to expand the pvc");
        let event = event(claim, EventType::Normal, EXTERNAL_EXPANDING, message);
        return Decision::Migrated { event, resizer, patch: resizer_patch(claim, resizer) };
    }
    if volume.spec.as_ref().is_some_and(|s| s.flex_volume.is_some()) {
        let message = "kcm-rs does not expand FlexVolume volumes: run kube-controller-manager's \
                       persistentvolume-expander-controller to expand this PVC"
            .to_owned();
        return Decision::Flex(event(claim, EventType::Warning, VOLUME_RESIZE_FAILED, message));
    }
    let message = "waiting for an external controller to expand this PVC".to_owned();
    Decision::External(event(claim, EventType::Normal, EXTERNAL_EXPANDING, message))
}

/// The strategic-merge patch of the claim's `status` that names `resizer`
/// (upstream `SetClaimResizer` and `PatchPVCStatus`: the annotation, and
/// the claim's resourceVersion so that a stale claim is refused with a
/// conflict); `None` when the claim names it already.
pub fn resizer_patch(claim: &PersistentVolumeClaim, resizer: &str) -> Option<Value> {
    let current = claim.metadata.annotations.as_ref().and_then(|a| a.get(ANN_STORAGE_RESIZER));
    if current.map(String::as_str) == Some(resizer) {
        return None;
    }
    let resource_version = claim.metadata.resource_version.clone().unwrap_or_default();
    Some(json!({
        "metadata": {"annotations": {ANN_STORAGE_RESIZER: resizer}, "resourceVersion": resource_version},
    }))
}

/// The Warning recorded when the resizer annotation could not be set
/// (upstream's message), the sync failing with the same words.
pub fn resizer_failed(claim: &PersistentVolumeClaim, error: &str) -> Event {
    let message = format!("error setting resizer annotation to pvc {}, with error {error}", key(&claim.metadata));
    event(claim, EventType::Warning, EXTERNAL_EXPANDING, message)
}

/// The claim's storage request in bytes (0 when unset).
fn request(claim: &PersistentVolumeClaim) -> i128 {
    let requests = claim.spec.as_ref().and_then(|s| s.resources.as_ref()).and_then(|r| r.requests.as_ref());
    requests.and_then(|r| r.get("storage")).and_then(|q| quantity::value(&q.0)).unwrap_or(0)
}

/// The claim's status capacity in bytes (0 when unset).
fn capacity(claim: &PersistentVolumeClaim) -> i128 {
    let capacity = claim.status.as_ref().and_then(|s| s.capacity.as_ref());
    capacity.and_then(|c| c.get("storage")).and_then(|q| quantity::value(&q.0)).unwrap_or(0)
}

fn event(claim: &PersistentVolumeClaim, type_: EventType, reason: &str, message: String) -> Event {
    let regarding = object_ref("v1", "PersistentVolumeClaim", &claim.metadata);
    Event { regarding, type_, reason: reason.to_owned(), message }
}
