//! A daemon pod on every node that should run one, and none elsewhere
//! (upstream `manage`, `podsShouldBeOnNode`, `syncNodes`,
//! `getUnscheduledPodsWithoutNode`).
//!
//! Per node, with `(should_run, should_continue_running)` from
//! [`node_should_run_daemon_pod`]:
//! - should run and has no pod: create one;
//! - may keep running: failed pods are deleted (at most once per backoff
//!   delay, with the Warning `FailedDaemonPod`), succeeded ones too
//!   (Normal `SucceededDaemonPod`); of the rest, without surge every pod but
//!   the oldest goes; with surge at most the oldest pod of the current
//!   revision and the oldest older one stay, and the older one goes once
//!   it is not ready or the new one is available; with surge and nothing
//!   left, a pod is created;
//! - may not keep running: every pod goes.
//!
//! Pods still pending for a node that no longer exists are deleted too
//! (no pod GC would ever remove them). Creations and deletions are each
//! capped at the burst size; creations run in slow-start steps (1, 2,
//! 4, ...), as the ReplicaSet controller's do, the deletions alongside the
//! first step.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::DaemonSet;
use kcm_objects::{Node, Pod};

use super::backoff::{FailedPodsBackoff, failed_pods_backoff_key};
use super::placement::node_should_run_daemon_pod;
use super::template::{
    allows_surge, create_pod_template, replace_daemon_set_pod_node_name_node_affinity, template_generation,
};
use super::{Action, Plan};
use super::{CONTROLLER_REVISION_HASH_LABEL, FAILED_DAEMON_POD, SUCCEEDED_DAEMON_POD, key, object_ref};
use crate::common::controller_ref::new_controller_ref;
use crate::common::pod::{is_pod_available, is_pod_ready, is_pod_terminal};
use crate::common::pod_control::pod_from_template;
use crate::common::slow_start::slow_start_batches;
use crate::plan::{Event, EventType};

/// Daemon pods by the node they are on or for (upstream
/// `getNodesToDaemonPods`): pods with no such node are left out, and so
/// are terminal pods being deleted unless `include_deleted_terminal`.
pub(super) fn nodes_to_daemon_pods<'a>(
    claimed: &[&'a Pod],
    include_deleted_terminal: bool,
) -> BTreeMap<&'a str, Vec<&'a Pod>> {
    let mut by_node: BTreeMap<&str, Vec<&Pod>> = BTreeMap::new();
    for &pod in claimed {
        if !include_deleted_terminal && is_pod_terminal(pod) && pod.metadata.deletion_timestamp().is_some() {
            continue;
        }
        if let Some(node) = pod.target_node_name() {
            by_node.entry(node).or_default().push(pod);
        }
    }
    by_node
}

/// Oldest first, scheduled pods before pending ones, then by name
/// (upstream `podByCreationTimestampAndPhase`).
pub(super) fn sort_by_creation(pods: &mut [&Pod]) {
    pods.sort_by(|a, b| {
        b.node_name()
            .is_some()
            .cmp(&a.node_name().is_some())
            .then_with(|| a.metadata.creation_timestamp().cmp(&b.metadata.creation_timestamp()))
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
}

/// What a sync does about one node.
#[derive(Default)]
pub(super) struct NodePlan<'a> {
    /// Create a pod there.
    pub create: bool,
    /// Pods to delete.
    pub delete: Vec<&'a Pod>,
    /// Events to record.
    pub events: Vec<Event>,
    /// Failed-pod backoff key stepped by a deletion.
    pub backoff_next: Option<String>,
    /// A failed pod left alone in backoff: look again after this long.
    pub requeue_after: Option<Duration>,
}

/// What the sync reads to decide for each node.
pub(super) struct Context<'a> {
    pub ds: &'a DaemonSet,
    pub hash: &'a str,
    pub backoff: &'a FailedPodsBackoff,
    pub now: Timestamp,
}

/// The decision for `node` (upstream `podsShouldBeOnNode`).
pub(super) fn pods_should_be_on_node<'a>(cx: &Context<'_>, node: &Node, pods: Option<&Vec<&'a Pod>>) -> NodePlan<'a> {
    let (should_run, should_continue_running) = node_should_run_daemon_pod(node, cx.ds);
    let mut out = NodePlan::default();
    let Some(pods) = pods else {
        out.create = should_run;
        return out;
    };
    if !should_continue_running {
        out.delete = pods.iter().copied().filter(|p| p.metadata.deletion_timestamp().is_none()).collect();
        return out;
    }
    let node_name = &*node.metadata.name;
    let mut running = Vec::new();
    for &pod in pods.iter().filter(|p| p.metadata.deletion_timestamp().is_none()) {
        match pod.phase() {
            "Failed" => {
                let backoff_key = failed_pods_backoff_key(cx.ds, node_name);
                if cx.backoff.in_backoff_since_update(&backoff_key, cx.now) {
                    let delay = cx.backoff.get(&backoff_key);
                    out.requeue_after = Some(out.requeue_after.map_or(delay, |d| d.min(delay)));
                    continue;
                }
                out.backoff_next = Some(backoff_key);
                let message = format!(
                    "Found failed daemon pod {}/{} on node {node_name}, will try to kill it",
                    pod.metadata.namespace, pod.metadata.name
                );
                out.events.push(event(cx.ds, EventType::Warning, FAILED_DAEMON_POD, message));
                out.delete.push(pod);
            }
            "Succeeded" => {
                let message = format!(
                    "Found succeeded daemon pod {}/{} on node {node_name}, will try to delete it",
                    pod.metadata.namespace, pod.metadata.name
                );
                out.events.push(event(cx.ds, EventType::Normal, SUCCEEDED_DAEMON_POD, message));
                out.delete.push(pod);
            }
            _ => running.push(pod),
        }
    }
    sort_by_creation(&mut running);
    if !allows_surge(cx.ds) {
        out.delete.extend(running.iter().skip(1));
        return out;
    }
    if running.len() <= 1 {
        out.create = running.is_empty() && should_run;
        return out;
    }
    let (mut oldest_new, mut oldest_old) = (None, None);
    for &pod in &running {
        let slot = if pod.metadata.labels.get(CONTROLLER_REVISION_HASH_LABEL) == Some(cx.hash) {
            &mut oldest_new
        } else {
            &mut oldest_old
        };
        if slot.is_none() {
            *slot = Some(pod);
        } else {
            out.delete.push(pod);
        }
    }
    if let (Some(new), Some(old)) = (oldest_new, oldest_old) {
        let min_ready = cx.ds.spec.min_ready_seconds.unwrap_or(0);
        if !is_pod_ready(old) || is_pod_available(new, min_ready, cx.now) {
            out.delete.push(old);
        }
    }
    out
}

fn event(ds: &DaemonSet, type_: EventType, reason: &str, message: String) -> Event {
    Event { regarding: object_ref(ds), type_, reason: reason.into(), message }
}

/// Pending pods for nodes not in `nodes` (upstream
/// `getUnscheduledPodsWithoutNode`).
pub(super) fn unscheduled_pods_without_node<'a>(
    nodes: &[std::sync::Arc<Node>],
    by_node: &BTreeMap<&str, Vec<&'a Pod>>,
) -> Vec<&'a Pod> {
    let known: BTreeSet<&str> = nodes.iter().map(|n| &*n.metadata.name).collect();
    by_node
        .iter()
        .filter(|(node, _)| !known.contains(*node))
        .flat_map(|(_, pods)| pods.iter().copied().filter(|p| p.node_name().is_none()))
        .collect()
}

/// Appends the expectations, the slow-start creations on `create_on` and
/// the deletions of `delete` to `plan`, each capped at `burst` (upstream
/// `syncNodes`). Returns whether anything was planned.
pub(super) fn sync_nodes(
    ds: &DaemonSet,
    delete: &[&Pod],
    create_on: &[&str],
    hash: &str,
    burst: usize,
    plan: &mut Plan,
) -> bool {
    let create_on = &create_on[..create_on.len().min(burst)];
    let delete = &delete[..delete.len().min(burst)];
    let key = key(ds);
    let mut expect = Vec::new();
    if !create_on.is_empty() {
        expect.push(Action::ExpectCreations { key: key.clone(), count: create_on.len() });
    }
    if !delete.is_empty() {
        expect.push(Action::ExpectDeletions { key, pod_keys: delete.iter().map(|p| p.metadata.key()).collect() });
    }
    plan.push_concurrent(expect);

    let owner = object_ref(ds);
    let namespace = ds.metadata.namespace.clone().unwrap_or_default();
    let template = create_pod_template(&ds.spec.template, template_generation(ds), hash);
    let cref = new_controller_ref(&ds.metadata, "apps/v1", "DaemonSet");
    let mut deletes: Vec<Action> = delete
        .iter()
        .map(|p| Action::DeletePod {
            namespace: p.metadata.namespace.to_string(),
            name: p.metadata.name.to_string(),
            uid: p.metadata.uid.to_string(),
            owner: owner.clone(),
        })
        .collect();
    let mut nodes = create_on.iter();
    for size in slow_start_batches(create_on.len()) {
        let mut step: Vec<Action> = nodes
            .by_ref()
            .take(size)
            .map(|node| {
                let mut pod =
                    pod_from_template(&template, ds.metadata.name.as_deref().unwrap_or_default(), cref.clone());
                let spec = pod.spec.get_or_insert_default();
                spec.affinity = Some(replace_daemon_set_pod_node_name_node_affinity(spec.affinity.take(), node));
                Action::CreatePod { namespace: namespace.clone(), pod: Box::new(pod), owner: owner.clone() }
            })
            .collect();
        // The deletions run with the first step, so that a failing create
        // does not hold them back (upstream deletes after a failed slow
        // start all the same).
        step.append(&mut deletes);
        plan.push_concurrent(step);
    }
    plan.push_concurrent(deletes);
    !create_on.is_empty() || !delete.is_empty()
}
