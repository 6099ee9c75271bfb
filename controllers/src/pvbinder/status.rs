//! The binder's writes that every path shares (upstream
//! `updateClaimStatus`, `updateVolumePhase`, their `WithEvent` forms,
//! `bind`, `unbindVolume`): each made from the object it is given, and
//! skipped when it would change nothing.

use k8s_openapi::api::core::v1::{ObjectReference, PersistentVolume, PersistentVolumeClaim};
use kcm_objects::EventType;

use crate::common::object::object_ref;
use crate::common::quantity;
use crate::plan::Event;
use crate::pvbinder::cx::{Cx, Flow, Request, Step};
use crate::pvbinder::matching::is_volume_bound_to_claim;
use crate::pvbinder::{
    ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, claim_phase, claim_volume_name, has_annotation, set_annotation,
    volume_name, volume_phase,
};

/// The annotation a volume carries while its filesystem awaits a resize:
/// the claim reports this capacity until then (upstream
/// `util.AnnPreResizeCapacity`).
const ANN_PRE_RESIZE_CAPACITY: &str = "volume.alpha.kubernetes.io/pre-resize-capacity";

/// An event about the claim.
pub(super) fn claim_event(claim: &PersistentVolumeClaim, type_: EventType, reason: &str, message: String) -> Event {
    Event {
        regarding: object_ref("v1", "PersistentVolumeClaim", &claim.metadata),
        type_,
        reason: reason.to_owned(),
        message,
    }
}

/// An event about the volume.
pub(super) fn volume_event(volume: &PersistentVolume, type_: EventType, reason: &str, message: String) -> Event {
    Event {
        regarding: object_ref("v1", "PersistentVolume", &volume.metadata),
        type_,
        reason: reason.to_owned(),
        message,
    }
}

/// Sets the claim's phase, and its access modes, capacity and current
/// VolumeAttributesClass from `volume` (cleared without one), if any
/// differ (upstream `updateClaimStatus`).
pub(super) fn update_claim_status(
    cx: &mut Cx<'_>,
    claim: &PersistentVolumeClaim,
    phase: &str,
    volume: Option<&PersistentVolume>,
    vac_enabled: bool,
) -> Step<PersistentVolumeClaim> {
    let mut updated = claim.clone();
    let status = updated.status.get_or_insert_with(Default::default);
    let mut dirty = claim_phase(claim) != phase;
    status.phase = Some(phase.to_owned());
    match volume {
        None => {
            dirty |= status.access_modes.take().is_some();
            dirty |= status.capacity.take().is_some();
            dirty |= status.current_volume_attributes_class_name.take().is_some();
        }
        Some(volume) => {
            let spec = volume.spec.clone().unwrap_or_default();
            if status.access_modes != spec.access_modes {
                status.access_modes = spec.access_modes.clone();
                dirty = true;
            }
            if claim_phase(claim) != phase {
                let Some(volume_capacity) = spec.capacity.as_ref().and_then(|c| c.get("storage")) else {
                    return Err(Flow::Fail(format!(
                        "PersistentVolume {:?} is without a storage capacity",
                        volume_name(volume)
                    )));
                };
                let pre_resize = volume.metadata.annotations.as_ref().and_then(|a| a.get(ANN_PRE_RESIZE_CAPACITY));
                let claim_capacity = status.capacity.as_ref().and_then(|c| c.get("storage"));
                if let Some(pre_resize) = pre_resize {
                    let reported = match quantity::value(pre_resize) {
                        Some(_) => k8s_openapi::apimachinery::pkg::api::resource::Quantity(pre_resize.clone()),
                        None => volume_capacity.clone(),
                    };
                    status.capacity.get_or_insert_with(Default::default).insert("storage".to_owned(), reported);
                    dirty = true;
                } else if claim_capacity.is_none_or(|c| quantity::value(&c.0) != quantity::value(&volume_capacity.0)) {
                    status.capacity = spec.capacity.clone();
                    dirty = true;
                }
            }
            let current = status.current_volume_attributes_class_name.clone();
            if vac_enabled
                && claim_phase(claim) == "Pending"
                && phase == "Bound"
                && current != spec.volume_attributes_class_name
            {
                status.current_volume_attributes_class_name = spec.volume_attributes_class_name.clone();
                dirty = true;
            }
        }
    }
    if !dirty {
        return Ok(claim.clone());
    }
    cx.claim(Request::UpdateClaimStatus(Box::new(updated)))
}

/// Sets the claim's phase and records an event, unless the phase is set
/// already (upstream `updateClaimStatusWithEvent`).
pub(super) fn update_claim_status_with_event(
    cx: &mut Cx<'_>,
    claim: &PersistentVolumeClaim,
    phase: &str,
    vac_enabled: bool,
    (type_, reason, message): (EventType, &str, &str),
) -> Step<()> {
    if claim_phase(claim) == phase {
        return Ok(());
    }
    let written = update_claim_status(cx, claim, phase, None, vac_enabled)?;
    cx.event(claim_event(&written, type_, reason, message.to_owned()))
}

/// Sets the volume's phase and message, unless the phase is set already
/// (upstream `updateVolumePhase`).
pub(super) fn update_volume_phase(
    cx: &mut Cx<'_>,
    volume: &PersistentVolume,
    phase: &str,
    message: &str,
) -> Step<PersistentVolume> {
    if volume_phase(volume) == phase {
        return Ok(volume.clone());
    }
    let mut updated = volume.clone();
    let status = updated.status.get_or_insert_with(Default::default);
    status.phase = Some(phase.to_owned());
    status.message = (!message.is_empty()).then(|| message.to_owned());
    cx.volume(Request::UpdateVolumeStatus(Box::new(updated)))
}

/// Sets the volume's phase with its message as an event, unless the phase
/// is set already (upstream `updateVolumePhaseWithEvent`).
pub(super) fn update_volume_phase_with_event(
    cx: &mut Cx<'_>,
    volume: &PersistentVolume,
    phase: &str,
    type_: EventType,
    reason: &str,
    message: &str,
) -> Step<PersistentVolume> {
    if volume_phase(volume) == phase {
        return Ok(volume.clone());
    }
    let written = update_volume_phase(cx, volume, phase, message)?;
    cx.event(volume_event(&written, type_, reason, message.to_owned()))?;
    Ok(written)
}

/// The claim reference a volume bound to `claim` carries (upstream
/// `reference.GetReference`).
fn claim_reference(claim: &PersistentVolumeClaim) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".to_owned()),
        kind: Some("PersistentVolumeClaim".to_owned()),
        namespace: claim.metadata.namespace.clone(),
        name: claim.metadata.name.clone(),
        uid: claim.metadata.uid.clone(),
        resource_version: claim.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}

/// The volume bound to the claim, if that changes it (upstream
/// `GetBindVolumeToClaim`).
fn volume_bound_to_claim(volume: &PersistentVolume, claim: &PersistentVolumeClaim) -> Option<PersistentVolume> {
    let set_bound_by_controller = !is_volume_bound_to_claim(volume, claim);
    let mut updated = volume.clone();
    let mut dirty = false;
    let claim_ref = volume.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
    let same = claim_ref.is_some_and(|r| {
        r.name == claim.metadata.name && r.namespace == claim.metadata.namespace && r.uid == claim.metadata.uid
    });
    if !same {
        updated.spec.get_or_insert_with(Default::default).claim_ref = Some(claim_reference(claim));
        dirty = true;
    }
    if set_bound_by_controller && !has_annotation(&updated.metadata, ANN_BOUND_BY_CONTROLLER) {
        set_annotation(&mut updated.metadata, ANN_BOUND_BY_CONTROLLER, "yes");
        dirty = true;
    }
    dirty.then_some(updated)
}

/// Binds the volume and the claim: the volume's claimRef, its phase, the
/// claim's volumeName and annotations, its status, each written only if it
/// changes (upstream `bind`).
pub(super) fn bind(
    cx: &mut Cx<'_>,
    volume: &PersistentVolume,
    claim: &PersistentVolumeClaim,
    vac_enabled: bool,
) -> Step<()> {
    let volume = match volume_bound_to_claim(volume, claim) {
        Some(updated) => cx.volume(Request::UpdateVolume(Box::new(updated)))?,
        None => volume.clone(),
    };
    let volume = update_volume_phase(cx, &volume, "Bound", "")?;
    let mut updated = claim.clone();
    let mut dirty = false;
    if claim_volume_name(claim) != volume_name(&volume) {
        updated.spec.get_or_insert_with(Default::default).volume_name = Some(volume_name(&volume).to_owned());
        if !has_annotation(&updated.metadata, ANN_BOUND_BY_CONTROLLER) {
            set_annotation(&mut updated.metadata, ANN_BOUND_BY_CONTROLLER, "yes");
        }
        dirty = true;
    }
    if !has_annotation(&updated.metadata, ANN_BIND_COMPLETED) {
        set_annotation(&mut updated.metadata, ANN_BIND_COMPLETED, "yes");
        dirty = true;
    }
    let claim = if dirty { cx.claim(Request::UpdateClaim(Box::new(updated)))? } else { claim.clone() };
    update_claim_status(cx, &claim, "Bound", Some(&volume), vac_enabled).map(drop)
}

/// Undoes a binding: a binding the controller made is removed, a user's
/// pre-binding loses only its uid; then the volume is `Available`
/// (upstream `unbindVolume`).
pub(super) fn unbind_volume(cx: &mut Cx<'_>, volume: &PersistentVolume) -> Step<()> {
    let mut updated = volume.clone();
    if has_annotation(&volume.metadata, ANN_BOUND_BY_CONTROLLER) {
        updated.spec.get_or_insert_with(Default::default).claim_ref = None;
        if let Some(annotations) = updated.metadata.annotations.as_mut() {
            annotations.remove(ANN_BOUND_BY_CONTROLLER);
            if annotations.is_empty() {
                updated.metadata.annotations = None;
            }
        }
    } else if let Some(claim_ref) = updated.spec.as_mut().and_then(|s| s.claim_ref.as_mut()) {
        claim_ref.uid = None;
    }
    let written = cx.volume(Request::UpdateVolume(Box::new(updated)))?;
    update_volume_phase(cx, &written, "Available", "").map(drop)
}
