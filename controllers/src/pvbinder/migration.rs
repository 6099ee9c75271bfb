//! CSI migration as the binder sees it (upstream
//! `updateMigrationAnnotations`, `modifyDeletionFinalizers`): every in-tree
//! plugin that provisioned is migrated to its CSI driver in 1.37, so a
//! claim or volume of one carries `pv.kubernetes.io/migrated-to`, and a
//! volume an in-tree plugin provisioned keeps the in-tree deletion
//! finalizer only while an in-tree deleter would delete it.

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};

use crate::common::csi_migration::csi_driver;
use crate::pvbinder::cx::{Cx, Request, Step};
use crate::pvbinder::{
    ANN_BETA_STORAGE_PROVISIONER, ANN_DYNAMICALLY_PROVISIONED, ANN_MIGRATED_TO, ANN_STORAGE_PROVISIONER,
    EXTERNAL_DELETION_FINALIZER, IN_TREE_DELETION_FINALIZER, annotation, reclaim_policy,
};

/// Sets or clears `migrated-to` in `annotations` by the provisioner they
/// name; whether that changed them (upstream `updateMigrationAnnotations`).
pub fn annotate(annotations: &mut Option<std::collections::BTreeMap<String, String>>, claim: bool) -> bool {
    let Some(annotations) = annotations.as_mut() else { return false };
    let provisioner = if claim {
        annotations.get(ANN_STORAGE_PROVISIONER).or_else(|| annotations.get(ANN_BETA_STORAGE_PROVISIONER))
    } else {
        annotations.get(ANN_DYNAMICALLY_PROVISIONED)
    };
    let Some(provisioner) = provisioner else { return false };
    match csi_driver(provisioner) {
        Some(driver) if annotations.get(ANN_MIGRATED_TO).map(String::as_str) != Some(driver) => {
            annotations.insert(ANN_MIGRATED_TO.to_owned(), driver.to_owned());
            true
        }
        Some(_) => false,
        None => annotations.remove(ANN_MIGRATED_TO).is_some(),
    }
}

/// The claim with its migration annotation right, written if it was not
/// (upstream `updateClaimMigrationAnnotations`).
pub(super) fn update_claim_annotations(cx: &mut Cx<'_>, claim: &PersistentVolumeClaim) -> Step<PersistentVolumeClaim> {
    let mut updated = claim.clone();
    if !annotate(&mut updated.metadata.annotations, true) {
        return Ok(updated);
    }
    cx.claim(Request::UpdateClaim(Box::new(updated)))
}

/// The volume with its migration annotation and deletion finalizers
/// right, written if they were not (upstream
/// `updateVolumeMigrationAnnotationsAndFinalizers`).
pub(super) fn update_volume_annotations(cx: &mut Cx<'_>, volume: &PersistentVolume) -> Step<PersistentVolume> {
    let mut updated = volume.clone();
    let annotated = annotate(&mut updated.metadata.annotations, false);
    let finalizers = deletion_finalizers(volume);
    let refinalized = finalizers.is_some();
    if let Some(finalizers) = finalizers {
        updated.metadata.finalizers = Some(finalizers);
    }
    if !annotated && !refinalized {
        return Ok(updated);
    }
    cx.volume(Request::UpdateVolume(Box::new(updated)))
}

/// The finalizers a dynamically provisioned volume should have, if they
/// differ from its own (upstream `modifyDeletionFinalizers`).
fn deletion_finalizers(volume: &PersistentVolume) -> Option<Vec<String>> {
    let provisioner = annotation(&volume.metadata, ANN_DYNAMICALLY_PROVISIONED)?;
    let mut finalizers = volume.metadata.finalizers.clone().unwrap_or_default();
    let has = |finalizers: &[String], f: &str| finalizers.iter().any(|x| x == f);
    let mut modified = false;
    if csi_driver(provisioner).is_some() {
        if has(&finalizers, IN_TREE_DELETION_FINALIZER) {
            finalizers.retain(|f| f != IN_TREE_DELETION_FINALIZER);
            modified = true;
        }
        return modified.then_some(finalizers);
    }
    if !provisioner.starts_with("kubernetes.io/") {
        return None;
    }
    match reclaim_policy(volume) {
        "Delete" if !has(&finalizers, IN_TREE_DELETION_FINALIZER) => {
            finalizers.push(IN_TREE_DELETION_FINALIZER.to_owned());
            modified = true;
        }
        "Retain" | "Recycle" if has(&finalizers, IN_TREE_DELETION_FINALIZER) => {
            finalizers.retain(|f| f != IN_TREE_DELETION_FINALIZER);
            modified = true;
        }
        _ => {}
    }
    if has(&finalizers, EXTERNAL_DELETION_FINALIZER) {
        finalizers.retain(|f| f != EXTERNAL_DELETION_FINALIZER);
        modified = true;
    }
    modified.then_some(finalizers)
}
