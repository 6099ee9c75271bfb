//! The pods a Job controls (upstream `getPodsForJob`): every pod of its
//! namespace is a candidate, so that owned pods that no longer match are
//! released, with the tracking finalizer removed in the same patch;
//! matching orphans are adopted, with the tracking finalizer added in the
//! same patch, after a live re-check of the Job.

use std::collections::HashSet;
use std::sync::Arc;

use k8s_openapi::api::batch::v1::Job;
use kcm_objects::Pod;

use super::object_ref;
use super::write::Write;
use super::{Action, Plan};
use crate::common::controller_ref::{claim_all, new_controller_ref};
use crate::common::selector::Selector;

/// The pods a Job controls after the claim.
pub(super) struct Claimed<'a> {
    /// Owned and adopted pods, in cache order.
    pub pods: Vec<&'a Pod>,
    /// Uids of the adopted ones.
    pub adopted: HashSet<String>,
}

/// Claims the Job's pods among `candidates` and appends the patches to
/// `plan`; `None` when the selector is invalid.
pub(super) fn claim_pods<'a>(job: &Job, candidates: &'a [Arc<Pod>], plan: &mut Plan) -> Option<Claimed<'a>> {
    let selector = Selector::new(job.spec.as_ref()?.selector.as_ref()).ok()?;
    let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
    let in_namespace = candidates.iter().map(|p| &**p).filter(|p| &*p.metadata.namespace == namespace);
    let claims = claim_all(&job.metadata, &selector, in_namespace);
    let owner = object_ref(job);
    plan.push_concurrent(
        claims
            .release
            .iter()
            .map(|p| {
                Action::Own(Write::ReleasePod {
                    namespace: p.metadata.namespace.to_string(),
                    name: p.metadata.name.to_string(),
                    uid: p.metadata.uid.to_string(),
                    owner_uid: owner.uid.clone(),
                })
            })
            .collect(),
    );
    if !claims.adopt.is_empty() {
        let controller_ref = new_controller_ref(&job.metadata, "batch/v1", "Job");
        plan.push(Action::RecheckOwner { owner });
        plan.push_concurrent(
            claims
                .adopt
                .iter()
                .map(|p| {
                    Action::Own(Write::AdoptPod {
                        namespace: p.metadata.namespace.to_string(),
                        name: p.metadata.name.to_string(),
                        uid: p.metadata.uid.to_string(),
                        controller_ref: controller_ref.clone(),
                    })
                })
                .collect(),
        );
    }
    let adopted = claims.adopt.iter().map(|p| p.metadata.uid.to_string()).collect();
    Some(Claimed { pods: claims.claimed, adopted })
}
