//! The `RollingUpdate` strategy (upstream `update.go` `rollingUpdate`,
//! `findUpdatedPodsOnNode`, `updatedDesiredNodeCounts`). It only runs when
//! `manage` had nothing to do, and leaves creating pods on empty nodes and
//! pruning extra pods to it.
//!
//! Without surge (`maxSurge` 0): old pods are deleted, and `manage`
//! recreates them from the new revision, keeping at most `maxUnavailable`
//! nodes without an available pod. An unavailable old pod is always
//! replaced (it counts as unavailable either way); an available old pod is
//! a candidate while the budget lasts. Worked example: 5 nodes,
//! maxUnavailable 2, one new pod not yet available, four available old
//! pods: unavailable is 1, so 1 old pod is deleted this sync.
//!
//! With surge: a new pod is created next to an old one (at most `maxSurge`
//! at a time, not counting nodes whose old pod is unavailable, which get
//! one at once), and the old pod is deleted once the new one is available.
//! Old pods on nodes the DaemonSet no longer fits are deleted only while
//! more pods are available than nodes need one, so an application moving
//! between nodes never drops to no available pod.
//!
//! Nodes are visited in name order (upstream visits a Go map, in random
//! order), so which candidates win is deterministic.

use std::collections::BTreeMap;

use kcm_objects::{Node, Pod};

use super::Plan;
use super::manage::{Context, sync_nodes};
use super::placement::node_should_run_daemon_pod;
use super::template::{is_pod_updated, surge_count, template_generation, unavailable_count};
use crate::common::pod::is_pod_available;

/// The new and the old pod of a node, ignoring pods being deleted; `None`
/// when there are two of either (upstream `findUpdatedPodsOnNode`: the
/// manage loop prunes them first).
pub(super) fn find_updated_pods_on_node<'a>(
    pods: &[&'a Pod],
    hash: &str,
    generation: Option<i64>,
) -> Option<(Option<&'a Pod>, Option<&'a Pod>)> {
    let (mut new, mut old) = (None, None);
    for &pod in pods.iter().filter(|p| p.metadata.deletion_timestamp().is_none()) {
        let slot = if is_pod_updated(pod, hash, generation) { &mut new } else { &mut old };
        if slot.replace(pod).is_some() {
            return None;
        }
    }
    Some((new, old))
}

/// `(max_surge, max_unavailable, desired_number_scheduled)`, adding an
/// empty entry to `by_node` for every node that should run a pod and has
/// none (upstream `updatedDesiredNodeCounts`; both budgets at zero means an
/// unavailability of 1).
pub(super) fn updated_desired_node_counts<'a>(
    cx: &Context<'_>,
    nodes: &'a [std::sync::Arc<Node>],
    by_node: &mut BTreeMap<&'a str, Vec<&Pod>>,
) -> Result<(i32, i32, i32), String> {
    let mut desired = 0;
    for node in nodes {
        if node_should_run_daemon_pod(node, cx.ds).0 {
            desired += 1;
            by_node.entry(&node.metadata.name).or_default();
        }
    }
    let max_unavailable =
        unavailable_count(cx.ds, desired).map_err(|e| format!("invalid value for MaxUnavailable: {e}"))?;
    let max_surge = surge_count(cx.ds, desired).map_err(|e| format!("invalid value for MaxSurge: {e}"))?;
    let max_unavailable = if desired > 0 && max_unavailable == 0 && max_surge == 0 { 1 } else { max_unavailable };
    Ok((max_surge, max_unavailable, desired))
}

/// Plans one step of the rolling update; an error for an invalid
/// maxSurge/maxUnavailable or a pod on a node the cache does not hold.
pub(super) fn rolling_update(
    cx: &Context<'_>,
    nodes: &[std::sync::Arc<Node>],
    by_node: &BTreeMap<&str, Vec<&Pod>>,
    burst: usize,
    plan: &mut Plan,
) -> Result<(), String> {
    let mut by_node = by_node.clone();
    let (max_surge, max_unavailable, desired) = updated_desired_node_counts(cx, nodes, &mut by_node)?;
    let generation = template_generation(cx.ds);
    let min_ready = cx.ds.spec.min_ready_seconds.unwrap_or(0);
    let available = |p: &Pod| is_pod_available(p, min_ready, cx.now);

    if max_surge == 0 {
        let mut unavailable = 0;
        let mut replacements = Vec::new();
        let mut candidates = Vec::new();
        for pods in by_node.values() {
            match find_updated_pods_on_node(pods, cx.hash, generation) {
                None | Some((None, None) | (Some(_), Some(_))) => unavailable += 1,
                Some((Some(new), None)) => unavailable += i32::from(!available(new)),
                Some((None, Some(old))) if !available(old) => {
                    replacements.push(old);
                    unavailable += 1;
                }
                Some((None, Some(_))) if unavailable >= max_unavailable => {}
                Some((None, Some(old))) => candidates.push(old),
            }
        }
        let remaining = usize::try_from(max_unavailable - unavailable).unwrap_or(0).min(candidates.len());
        replacements.extend(&candidates[..remaining]);
        sync_nodes(cx.ds, &replacements, &[], cx.hash, burst, plan);
        return Ok(());
    }

    let node = |name: &str| nodes.iter().find(|n| &*n.metadata.name == name);
    let mut delete = Vec::new();
    let mut should_not_run = Vec::new();
    let mut candidates = Vec::new();
    let mut allowed = Vec::new();
    let (mut surging, mut available_count) = (0, 0);
    for (&name, pods) in &by_node {
        let Some((new, old)) = find_updated_pods_on_node(pods, cx.hash, generation) else {
            surging += 1;
            continue;
        };
        if old.or(new).is_some_and(available) {
            available_count += 1;
        }
        match (new, old) {
            (_, None) => {}
            (None, Some(old)) => {
                let fits = node(name).ok_or_else(|| format!("couldn't get node for nodeName {name:?}"))?;
                let should_run = node_should_run_daemon_pod(fits, cx.ds).0;
                match (available(old), should_run) {
                    (false, false) => delete.push(old),
                    (false, true) => allowed.push(name),
                    (true, false) => should_not_run.push(old),
                    (true, true) if surging >= max_surge => {}
                    (true, true) => candidates.push(name),
                }
            }
            (Some(new), Some(old)) => {
                if available(new) {
                    delete.push(old);
                } else {
                    surging += 1;
                }
            }
        }
    }
    let deletable = usize::try_from(available_count - desired).unwrap_or(0).min(should_not_run.len());
    delete.extend(&should_not_run[..deletable]);
    let remaining = usize::try_from(max_surge - surging).unwrap_or(0).min(candidates.len());
    allowed.extend(&candidates[..remaining]);
    sync_nodes(cx.ds, &delete, &allowed, cx.hash, burst, plan);
    Ok(())
}
