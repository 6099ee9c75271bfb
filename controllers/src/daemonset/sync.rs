//! One sync of a DaemonSet, in upstream's order (`syncDaemonSet`,
//! `updateDaemonSet`); the executor contract is in the module above.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use kcm_objects::Pod;

use super::history::{History, cleanup_history, construct_history, matches_revision};
use super::manage::{
    Context, NodePlan, nodes_to_daemon_pods, pods_should_be_on_node, sync_nodes, unscheduled_pods_without_node,
};
use super::status::{calculate_status, finish_with_status, status_write};
use super::template::is_rolling_update;
use super::update::rolling_update;
use super::{Action, Plan};
use super::{Options, Outcome, SELECTING_ALL, Snapshot, key, object_ref};
use crate::common::controller_ref::{claim_all, new_controller_ref, plan_claim_patches};
use crate::common::history::{claim_controller_revisions, plan_claims};
use crate::common::selector::{Selector, is_empty_selector};
use crate::plan::{Event, EventType, OwnerRefPatch};

/// Plans one sync of the snapshot's DaemonSet.
#[doc(alias = "syncDaemonSet")]
pub fn sync(snapshot: &Snapshot<'_>, options: &Options) -> Outcome {
    let ds = snapshot.daemon_set;
    let mut out = Outcome::default();
    if is_empty_selector(&ds.spec.selector) {
        out.plan.push(Action::Event(Event {
            regarding: object_ref(ds),
            type_: EventType::Warning,
            reason: SELECTING_ALL.into(),
            message: "This daemon set is selecting all pods. A non-empty selector is required.".into(),
        }));
        return out;
    }
    if ds.metadata.deletion_timestamp.is_some() {
        return out;
    }
    let selector = match Selector::new(Some(&ds.spec.selector)) {
        Ok(selector) => selector,
        Err(e) => {
            out.error = Some(format!("failed to construct revisions of DaemonSet: {e}"));
            return out;
        }
    };
    let plan = &mut out.plan;
    let owner = object_ref(ds);
    let cref = new_controller_ref(&ds.metadata, "apps/v1", "DaemonSet");

    let revisions = in_namespace(ds, snapshot.revisions.iter().map(|r| &**r), |r| r.metadata.namespace.as_deref());
    let revision_claims = claim_controller_revisions(&ds.metadata, &selector, revisions);
    plan_claims(plan, &owner, &cref, &revision_claims);
    let pods = in_namespace(ds, snapshot.pods.iter().map(|p| &**p), |p| Some(&*p.metadata.namespace));
    let pod_claims = claim_all(&ds.metadata, &selector, pods);
    plan_claim_patches(plan, &owner, &cref, &pod_claims, patch_pod);
    let claimed = &pod_claims.claimed;

    let History { hash, old } = construct_history(ds, &revision_claims.claimed, claimed, plan);
    let by_node = nodes_to_daemon_pods(claimed, false);
    if !snapshot.expectations.satisfied(&key(ds), snapshot.now) {
        let status = calculate_status(ds, snapshot.nodes, &by_node, &hash, false, snapshot.now);
        finish_with_status(ds, status, plan);
        return out;
    }

    let cx = Context { ds, hash: &hash, backoff: snapshot.backoff, now: snapshot.now };
    let managed = manage(&cx, snapshot, &by_node, options, plan, &mut out.backoff_next);
    if !managed
        && is_rolling_update(ds)
        && let Err(e) = rolling_update(&cx, snapshot.nodes, &by_node, options.burst_replicas, plan)
    {
        out.error = Some(format!("couldn't get unavailable numbers: {e}"));
    }
    if out.error.is_none() {
        cleanup_history(
            ds,
            &old,
            &nodes_to_daemon_pods(claimed, true).into_values().flatten().collect::<Vec<_>>(),
            plan,
        );
    }
    let status = calculate_status(ds, snapshot.nodes, &by_node, &hash, true, snapshot.now);
    finish_with_status(ds, status, plan);
    out
}

/// Appends `manage`'s writes: events, then creations and deletions.
/// Returns whether it planned any creation or deletion (the rolling update
/// waits for them).
fn manage(
    cx: &Context<'_>,
    snapshot: &Snapshot<'_>,
    by_node: &BTreeMap<&str, Vec<&Pod>>,
    options: &Options,
    plan: &mut Plan,
    backoff_next: &mut Vec<String>,
) -> bool {
    let mut create_on = Vec::new();
    let mut delete = Vec::new();
    for node in snapshot.nodes {
        let NodePlan { create, delete: d, events, backoff_next: b, requeue_after } =
            pods_should_be_on_node(cx, node, by_node.get(&*node.metadata.name));
        if create {
            create_on.push(&*node.metadata.name);
        }
        delete.extend(d);
        plan.push_concurrent(events.into_iter().map(Action::Event).collect());
        backoff_next.extend(b);
        if let Some(after) = requeue_after {
            plan.requeue_after = Some(plan.requeue_after.map_or(after, |d| d.min(after)));
        }
    }
    delete.extend(unscheduled_pods_without_node(snapshot.nodes, by_node));
    sync_nodes(cx.ds, &delete, &create_on, cx.hash, options.burst_replicas, plan)
}

/// The rest of the sync once a create or delete step failed: the status
/// upstream still writes (observedGeneration raised). The sync then ends
/// with the failed write's error ([`SyncMachine`](super::SyncMachine)).
pub fn after_manage_error(snapshot: &Snapshot<'_>) -> Plan {
    let ds = snapshot.daemon_set;
    let mut plan = Plan::new();
    let Ok(selector) = Selector::new(Some(&ds.spec.selector)) else { return plan };
    let pods = in_namespace(ds, snapshot.pods.iter().map(|p| &**p), |p| Some(&*p.metadata.namespace));
    let claims = claim_all(&ds.metadata, &selector, pods);
    let by_node = nodes_to_daemon_pods(&claims.claimed, false);
    let revisions = in_namespace(ds, snapshot.revisions.iter().map(|r| &**r), |r| r.metadata.namespace.as_deref());
    let current = claim_controller_revisions(&ds.metadata, &selector, revisions)
        .claimed
        .into_iter()
        .filter(|r| matches_revision(ds, r))
        .max_by_key(|r| crate::common::history::number(r));
    let hash = current
        .and_then(|r| r.metadata.labels.as_ref()?.get(super::CONTROLLER_REVISION_HASH_LABEL).cloned())
        .unwrap_or_default();
    let status = calculate_status(ds, snapshot.nodes, &by_node, &hash, true, snapshot.now);
    finish_with_status(ds, status, &mut plan);
    plan
}

/// The plan once the current revision's create found its name taken by
/// `existing` (read live; upstream `snapshot`'s AlreadyExists branch): none
/// when `existing` holds the current template (the cache was behind; the
/// retry finds it); otherwise a hash collision: `status.collisionCount`
/// raised by one, written without retry so that a DaemonSet changed since
/// the snapshot (a stale count) is not bumped twice. Either way the sync
/// then ends with an error ([`SyncMachine`](super::SyncMachine)).
pub fn after_already_exists(ds: &DaemonSet, existing: &ControllerRevision) -> Plan {
    let mut plan = Plan::new();
    if matches_revision(ds, existing) {
        return plan;
    }
    let mut status = ds.status.clone().unwrap_or_default();
    status.collision_count = Some(status.collision_count.unwrap_or(0).saturating_add(1));
    plan.push(status_write(ds, status, false));
    plan
}

fn in_namespace<'a, T: 'a>(
    ds: &DaemonSet,
    items: impl Iterator<Item = &'a T>,
    namespace: impl Fn(&T) -> Option<&str>,
) -> Vec<&'a T> {
    let ns = ds.metadata.namespace.as_deref().unwrap_or_default();
    items.filter(|i| namespace(i).unwrap_or_default() == ns).collect()
}

fn patch_pod(pod: &Pod, patch: OwnerRefPatch) -> Action {
    Action::PatchPodOwnerRefs {
        namespace: pod.metadata.namespace.to_string(),
        name: pod.metadata.name.to_string(),
        uid: pod.metadata.uid.to_string(),
        patch,
    }
}
