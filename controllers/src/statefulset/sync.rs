//! One sync of a StatefulSet (upstream `stateful_set.go` `sync` and
//! `stateful_set_control.go` `UpdateStatefulSet`, `performUpdate`,
//! `updateStatefulSet`, `updateStatefulSetStatus`): the dispatcher between
//! the phases, in upstream's order (see the module above).

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetStatus};
use kcm_objects::Pod;

use super::control::{Control, Versions};
use super::identity::is_member_of;
use super::revisions::{Revisions, apply_revision, stateful_set_revisions, truncate_history};
use super::status::{complete_rolling_update, count_pods, inconsistent_status, requeue_after};
use super::write::{StatusUpdate, Write};
use super::{Action, Plan};
use super::{Options, Snapshot, min_ready_seconds, object_ref, strategy_type};
use crate::common::controller_ref::{Claims, claim, claim_all, new_controller_ref};
use crate::common::history;
use crate::common::selector::Selector;
use crate::plan::OwnerRefPatch;

/// Plans one sync of the snapshot's StatefulSet, in upstream's order (see
/// the module above). A selector that cannot be evaluated, or a revision
/// without a template, plans nothing (upstream logs the first and returns
/// the second as an error; retrying does not help until the object changes).
#[doc(alias = "UpdateStatefulSet")]
pub fn sync(snapshot: &Snapshot<'_>, options: &Options) -> Plan {
    let set = snapshot.set;
    let Ok(selector) = Selector::new(Some(&set.spec.selector)) else { return Plan::new() };
    let mut plan = Plan::new();
    let revisions = adopt_orphan_revisions(snapshot, &selector, &mut plan);
    let pods = claim_pods(snapshot, &selector, &mut plan);

    let found = stateful_set_revisions(set, &revisions);
    if let Some(write) = found.write.clone() {
        plan.push(Action::ControllerRevision(write));
    }
    let (Ok(current_set), Ok(update_set)) = (apply_revision(set, &found.current), apply_revision(set, &found.update))
    else {
        return Plan::new();
    };
    let versions = Versions {
        current_set: &current_set,
        update_set: &update_set,
        current_name: found.current.metadata.name.as_deref().unwrap_or_default(),
        update_name: found.update.metadata.name.as_deref().unwrap_or_default(),
    };
    let mut control = Control::new(set, versions, &pods, snapshot.claims, base_status(set, &found), snapshot.now);
    let status = if set.metadata.deletion_timestamp.is_some() {
        let mut status = control.status.clone();
        count_pods(&mut status, pods.iter().copied(), min_ready_seconds(set), snapshot.now);
        status
    } else {
        let proceed = control.run();
        control.recount();
        if proceed && strategy_type(set) != "OnDelete" && control.rolling_update(options).is_err() {
            return Plan::new();
        }
        control.status.clone()
    };
    plan.steps.append(&mut control.plan.steps);
    finish(set, &pods, &revisions, &found, status, plan)
}

/// The rest of a sync whose write failed (upstream writes the status and
/// truncates the history even then): the status of the pods as the cache
/// shows them, and the history cleanup. `collision_count` is the count a
/// renamed revision create ended with, if that is what stopped the plan.
pub fn after_failure(snapshot: &Snapshot<'_>, collision_count: Option<i32>) -> Plan {
    let set = snapshot.set;
    let Ok(selector) = Selector::new(Some(&set.spec.selector)) else { return Plan::new() };
    let revisions = listed_revisions(snapshot, &selector);
    let pods = claim_pods(snapshot, &selector, &mut Plan::new());
    let mut found = stateful_set_revisions(set, &revisions);
    if let Some(count) = collision_count {
        found.collision_count = count;
    }
    let mut status = base_status(set, &found);
    let with_ordinal: Vec<&Pod> = pods.iter().copied().filter(|p| super::identity::ordinal(p).is_some()).collect();
    count_pods(&mut status, with_ordinal, min_ready_seconds(set), snapshot.now);
    finish(set, &pods, &revisions, &found, status, Plan::new())
}

/// The revisions the set lists as its own, oldest first (upstream
/// `ListRevisions` then `SortControllerRevisions`).
fn listed_revisions<'a>(snapshot: &Snapshot<'a>, selector: &Selector) -> Vec<&'a ControllerRevision> {
    let cached = snapshot.revisions.iter().map(|r| &**r);
    let mut revisions = history::list_controller_revisions(&snapshot.set.metadata, selector, cached);
    history::sort_controller_revisions(&mut revisions);
    revisions
}

/// Upstream `adoptOrphanRevisions`: the listed revisions without a
/// controller are adopted after a live re-check of the set.
fn adopt_orphan_revisions<'a>(
    snapshot: &Snapshot<'a>,
    selector: &Selector,
    plan: &mut Plan,
) -> Vec<&'a ControllerRevision> {
    let set = snapshot.set;
    let revisions = listed_revisions(snapshot, selector);
    let orphans: Vec<&ControllerRevision> = revisions
        .iter()
        .copied()
        .filter(|r| crate::common::controller_ref::controller_of(&r.metadata).is_none())
        .collect();
    let claims = Claims { claimed: orphans.clone(), adopt: orphans, release: Vec::new() };
    let cref = new_controller_ref(&set.metadata, "apps/v1", "StatefulSet");
    history::plan_claims(plan, &object_ref(set), &cref, &claims);
    revisions
}

/// Upstream `getPodsForStatefulSet`: the namespace's pods claimed with the
/// selector, only members (`<set>-<ordinal>`) matching; owned pods that are
/// not members are released. Inactive pods are claimed too.
fn claim_pods<'a>(snapshot: &Snapshot<'a>, selector: &Selector, plan: &mut Plan) -> Vec<&'a Pod> {
    let set = snapshot.set;
    let nothing = Selector::new(None).unwrap_or_else(|_| selector.clone());
    let in_namespace = snapshot.pods.iter().map(|p| &**p).filter(|p| p.metadata.namespace == super::namespace(set));
    let (members, others): (Vec<&Pod>, Vec<&Pod>) = in_namespace.partition(|p| is_member_of(set, p));
    let mut claims = claim_all(&set.metadata, selector, members);
    let released = others.into_iter().filter(|p| {
        use crate::common::controller_ref::{Claim, Dependent};
        claim(&set.metadata, &nothing, &p.dependent()) == Claim::Release
    });
    claims.release.extend(released);
    let owner = object_ref(set);
    let patch = |pod: &Pod, patch: OwnerRefPatch| Action::PatchPodOwnerRefs {
        namespace: pod.metadata.namespace.to_string(),
        name: pod.metadata.name.to_string(),
        uid: pod.metadata.uid.to_string(),
        patch,
    };
    plan.push_concurrent(
        claims.release.iter().map(|p| patch(p, OwnerRefPatch::Release { owner_uid: owner.uid.clone() })).collect(),
    );
    if !claims.adopt.is_empty() {
        plan.push(Action::RecheckOwner { owner });
        let cref = new_controller_ref(&set.metadata, "apps/v1", "StatefulSet");
        plan.push_concurrent(claims.adopt.iter().map(|p| patch(p, OwnerRefPatch::Adopt(cref.clone()))).collect());
    }
    claims.claimed
}

/// The status fields a sync sets before counting pods.
fn base_status(set: &StatefulSet, found: &Revisions) -> StatefulSetStatus {
    StatefulSetStatus {
        observed_generation: set.metadata.generation,
        current_revision: found.current.metadata.name.clone(),
        update_revision: found.update.metadata.name.clone(),
        collision_count: Some(found.collision_count),
        ..Default::default()
    }
}

/// The rollover, the status write if it changed, the history cleanup and
/// the `minReadySeconds` requeue.
fn finish(
    set: &StatefulSet,
    pods: &[&Pod],
    revisions: &[&ControllerRevision],
    found: &Revisions,
    mut status: StatefulSetStatus,
    mut plan: Plan,
) -> Plan {
    complete_rolling_update(set, &mut status);
    if inconsistent_status(set, &status) {
        plan.push(Action::Own(Write::UpdateStatus(StatusUpdate {
            set: object_ref(set),
            resource_version: set.metadata.resource_version.clone(),
            status: Box::new(status.clone()),
        })));
    }
    let live =
        [found.current.metadata.name.as_deref().unwrap_or(""), found.update.metadata.name.as_deref().unwrap_or("")];
    for write in truncate_history(set, pods, revisions, live) {
        plan.push(Action::ControllerRevision(write));
    }
    plan.requeue_after = requeue_after(set, &status);
    plan
}
