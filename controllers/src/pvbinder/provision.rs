//! Dynamic provisioning (upstream `provisionClaim`,
//! `provisionClaimOperationExternal`): the claim is annotated with the
//! provisioner its class names, which then creates the volume; an in-tree
//! plugin migrated to CSI is named by its CSI driver.
//!
//! Upstream runs this in a goroutine of its own with a per-claim backoff;
//! here it runs within the claim's sync, and a failure is only evented, as
//! upstream's does not fail the sync either.

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kcm_objects::EventType;

use crate::common::csi_migration::csi_driver;
use crate::pvbinder::cx::{Cx, Flow, Reply, Request, Step};
use crate::pvbinder::matching::claim_class;
use crate::pvbinder::metrics::{Metric, Operation};
use crate::pvbinder::migration::annotate;
use crate::pvbinder::status::claim_event;
use crate::pvbinder::{
    ANN_BETA_STORAGE_PROVISIONER, ANN_STORAGE_PROVISIONER, Settings, View, annotation, claim_key, set_annotation,
};

/// The in-tree provisioner upstream still has, for testing clusters
/// (`--enable-hostpath-provisioner`).
const HOST_PATH: &str = "kubernetes.io/host-path";

/// Upstream `provisionClaim`.
pub(super) fn provision_claim(
    view: &dyn View,
    claim: &PersistentVolumeClaim,
    settings: Settings,
    cx: &mut Cx<'_>,
) -> Step<()> {
    if !settings.dynamic_provisioning {
        return Ok(());
    }
    let failed = |cx: &mut Cx<'_>, message: String| {
        cx.event(claim_event(claim, EventType::Warning, "ProvisioningFailed", message))
    };
    let name = claim_class(claim);
    let Some(class) = view.class(name) else {
        return failed(cx, format!("storageclass.storage.k8s.io {name:?} not found"));
    };
    let provisioner = class.provisioner.as_str();
    let provisioner = match csi_driver(provisioner) {
        Some(driver) => driver,
        None if provisioner == HOST_PATH => {
            // Upstream's host-path plugin refuses unless enabled, and kcm-rs
            // does not run it even then.
            started(cx, claim, provisioner)?;
            let claim = set_provisioner(cx, claim, provisioner)?;
            cx.event(claim_event(
                &claim,
                EventType::Warning,
                "ProvisioningFailed",
                "Failed to create provisioner: kcm-rs does not run in-tree volume plugins: the host-path provisioner is not implemented".to_owned(),
            ))?;
            return cx.record(Metric::OperationEnded { key: claim_key(&claim), failed: true });
        }
        None if provisioner == "kubernetes.io/nfs" => {
            return failed(cx, "no provisionable volume plugin matched".to_owned());
        }
        None if provisioner.starts_with("kubernetes.io/") => {
            return failed(cx, format!("no volume plugin matched name: {provisioner}"));
        }
        None => provisioner,
    };
    started(cx, claim, provisioner)?;
    let claim = match set_provisioner(cx, claim, provisioner) {
        Ok(claim) => claim,
        Err(Flow::Fail(error)) => {
            failed(cx, format!("Error saving claim: {error}"))?;
            return cx.record(Metric::OperationEnded { key: claim_key(claim), failed: true });
        }
        Err(need) => return Err(need),
    };
    let message = format!(
        "Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually by the system \
         administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered."
    );
    cx.event(claim_event(&claim, EventType::Normal, "ExternalProvisioning", message))
}

/// Times the claim's provisioning from now, by its provisioner's name,
/// unless it is timed already (upstream `provisionClaim`'s
/// `AddIfNotExist`, its `getProvisionerName`): it ends when the claim is
/// bound.
fn started(cx: &mut Cx<'_>, claim: &PersistentVolumeClaim, provisioner: &str) -> Step<()> {
    let (key, plugin) = (claim_key(claim), provisioner.to_owned());
    cx.record(Metric::OperationStarted { key, plugin, operation: Operation::Provision })
}

/// The claim annotated with its provisioner, written if it was not
/// (upstream `setClaimProvisioner`).
fn set_provisioner(cx: &mut Cx<'_>, claim: &PersistentVolumeClaim, provisioner: &str) -> Step<PersistentVolumeClaim> {
    if annotation(&claim.metadata, ANN_STORAGE_PROVISIONER) == Some(provisioner) {
        return Ok(claim.clone());
    }
    let mut updated = claim.clone();
    set_annotation(&mut updated.metadata, ANN_BETA_STORAGE_PROVISIONER, provisioner);
    set_annotation(&mut updated.metadata, ANN_STORAGE_PROVISIONER, provisioner);
    annotate(&mut updated.metadata.annotations, true);
    match cx.call(Request::UpdateClaim(Box::new(updated)))? {
        Reply::Claim(written) => Ok(*written),
        Reply::Failed(message) => Err(Flow::Fail(message)),
        other => Err(Flow::Fail(format!("unexpected answer {other:?}"))),
    }
}
