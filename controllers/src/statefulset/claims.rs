//! The claims of one sync's pods (upstream `stateful_pod_control.go`
//! `CreateStatefulPod`, `createMissingPersistentVolumeClaims`,
//! `createPersistentVolumeClaims`, `PodClaimIsStale`,
//! `ClaimsMatchRetentionPolicy`, `UpdatePodClaimForRetentionPolicy`): which
//! claims to create with a pod or for a Pending one, which cached claims
//! need their owner references rewritten, and when a claim blocks the pod.
//! The cache is read as upstream reads its claim lister: a claim it does not
//! hold is created, one it shows being deleted fails the pod's create.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod as ApiPod};
use kcm_objects::Pod;

use super::Action;
use super::control::Control;
use super::identity::{claims_for, ordinal};
use super::retention::{
    PodOwner, claim_owner_matches_set_and_pod, deletes_when_scaled, has_stale_pod_ref, has_unexpected_controller,
    update_claim_owner_ref_for_set_and_pod,
};
use super::write::Write;
use crate::plan::{Event, EventType};

/// Event reason: a claim another controller controls keeps that controller
/// (upstream spells the message "manging").
pub const CONFLICTING_CONTROLLER: &str = "ConflictingController";

impl<'a> Control<'a> {
    /// Creating the pod of a slot (upstream `CreateStatefulPod`, after
    /// `PodClaimIsStale`): nothing while a claim still belongs to an
    /// earlier pod of that name; a failure while a claim is being deleted.
    pub(super) fn create(&self, pod: &ApiPod) -> Vec<Action> {
        let o = self.slot_ordinal(pod);
        let owner = PodOwner { name: pod.metadata.name.as_deref().unwrap_or_default(), uid: "", ordinal: Some(o) };
        let cached: Vec<&PersistentVolumeClaim> =
            claims_for(self.set, o).iter().filter_map(|c| self.cached(c)).collect();
        if deletes_when_scaled(self.set) && cached.iter().any(|c| has_stale_pod_ref(c, &owner)) {
            return Vec::new();
        }
        if let Some(fail) = self.deleting_claim(o, owner.name, true) {
            return fail;
        }
        let mut chain = vec![Action::Own(Write::CreatePod {
            set: self.owner.clone(),
            claims: self.absent_claims(self.set, o),
            pod: Box::new(pod.clone()),
        })];
        chain.extend(self.retention_writes(self.set, &owner, true));
        chain
    }

    /// The claims a Pending pod needs that the cache does not hold.
    pub(super) fn missing_claims(&self, pod: &Pod) -> Vec<Action> {
        let o = ordinal(pod).unwrap_or_default();
        if let Some(fail) = self.deleting_claim(o, &pod.metadata.name, false) {
            return fail;
        }
        let claims = self.absent_claims(self.set, o);
        if claims.is_empty() {
            return Vec::new();
        }
        vec![Action::Own(Write::CreateClaims {
            set: self.owner.clone(),
            pod_name: pod.metadata.name.to_string(),
            claims,
        })]
    }

    /// A claim of `ordinal` the cache shows being deleted: upstream's
    /// `createPersistentVolumeClaims` error, with the pod's `FailedCreate`
    /// event when it blocks a create (a Pending pod's missing claims fail
    /// silently, as upstream).
    fn deleting_claim(&self, ordinal: i32, pod_name: &str, event: bool) -> Option<Vec<Action>> {
        let claim = claims_for(self.set, ordinal)
            .into_iter()
            .find(|c| self.cached(c).is_some_and(|c| c.metadata.deletion_timestamp.is_some()))?;
        let error = format!("pvc {} is being deleted", claim.metadata.name.unwrap_or_default());
        let event = event.then(|| Action::Event(super::pod_event(&self.owner, "create", pod_name, Some(&error))));
        Some(event.into_iter().chain([Action::Own(Write::Fail { set: self.owner.clone(), error })]).collect())
    }

    /// The claims of `ordinal` in `set` that the cache does not hold.
    pub(super) fn absent_claims(&self, set: &StatefulSet, ordinal: i32) -> Vec<PersistentVolumeClaim> {
        claims_for(set, ordinal).into_iter().filter(|c| self.cached(c).is_none()).collect()
    }

    /// The owner-reference updates of a pod's cached claims (upstream
    /// `ClaimsMatchRetentionPolicy`, then `UpdatePodClaimForRetentionPolicy`
    /// if they do not match, or in any case when `always`, as upstream runs
    /// it for a Pending pod); empty when they match.
    pub(super) fn claim_updates(
        &self,
        set: &StatefulSet,
        pod: &Pod,
        ordinal: Option<i32>,
        always: bool,
    ) -> Vec<Action> {
        let uid = pod.metadata.uid.to_string();
        let owner = PodOwner { name: &pod.metadata.name, uid: &uid, ordinal };
        self.retention_writes(set, &owner, always)
    }

    /// The claim updates, after a Warning `ConflictingController` for each
    /// claim another controller controls whenever upstream's
    /// `UpdatePodClaimForRetentionPolicy` would run.
    fn retention_writes(&self, set: &StatefulSet, pod: &PodOwner<'_>, always: bool) -> Vec<Action> {
        let Some(o) = pod.ordinal else { return Vec::new() };
        let cached: Vec<&PersistentVolumeClaim> = claims_for(set, o).iter().filter_map(|c| self.cached(c)).collect();
        let updates: Vec<Action> = cached
            .iter()
            .filter(|c| !claim_owner_matches_set_and_pod(c, set, pod))
            .map(|c| {
                let mut claim = (*c).clone();
                update_claim_owner_ref_for_set_and_pod(&mut claim, set, pod);
                Action::Own(Write::UpdateClaim {
                    set: self.owner.clone(),
                    pod_name: pod.name.to_owned(),
                    claim: Box::new(claim),
                })
            })
            .collect();
        if !always && updates.is_empty() {
            return updates;
        }
        let conflicts = cached.iter().filter(|c| has_unexpected_controller(c, set, pod)).map(|c| {
            let name = c.metadata.name.as_deref().unwrap_or_default();
            Action::Event(Event {
                regarding: self.owner.clone(),
                type_: EventType::Warning,
                reason: CONFLICTING_CONTROLLER.to_owned(),
                message: format!(
                    "PersistentVolumeClaim {name} has a conflicting OwnerReference that acts as a manging controller, \
                     the retention policy is ignored for this claim"
                ),
            })
        });
        conflicts.chain(updates).collect()
    }

    fn cached(&self, claim: &PersistentVolumeClaim) -> Option<&'a PersistentVolumeClaim> {
        self.claims
            .iter()
            .map(|c| &**c)
            .find(|c| c.metadata.name == claim.metadata.name && c.metadata.namespace == claim.metadata.namespace)
    }
}
