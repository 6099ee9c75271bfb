//! Creating and deleting a Job's pods (upstream `manageJob`,
//! `deleteActivePods`, `deleteJobPods`, `activePodsForRemoval`).
//!
//! How many pods a Job wants active: with `completions`, the completions
//! still missing, at most `parallelism`; without, `parallelism` until a
//! pod succeeds, then whatever still runs. Worked example: completions 5,
//! parallelism 2, 4 succeeded and 2 active: it wants 1, so it deletes one
//! pod (the one not yet scheduled, Pending, not Ready, ... first). A sync
//! either deletes or creates, never both; deleting wins.
//!
//! Creations wait for the pod-recreation backoff (10 s doubling per
//! failure since the last success, at most 10 min; per index with
//! `backoffLimitPerIndex`), the pods still running counted active
//! meanwhile (kubernetes#139457: `status.ready` may not exceed
//! `status.active`), and go in slow-start batches of 1, 2, 4, ...,
//! at most [`MAX_POD_CREATE_DELETE_PER_SYNC`] a sync. With
//! `podReplacementPolicy: Failed` (or a pod failure policy) terminating
//! pods still hold their slots.

use std::time::Duration;

use kcm_objects::Pod;

use super::SYNC_JOB_BATCH_PERIOD;
use super::backoff::{DEFAULT_JOB_POD_FAILURE_BACK_OFF, MAX_JOB_POD_FAILURE_BACK_OFF};
use super::ctx::Ctx;
use super::pods::{REPLACE_FAILED, active_pods_order, has_tracking_finalizer, only_replace_failed_pods};
use super::write::Write;
use super::{Action, Plan};
use super::{SyncAction, indexed_sync, templates};
use crate::common::pod::is_pod_ready;
use crate::common::slow_start::slow_start_batches;

/// Most pods one sync creates or deletes (upstream
/// `MaxPodCreateDeletePerSync`).
pub const MAX_POD_CREATE_DELETE_PER_SYNC: usize = 500;

/// Deletes every active pod of a finished Job, keeping their finalizers
/// (they are removed once the pods are counted). Returns the Ready pods and
/// all pods deleted, counting every delete as done: a failed one stops the
/// plan.
pub(super) fn delete_active_pods(ctx: &mut Ctx<'_>, plan: &mut Plan) -> (i32, i32) {
    let deletes = ctx
        .active
        .iter()
        .map(|p| Action::DeletePod {
            namespace: p.metadata.namespace.to_string(),
            name: p.metadata.name.to_string(),
            uid: p.metadata.uid.to_string(),
            owner: ctx.owner.clone(),
        })
        .collect();
    plan.push_concurrent(deletes);
    (count(ctx.active.iter().filter(|p| is_pod_ready(p))), count(ctx.active.iter()))
}

/// Brings the active pods to what the Job wants (see the module doc).
/// Returns the active count once the planned writes are done, and what the
/// sync did.
pub(super) fn manage_job(ctx: &mut Ctx<'_>, plan: &mut Plan) -> (i32, SyncAction) {
    let active = count(ctx.active.iter());
    let spec = ctx.job.spec.clone().unwrap_or_default();
    let parallelism = spec.parallelism.unwrap_or(1);
    if ctx.suspended() {
        let victims = active_pods_for_removal(ctx, ctx.active.len());
        return (active - delete_job_pods(ctx, &victims, plan), SyncAction::PodsDeleted);
    }
    let want_active = match spec.completions {
        None if ctx.succeeded > 0 => active,
        None => parallelism,
        Some(completions) => (completions - ctx.succeeded).min(parallelism).max(0),
    };
    let rm_at_least = usize::try_from(active - want_active).unwrap_or(0);
    let mut victims = active_pods_for_removal(ctx, rm_at_least);
    victims.truncate(MAX_POD_CREATE_DELETE_PER_SYNC);
    if !victims.is_empty() {
        return (active - delete_job_pods(ctx, &victims, plan), SyncAction::PodsDeleted);
    }
    let terminating = if only_replace_failed_pods(&ctx.job) { ctx.terminating } else { 0 };
    let diff = want_active - terminating - active;
    if diff <= 0 {
        return (active, SyncAction::Tracking);
    }
    if !indexed_sync::has_backoff_limit_per_index(&ctx.job) {
        let remaining =
            ctx.new_backoff.remaining_time(ctx.now, DEFAULT_JOB_POD_FAILURE_BACK_OFF, MAX_JOB_POD_FAILURE_BACK_OFF);
        if remaining > Duration::ZERO {
            ctx.requeue(remaining.max(SYNC_JOB_BATCH_PERIOD));
            return (active, SyncAction::PodsCreated);
        }
    }
    let mut diff = usize::try_from(diff).unwrap_or(0).min(MAX_POD_CREATE_DELETE_PER_SYNC);
    let mut indexes = Vec::new();
    if ctx.indexed.is_some() {
        match indexed_sync::indexes_to_create(ctx, diff) {
            Ok(found) => indexes = found,
            Err(wait) => {
                ctx.requeue(wait.max(SYNC_JOB_BATCH_PERIOD));
                return (active, SyncAction::PodsCreated);
            }
        }
        diff = indexes.len();
    }
    if diff == 0 {
        return (active, SyncAction::PodsCreated);
    }
    plan.push(Action::ExpectCreations { key: ctx.key.clone(), count: diff });
    let pods = templates::pods_to_create(ctx, diff, &indexes);
    let mut pods = pods.into_iter();
    for size in slow_start_batches(diff) {
        let namespace = ctx.job.metadata.namespace.clone().unwrap_or_default();
        let creates = pods
            .by_ref()
            .take(size)
            .map(|pod| Action::CreatePod { namespace: namespace.clone(), pod: Box::new(pod), owner: ctx.owner.clone() })
            .collect();
        plan.push_concurrent(creates);
    }
    (active + count(0..diff), SyncAction::PodsCreated)
}

/// The `reason` label of `job_pods_creation_total` (upstream
/// `recordJobPodsCreationTotal`): `recreate_failed` under
/// `podReplacementPolicy: Failed` once a pod failed,
/// `recreate_terminating_or_failed` once a pod failed or while one
/// terminates, else `new`.
pub(super) fn creation_reason(ctx: &Ctx<'_>) -> &'static str {
    let policy = ctx.job.spec.as_ref().and_then(|s| s.pod_replacement_policy.as_deref());
    if policy == Some(REPLACE_FAILED) && ctx.failed > 0 {
        "recreate_failed"
    } else if ctx.failed > 0 || ctx.terminating > 0 {
        "recreate_terminating_or_failed"
    } else {
        "new"
    }
}

/// Expects and plans the deletion of `victims`, each after its tracking
/// finalizer is removed. Returns how many.
fn delete_job_pods(ctx: &mut Ctx<'_>, victims: &[&Pod], plan: &mut Plan) -> i32 {
    if victims.is_empty() {
        return 0;
    }
    plan.push(Action::ExpectDeletions {
        key: ctx.key.clone(),
        pod_keys: victims.iter().map(|p| p.metadata.key()).collect(),
    });
    plan.push_concurrent(
        victims
            .iter()
            .map(|p| {
                Action::Own(Write::RemoveFinalizerAndDelete {
                    namespace: p.metadata.namespace.to_string(),
                    name: p.metadata.name.to_string(),
                    uid: p.metadata.uid.to_string(),
                    has_finalizer: has_tracking_finalizer(p),
                    job: ctx.owner.clone(),
                })
            })
            .collect(),
    );
    let removed = count(victims.iter());
    ctx.terminating += removed;
    ctx.ready -= count(victims.iter().filter(|p| is_pod_ready(p)));
    removed
}

/// The active pods to delete: for an Indexed Job, first those without a
/// valid index and all but one of each repeated index; then, up to
/// `rm_at_least`, the rest in [`active_pods_order`] (upstream
/// `activePodsForRemoval`).
fn active_pods_for_removal<'a>(ctx: &Ctx<'a>, rm_at_least: usize) -> Vec<&'a Pod> {
    let (mut rm, mut left) = match &ctx.indexed {
        Some(state) => indexed_sync::duplicated_index_pods_for_removal(&ctx.active, state.completions),
        None => (Vec::new(), ctx.active.clone()),
    };
    if rm.len() < rm_at_least {
        left.sort_by(|a, b| active_pods_order(a, b));
        rm.extend(left.into_iter().take(rm_at_least - rm.len()));
    }
    rm
}

fn count<T>(items: impl Iterator<Item = T>) -> i32 {
    i32::try_from(items.count()).unwrap_or(i32::MAX)
}
