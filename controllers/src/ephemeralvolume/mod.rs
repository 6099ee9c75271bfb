//! The ephemeral volume controller's decisions (upstream
//! `pkg/controller/volume/ephemeral/controller.go`): for a pod with
//! generic ephemeral volumes, the claims to create from their templates.
//!
//! Upstream's `syncHandler` walks the pod's volumes in order. For each
//! generic ephemeral volume `<volume>` it looks up the claim
//! `<pod>-<volume>` in the cache:
//! - found, and the pod controls it: nothing to do for that volume;
//! - found, and not the pod's (another owner, none, or not the
//!   controller): the sync fails there, with upstream's message
//!   (`PVC <ns>/<name> was not created for pod <ns>/<pod> (pod is not
//!   owner)`), and the pod is retried with backoff;
//! - not found: the claim is created from the template, owned by the pod
//!   (`controller: true`, `blockOwnerDeletion: true`), with the
//!   template's labels, annotations and spec; a failed create fails the
//!   sync there.
//!
//! A pod being deleted, or gone, needs nothing. [`plan`] answers the steps
//! in that order; the driver makes each create and stops at the first
//! failure, recording on the pod the `FailedBinding` warning
//! [`failed_binding_message`] words.

use std::sync::Arc;

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kcm_objects::{EphemeralVolume, Pod};

use crate::common::ephemeral::{volume_claim_name, volume_is_for_pod};

#[cfg(test)]
mod tests;

/// The reason of the warning recorded on a pod whose sync failed
/// (upstream `events.FailedBinding`).
pub const FAILED_BINDING: &str = "FailedBinding";

/// One step of a pod's sync, in the pod's volume order.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Create this claim for the volume; a failure ends the sync.
    Create {
        /// The volume's name.
        volume: Box<str>,
        /// The claim, in the pod's namespace.
        claim: Box<PersistentVolumeClaim>,
    },
    /// The claim of that name exists and is not the pod's: the sync fails
    /// with this message, and no later volume is looked at.
    NotOwner {
        /// The volume's name.
        volume: Box<str>,
        /// Upstream's `VolumeIsForPod` error.
        message: String,
    },
}

/// Whether a pod event queues the pod (upstream `enqueuePod`): it is not
/// being deleted and has a generic ephemeral volume.
pub fn should_queue(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp().is_none() && !pod.spec.rare().ephemeral_volumes.is_empty()
}

/// The steps of a pod's sync (upstream `syncHandler` and `handleVolume`),
/// `cached_claim` giving the cached claim of a name in the pod's
/// namespace. A pod being deleted gets none.
pub fn plan(pod: &Pod, cached_claim: impl Fn(&str) -> Option<Arc<PersistentVolumeClaim>>) -> Vec<Step> {
    if pod.metadata.deletion_timestamp().is_some() {
        return Vec::new();
    }
    let mut steps = Vec::new();
    for volume in pod.spec.rare().ephemeral_volumes.iter() {
        let name = volume_claim_name(pod, &volume.name);
        match cached_claim(&name) {
            Some(existing) => {
                if let Err(message) = volume_is_for_pod(pod, &existing) {
                    steps.push(Step::NotOwner { volume: volume.name.clone(), message });
                    break;
                }
            }
            None => steps.push(Step::Create { volume: volume.name.clone(), claim: Box::new(claim_for(pod, volume)) }),
        }
    }
    steps
}

/// The claim upstream creates for a pod's volume: named `<pod>-<volume>`,
/// controlled by the pod, with the template's labels, annotations and
/// spec (nothing else of the template's metadata).
pub fn claim_for(pod: &Pod, volume: &EphemeralVolume) -> PersistentVolumeClaim {
    let template = &volume.claim_template;
    let owner = OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: pod.metadata.name.to_string(),
        uid: pod.metadata.uid.to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(volume_claim_name(pod, &volume.name)),
            owner_references: Some(vec![owner]),
            annotations: template.metadata.as_ref().and_then(|m| m.annotations.clone()),
            labels: template.metadata.as_ref().and_then(|m| m.labels.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(template.spec.clone()),
        status: None,
    }
}

/// The message of the `FailedBinding` warning for a volume whose step
/// failed with `error` (upstream's `ephemeral volume <volume>: <error>`).
pub fn failed_binding_message(volume: &str, error: &str) -> String {
    format!("ephemeral volume {volume}: {error}")
}

/// Upstream's error for a failed create, as the event shows it.
pub fn create_error(claim: &str, error: &str) -> String {
    format!("create PVC {claim}: {error}")
}
