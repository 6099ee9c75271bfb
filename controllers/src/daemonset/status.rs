//! A DaemonSet's status (upstream `updateDaemonSetStatus`,
//! `storeDaemonSetStatus`), counted over the nodes:
//! - desiredNumberScheduled: nodes that should run a daemon pod;
//! - currentNumberScheduled: those of them that have one;
//! - numberMisscheduled: nodes that should not run one and have one;
//! - numberReady, numberAvailable, updatedNumberScheduled: nodes whose
//!   oldest pod (scheduled first) is Ready, available (Ready for more than
//!   `minReadySeconds`), of the current revision;
//! - numberUnavailable: desired minus available.
//!
//! The status is written only when a count differs or observedGeneration
//! is behind; observedGeneration is raised only by a sync that managed the
//! pods (not one held back by expectations). While pods are Ready but not
//! yet available, the DaemonSet is looked at again after `minReadySeconds`.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetStatus};
use kcm_objects::{Node, Pod};

use super::Write;
use super::manage::sort_by_creation;
use super::placement::node_should_run_daemon_pod;
use super::template::{is_pod_updated, template_generation};
use super::{Action, Plan};
use crate::common::pod::{is_pod_available, is_pod_ready};

/// The status of `ds` over `nodes` and its pods `by_node`, with
/// observedGeneration raised to the DaemonSet's generation when
/// `update_observed_generation` (collisionCount and conditions are kept).
pub fn calculate_status(
    ds: &DaemonSet,
    nodes: &[std::sync::Arc<Node>],
    by_node: &BTreeMap<&str, Vec<&Pod>>,
    hash: &str,
    update_observed_generation: bool,
    now: Timestamp,
) -> DaemonSetStatus {
    let generation = template_generation(ds);
    let min_ready = ds.spec.min_ready_seconds.unwrap_or(0);
    let (mut desired, mut current, mut misscheduled, mut ready, mut updated, mut available) = (0, 0, 0, 0, 0, 0);
    for node in nodes {
        let (should_run, _) = node_should_run_daemon_pod(node, ds);
        let pods = by_node.get(&*node.metadata.name).filter(|p| !p.is_empty());
        match (should_run, pods) {
            (true, None) => desired += 1,
            (true, Some(pods)) => {
                desired += 1;
                current += 1;
                let mut pods = pods.clone();
                sort_by_creation(&mut pods);
                let oldest = pods[0];
                if is_pod_ready(oldest) {
                    ready += 1;
                    available += i32::from(is_pod_available(oldest, min_ready, now));
                }
                updated += i32::from(is_pod_updated(oldest, hash, generation));
            }
            (false, Some(_)) => misscheduled += 1,
            (false, None) => {}
        }
    }
    let mut status = ds.status.clone().unwrap_or_default();
    if update_observed_generation {
        status.observed_generation = ds.metadata.generation;
    }
    status.desired_number_scheduled = desired;
    status.current_number_scheduled = current;
    status.number_misscheduled = misscheduled;
    status.number_ready = ready;
    status.updated_number_scheduled = Some(updated);
    status.number_available = Some(available);
    status.number_unavailable = Some(desired - available);
    status
}

/// The seven counts of a status, in the order of the module doc (unset
/// counts as 0).
pub(crate) fn status_counts(s: &DaemonSetStatus) -> [i32; 7] {
    let n = |v: Option<i32>| v.unwrap_or(0);
    [
        s.desired_number_scheduled,
        s.current_number_scheduled,
        s.number_misscheduled,
        s.number_ready,
        n(s.updated_number_scheduled),
        n(s.number_available),
        n(s.number_unavailable),
    ]
}

/// Whether `status` must be written over `ds`'s stored one: a count
/// differs, or observedGeneration is behind the generation.
fn needs_update(ds: &DaemonSet, status: &DaemonSetStatus) -> bool {
    let stored = ds.status.clone().unwrap_or_default();
    status_counts(&stored) != status_counts(status)
        || stored.observed_generation.unwrap_or(0) < ds.metadata.generation.unwrap_or(0)
}

/// Appends the status write (if needed) and the `minReadySeconds` requeue
/// to `plan`.
pub(super) fn finish_with_status(ds: &DaemonSet, status: DaemonSetStatus, plan: &mut Plan) {
    let min_ready = ds.spec.min_ready_seconds.unwrap_or(0);
    if min_ready > 0 && status.number_ready != status.number_available.unwrap_or(0) {
        let after = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0));
        plan.requeue_after = Some(plan.requeue_after.map_or(after, |d| d.min(after)));
    }
    if needs_update(ds, &status) {
        plan.push(status_write(ds, status, true));
    }
}

/// The write of `status` over the cached `ds`.
pub(super) fn status_write(ds: &DaemonSet, status: DaemonSetStatus, retry: bool) -> Action {
    Action::Own(Write::UpdateStatus {
        namespace: ds.metadata.namespace.clone().unwrap_or_default(),
        name: ds.metadata.name.clone().unwrap_or_default(),
        resource_version: ds.metadata.resource_version.clone(),
        status: Box::new(status),
        retry,
    })
}
