//! The [`Planner`]: the state of one sync of a Deployment, its claim on the
//! namespace's ReplicaSets (upstream `getReplicaSetsForDeployment`), the
//! lookups every path shares and the status write.
//!
//! The planner holds its own copies of the Deployment and of the claimed
//! ReplicaSets; every intended write updates those copies as it is
//! appended to the plan, so later decisions of the same sync see it. The
//! phases of a sync add their own `impl Planner` blocks beside their logic:
//! `new_replica_set`, `scale`, `cleanup`, `status`, `progress`, `rolling`,
//! `recreate`, `rollback`; `sync` dispatches between them.

use std::cmp::Ordering;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::DeploymentStatus;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use kcm_objects::Deployment;
use kcm_objects::ReplicaSet;
use kcm_objects::{OwnerRef, Pod, Uid};

use super::{Options, Snapshot, object_ref};
use crate::common::controller_ref::{claim_all, new_controller_ref};
use crate::common::replica_set::replicas as rs_replicas;
use crate::common::selector::Selector;
use crate::plan::{Action, Event, EventType, OwnerRefPatch, Plan};

/// An event about `d`.
pub(super) fn event(d: &Deployment, type_: EventType, reason: &str, message: String) -> Event {
    Event { regarding: object_ref(d), type_, reason: reason.to_owned(), message }
}

/// Upstream's `ReplicaSetsByCreationTimestamp`: older first, then by name.
pub(super) fn by_creation(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    let t = |rs: &ReplicaSet| rs.metadata.creation_timestamp;
    t(a).cmp(&t(b)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// The state of one sync: local copies and the plan so far.
pub(super) struct Planner<'a> {
    /// The Deployment as the plan so far leaves it.
    pub(super) d: Deployment,
    /// The claimed ReplicaSets as the plan so far leaves them (a created one
    /// is appended).
    pub(super) rss: Vec<ReplicaSet>,
    /// Pods controlled by a claimed ReplicaSet and matching the selector,
    /// inactive ones included (upstream `getPodMapForDeployment`).
    pub(super) pods: Vec<&'a Pod>,
    pub(super) now: Timestamp,
    pub(super) options: &'a Options,
    pub(super) plan: Plan,
}

/// Which claimed ReplicaSet: an index into [`Planner::rss`].
pub(super) type Rs = usize;

// === impl Planner: claims and lookups ===

impl<'a> Planner<'a> {
    /// Claims the namespace's ReplicaSets (upstream
    /// `getReplicaSetsForDeployment`): releases first, then the live
    /// re-check of the Deployment, then the adoptions.
    pub(super) fn claim(snapshot: &Snapshot<'a>, selector: &Selector, options: &'a Options) -> Self {
        let d = snapshot.deployment;
        let candidates =
            snapshot.replica_sets.iter().map(|rs| &**rs).filter(|rs| rs.metadata.namespace == d.metadata.namespace);
        let claims = claim_all(&d.metadata, selector, candidates);
        let owner = object_ref(d);
        let mut plan = Plan::new();
        let patch = |rs: &ReplicaSet, patch: OwnerRefPatch| Action::PatchReplicaSetOwnerRefs {
            namespace: rs.metadata.namespace.to_string(),
            name: rs.metadata.name.to_string(),
            uid: rs.metadata.uid.to_string(),
            patch,
        };
        plan.push_concurrent(
            claims
                .release
                .iter()
                .map(|rs| patch(rs, OwnerRefPatch::Release { owner_uid: owner.uid.clone() }))
                .collect(),
        );
        let cref = new_controller_ref(&d.metadata, "apps/v1", "Deployment");
        if !claims.adopt.is_empty() {
            plan.push(Action::RecheckOwner { owner });
            plan.push_concurrent(claims.adopt.iter().map(|rs| patch(rs, OwnerRefPatch::Adopt(cref.clone()))).collect());
        }
        let rss: Vec<ReplicaSet> = claims
            .claimed
            .iter()
            .map(|rs| {
                let mut rs = (*rs).clone();
                if rs.metadata.controller().is_none() {
                    let owners: Vec<OwnerRef> =
                        rs.metadata.owner_references.iter().cloned().chain([OwnerRef::new(&cref)]).collect();
                    rs.metadata.owner_references = owners.into();
                }
                rs
            })
            .collect();
        let pods = if super::is_recreate(d) {
            let uids: Vec<&Uid> = rss.iter().map(|rs| &rs.metadata.uid).collect();
            snapshot
                .pods
                .iter()
                .map(|p| &**p)
                .filter(|p| p.metadata.namespace == d.metadata.namespace && selector.matches(&p.metadata.labels))
                .filter(|p| p.metadata.controller().is_some_and(|r| uids.iter().any(|&uid| *uid == *r.uid)))
                .collect()
        } else {
            Vec::new()
        };
        Self { d: d.clone(), rss, pods, now: snapshot.now, options, plan }
    }

    /// Indices of `rss` sorted by creation (upstream
    /// `ReplicaSetsByCreationTimestamp`).
    pub(super) fn by_creation(&self, mut rss: Vec<Rs>) -> Vec<Rs> {
        rss.sort_by(|&a, &b| by_creation(&self.rss[a], &self.rss[b]));
        rss
    }

    pub(super) fn template(&self) -> PodTemplateSpec {
        self.d.template()
    }

    /// ReplicaSets with `spec.replicas > 0` (upstream
    /// `FilterActiveReplicaSets`).
    pub(super) fn active(&self, rss: &[Rs]) -> Vec<Rs> {
        rss.iter().copied().filter(|&i| rs_replicas(&self.rss[i]) > 0).collect()
    }

    /// References to the ReplicaSets `rss` (and `new`, if any).
    pub(super) fn refs(&self, new: Option<Rs>, rss: &[Rs]) -> Vec<&ReplicaSet> {
        rss.iter().copied().chain(new).map(|i| &self.rss[i]).collect()
    }

    pub(super) fn name(&self, rs: Rs) -> String {
        self.rss[rs].metadata.name.to_string()
    }
}

// === impl Planner: the Deployment's status ===

impl Planner<'_> {
    /// Writes the local Deployment through `/status`.
    pub(super) fn push_status(&mut self) {
        self.plan.push(Action::UpdateDeploymentStatus { deployment: Box::new(self.d.full()) });
    }

    /// Sets the status locally and writes it.
    pub(super) fn update_status(&mut self, status: DeploymentStatus) {
        self.d.status = Some(status);
        self.push_status();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::testing::{DeploymentBuilder, RsB, World, cond, conditions};
    use crate::deployment::{FOUND_NEW_RS_REASON, PROGRESSING};

    /// Scenario 34: an orphan with the current template is adopted (after the
    /// re-check) and used as the new RS: FoundNewReplicaSet.
    #[test]
    fn orphan_is_adopted_as_the_new_replica_set() {
        let w = World::new(DeploymentBuilder::new(2), [RsB::new("mine", 2).image("v2").orphan()]);
        let lines = w.lines();
        assert_eq!(lines[..2], ["recheck", "adopt mine"]);
        assert!(!lines.iter().any(|l| l.starts_with("create")), "{lines:?}");
        let s = w.last_status().unwrap();
        assert!(conditions(&s).iter().any(|c| c.0 == PROGRESSING), "{s:?}");
        let first_status = w.plan().actions().find_map(|a| match a {
            Action::UpdateDeploymentStatus { deployment } => deployment.status.clone(),
            _ => None,
        });
        assert!(conditions(&first_status.unwrap()).contains(&cond(PROGRESSING, "True", FOUND_NEW_RS_REASON)));
        // Deleting orphans and other owners' ReplicaSets are left alone.
        let w = World::new(DeploymentBuilder::new(2), [RsB::new("x", 2).image("v2").orphan().deleting()]);
        assert!(!w.lines().iter().any(|l| l.starts_with("adopt")));
    }

    /// Scenario 35: an owned RS relabelled away is released.
    #[test]
    fn non_matching_owned_replica_set_is_released() {
        let w = World::new(
            DeploymentBuilder::new(1),
            [RsB::new("gone", 1).labels(&[("app", "other")]), RsB::new("cur", 1).image("v2")],
        );
        assert_eq!(w.lines()[0], "release gone");
    }
}
