//! Which volume a claim binds to (upstream `index.go`'s
//! `findBestMatchForClaim` over `storagehelpers.FindMatchingVolume`, as the
//! controller calls it: no node, nothing excluded), and whether a volume a
//! claim names satisfies it (`checkVolumeSatisfyClaim`).
//!
//! Upstream indexes volumes by their set of access modes, tries the sets
//! that hold every mode the claim asks for from the fewest modes up, and in
//! the first set with a match takes the volume bound to the claim, or else
//! the smallest available one. Sets of equal size, and volumes of equal
//! size, come in the index's (map) order upstream; here by name, so the
//! choice is the same on every run.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};

use crate::common::quantity;
use crate::common::selector::Selector;

/// The beta class annotation, read before `storageClassName` (upstream
/// `v1.BetaStorageClassAnnotation`).
pub const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// The access modes in upstream's index order, with their short names
/// (`GetAccessModesAsString`).
const MODES: [(&str, &str); 4] =
    [("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP")];

/// The claim's class: the beta annotation, else `storageClassName`, else
/// `""` (upstream `GetPersistentVolumeClaimClass`).
pub fn claim_class(claim: &PersistentVolumeClaim) -> &str {
    if let Some(class) = claim.metadata.annotations.as_ref().and_then(|a| a.get(BETA_STORAGE_CLASS_ANNOTATION)) {
        return class;
    }
    claim.spec.as_ref().and_then(|s| s.storage_class_name.as_deref()).unwrap_or_default()
}

/// Whether the claim names a class at all, even `""` (upstream
/// `PersistentVolumeClaimHasClass`).
pub fn claim_has_class(claim: &PersistentVolumeClaim) -> bool {
    claim.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(BETA_STORAGE_CLASS_ANNOTATION))
        || claim.spec.as_ref().is_some_and(|s| s.storage_class_name.is_some())
}

/// The volume's class (upstream `GetPersistentVolumeClass`).
pub fn volume_class(volume: &PersistentVolume) -> &str {
    if let Some(class) = volume.metadata.annotations.as_ref().and_then(|a| a.get(BETA_STORAGE_CLASS_ANNOTATION)) {
        return class;
    }
    volume.spec.as_ref().and_then(|s| s.storage_class_name.as_deref()).unwrap_or_default()
}

/// Whether the volume's claimRef names this claim: same namespace and
/// name, and the claim's uid unless the reference has none (upstream
/// `IsVolumeBoundToClaim`).
pub fn is_volume_bound_to_claim(volume: &PersistentVolume, claim: &PersistentVolumeClaim) -> bool {
    let Some(claim_ref) = volume.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) else { return false };
    claim_ref.name == claim.metadata.name
        && claim_ref.namespace == claim.metadata.namespace
        && claim_ref.uid.as_deref().is_none_or(|uid| uid.is_empty() || Some(uid) == claim.metadata.uid.as_deref())
}

/// The claim's requested storage, in bytes rounded up.
fn requested(claim: &PersistentVolumeClaim) -> i128 {
    let requests = claim.spec.as_ref().and_then(|s| s.resources.as_ref()).and_then(|r| r.requests.as_ref());
    requests.and_then(|r| r.get("storage")).and_then(|q| quantity::value(&q.0)).unwrap_or(0)
}

/// The volume's capacity, in bytes rounded up.
fn capacity(volume: &PersistentVolume) -> i128 {
    let capacity = volume.spec.as_ref().and_then(|s| s.capacity.as_ref()).and_then(|c| c.get("storage"));
    capacity.and_then(|q| quantity::value(&q.0)).unwrap_or(0)
}

fn claim_volume_mode(claim: &PersistentVolumeClaim) -> &str {
    claim.spec.as_ref().and_then(|s| s.volume_mode.as_deref()).unwrap_or("Filesystem")
}

fn volume_volume_mode(volume: &PersistentVolume) -> &str {
    volume.spec.as_ref().and_then(|s| s.volume_mode.as_deref()).unwrap_or("Filesystem")
}

/// The claim asks for another volume mode than the volume's (upstream
/// `CheckVolumeModeMismatches`; absent is `Filesystem`).
pub fn volume_mode_mismatch(claim: &PersistentVolumeClaim, volume: &PersistentVolume) -> bool {
    claim_volume_mode(claim) != volume_volume_mode(volume)
}

fn claim_modes(claim: &PersistentVolumeClaim) -> &[String] {
    claim.spec.as_ref().and_then(|s| s.access_modes.as_deref()).unwrap_or_default()
}

fn volume_modes(volume: &PersistentVolume) -> &[String] {
    volume.spec.as_ref().and_then(|s| s.access_modes.as_deref()).unwrap_or_default()
}

/// The volume offers every access mode the claim asks for (upstream
/// `CheckAccessModes`).
fn offers_access_modes(claim: &PersistentVolumeClaim, volume: &PersistentVolume) -> bool {
    claim_modes(claim).iter().all(|m| volume_modes(volume).contains(m))
}

fn claim_vac(claim: &PersistentVolumeClaim) -> &str {
    claim.spec.as_ref().and_then(|s| s.volume_attributes_class_name.as_deref()).unwrap_or_default()
}

fn volume_vac(volume: &PersistentVolume) -> &str {
    volume.spec.as_ref().and_then(|s| s.volume_attributes_class_name.as_deref()).unwrap_or_default()
}

/// A volume's index key: its known access modes, in upstream's order
/// (`GetAccessModesAsString`, duplicates dropped, unknown modes ignored).
fn modes_key(modes: &[String]) -> Vec<&'static str> {
    MODES.iter().filter(|(mode, _)| modes.iter().any(|m| m == mode)).map(|(_, short)| *short).collect()
}

/// The volume the claim should bind to, if any (upstream
/// `findBestMatchForClaim`): `delay_binding` for a claim whose class waits
/// for the first consumer, so that only a volume already bound to it
/// matches; `vac_enabled` for the `VolumeAttributesClass` gate.
///
/// # Errors
/// The claim's selector is invalid, or it names a VolumeAttributesClass
/// with the gate off.
pub fn find_best_match(
    claim: &PersistentVolumeClaim,
    volumes: &[Arc<PersistentVolume>],
    delay_binding: bool,
    vac_enabled: bool,
) -> Result<Option<Arc<PersistentVolume>>, String> {
    let mut sets: BTreeMap<Vec<&'static str>, Vec<&Arc<PersistentVolume>>> = BTreeMap::new();
    for volume in volumes {
        sets.entry(modes_key(volume_modes(volume))).or_default().push(volume);
    }
    let wanted = modes_key(claim_modes(claim));
    let mut candidates: Vec<_> = sets.into_iter().filter(|(key, _)| wanted.iter().all(|m| key.contains(m))).collect();
    candidates.sort_by_key(|(key, _)| key.len());
    for (_, mut set) in candidates {
        set.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        if let Some(found) = find_matching_volume(claim, &set, delay_binding, vac_enabled)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// Upstream `FindMatchingVolume` with no node and nothing excluded.
fn find_matching_volume(
    claim: &PersistentVolumeClaim,
    volumes: &[&Arc<PersistentVolume>],
    delay_binding: bool,
    vac_enabled: bool,
) -> Result<Option<Arc<PersistentVolume>>, String> {
    let key = || {
        format!(
            "{}/{}",
            claim.metadata.namespace.as_deref().unwrap_or_default(),
            claim.metadata.name.as_deref().unwrap_or_default()
        )
    };
    if !vac_enabled && !claim_vac(claim).is_empty() {
        return Err(format!(
            "unsupported volumeAttributesClassName is set on claim {} when the feature-gate VolumeAttributesClass is disabled",
            key()
        ));
    }
    let selector = match claim.spec.as_ref().and_then(|s| s.selector.as_ref()) {
        Some(selector) => Some(
            Selector::new(Some(selector))
                .map_err(|e| format!("error creating internal label selector for claim: {}: {e}", key()))?,
        ),
        None => None,
    };
    let requested = requested(claim);
    let class = claim_class(claim);
    let mut smallest: Option<(&Arc<PersistentVolume>, i128)> = None;
    for &volume in volumes {
        let claim_ref = volume.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
        if claim_ref.is_some() && !is_volume_bound_to_claim(volume, claim) {
            continue;
        }
        let size = capacity(volume);
        if size < requested || volume_mode_mismatch(claim, volume) {
            continue;
        }
        if (vac_enabled && claim_vac(claim) != volume_vac(volume)) || (!vac_enabled && !volume_vac(volume).is_empty()) {
            continue;
        }
        if volume.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if is_volume_bound_to_claim(volume, claim) {
            return Ok(Some(volume.clone()));
        }
        if delay_binding {
            continue;
        }
        let phase = volume.status.as_ref().and_then(|s| s.phase.as_deref());
        if phase != Some("Available") || selector.as_ref().is_some_and(|s| !s.matches(&volume.metadata.labels)) {
            continue;
        }
        if volume_class(volume) != class {
            continue;
        }
        if smallest.is_none_or(|(_, least)| least > size) {
            smallest = Some((volume, size));
        }
    }
    Ok(smallest.map(|(volume, _)| volume.clone()))
}

/// Why the volume a claim names cannot be bound to it, if it cannot
/// (upstream `checkVolumeSatisfyClaim`).
pub fn check_volume_satisfies_claim(
    volume: &PersistentVolume,
    claim: &PersistentVolumeClaim,
    vac_enabled: bool,
) -> Result<(), String> {
    let name = volume.metadata.name.as_deref().unwrap_or_default();
    if volume.metadata.deletion_timestamp.is_some() {
        return Err(format!("the volume is marked for deletion {name:?}"));
    }
    if capacity(volume) < requested(claim) {
        return Err("requested PV is too small".to_owned());
    }
    if volume_class(volume) != claim_class(claim) {
        return Err("storageClassName does not match".to_owned());
    }
    if vac_enabled && claim_vac(claim) != volume_vac(volume) {
        return Err("volumeAttributesClassName does not match".to_owned());
    }
    if !vac_enabled && (!claim_vac(claim).is_empty() || !volume_vac(volume).is_empty()) {
        return Err(
            "volumeAttributesClassName is not supported when the feature-gate VolumeAttributesClass is disabled"
                .to_owned(),
        );
    }
    if volume_mode_mismatch(claim, volume) {
        return Err("incompatible volumeMode".to_owned());
    }
    if !offers_access_modes(claim, volume) {
        return Err("incompatible accessMode".to_owned());
    }
    Ok(())
}
