//! A volume's sync (upstream `syncVolume`).

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kcm_objects::EventType;

use crate::pvbinder::cx::{Cx, Reply, Request, Step};
use crate::pvbinder::matching::volume_mode_mismatch;
use crate::pvbinder::status::{claim_event, unbind_volume, update_volume_phase, volume_event};
use crate::pvbinder::{
    ANN_DYNAMICALLY_PROVISIONED, Settings, View, claim_key, claim_ref_key, claim_volume_name, has_annotation,
    migration, reclaim, reclaim_policy, volume_name, volume_phase,
};

/// One sync of the volume (upstream `syncVolume`).
///
/// # Errors
/// [`Flow::Need`](crate::pvbinder::Flow::Need) for the next request to
/// perform, [`Flow::Fail`](crate::pvbinder::Flow::Fail) when the sync
/// failed and is to be retried.
pub fn sync_volume(view: &dyn View, volume: &PersistentVolume, settings: Settings, cx: &mut Cx<'_>) -> Step<()> {
    let volume = migration::update_volume_annotations(cx, volume)?;
    let claim_ref = volume.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
    let Some(claim_ref) = claim_ref else {
        return update_volume_phase(cx, &volume, "Available", "").map(drop);
    };
    if claim_ref.uid.as_deref().is_none_or(str::is_empty) {
        // Pre-bound to a claim by name only: syncClaim finishes it.
        return update_volume_phase(cx, &volume, "Available", "").map(drop);
    }
    let ref_uid = claim_ref.uid.clone();
    let (namespace, name) =
        (claim_ref.namespace.clone().unwrap_or_default(), claim_ref.name.clone().unwrap_or_default());
    let key = claim_ref_key(&volume).unwrap_or_default();
    let released_or_failed = matches!(volume_phase(&volume), "Released" | "Failed");
    let mut claim: Option<PersistentVolumeClaim> = view.claim(&key).map(|c| (*c).clone());
    if claim.is_none() && !released_or_failed {
        claim = get_claim(cx, &namespace, &name)?;
    }
    if claim.as_ref().is_some_and(|c| c.metadata.uid != ref_uid) {
        // The cached claim may be stale: ask the API server.
        claim = get_claim(cx, &namespace, &name)?.filter(|c| c.metadata.uid == ref_uid);
    }
    let Some(claim) = claim else {
        let volume = if released_or_failed { volume } else { update_volume_phase(cx, &volume, "Released", "")? };
        return reclaim::reclaim_volume(view, &volume, settings, cx);
    };
    let bound_to = claim_volume_name(&claim);
    if bound_to.is_empty() {
        if volume_mode_mismatch(&claim, &volume) {
            let volume_message = format!(
                "Cannot bind PersistentVolume to requested PersistentVolumeClaim {:?} due to incompatible volumeMode.",
                claim.metadata.name.as_deref().unwrap_or_default()
            );
            cx.event(volume_event(&volume, EventType::Warning, "VolumeMismatch", volume_message))?;
            let claim_message = format!(
                "Cannot bind PersistentVolume {:?} to requested PersistentVolumeClaim due to incompatible volumeMode.",
                volume_name(&volume)
            );
            return cx.event(claim_event(&claim, EventType::Warning, "VolumeMismatch", claim_message));
        }
        return cx.call(Request::QueueClaim(claim_key(&claim))).map(drop);
    }
    if bound_to == volume_name(&volume) {
        return update_volume_phase(cx, &volume, "Bound", "").map(drop);
    }
    // The claim is bound to another volume.
    if has_annotation(&volume.metadata, ANN_DYNAMICALLY_PROVISIONED) && reclaim_policy(&volume) == "Delete" {
        let volume = if released_or_failed { volume } else { update_volume_phase(cx, &volume, "Released", "")? };
        return reclaim::reclaim_volume(view, &volume, settings, cx);
    }
    // Bound by the controller, or pre-bound by a user: unbind_volume
    // undoes each as upstream does.
    unbind_volume(cx, &volume)
}

/// The claim read from the API server, `None` when it is not there.
fn get_claim(cx: &mut Cx<'_>, namespace: &str, name: &str) -> Step<Option<PersistentVolumeClaim>> {
    match cx.call(Request::GetClaim { namespace: namespace.to_owned(), name: name.to_owned() })? {
        Reply::Claim(claim) => Ok(Some(*claim)),
        Reply::NotFound => Ok(None),
        Reply::Failed(message) => Err(crate::pvbinder::Flow::Fail(message)),
        other => Err(crate::pvbinder::Flow::Fail(format!("unexpected answer {other:?}"))),
    }
}
