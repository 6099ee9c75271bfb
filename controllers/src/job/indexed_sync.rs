//! What an Indexed Job adds to each phase of a sync (upstream
//! `syncJob`'s Indexed branches, `trackJobStatusAndRemoveFinalizers`'s
//! `completedIndexes` / `failedIndexes`, `manageJob`'s indexes to create).
//! The index arithmetic itself is in `indexed` and `intervals`.
//!
//! Each function answers for a NonIndexed Job too (usually "nothing to
//! add"), so the phases read the same for both modes.

use std::collections::HashMap;
use std::time::Duration;

use k8s_openapi::api::batch::v1::{Job, JobStatus};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use kcm_objects::Pod;

use super::backoff::{DEFAULT_JOB_POD_FAILURE_BACK_OFF, MAX_JOB_POD_FAILURE_BACK_OFF};
use super::conditions::{self, FAILED_INDEXES, MAX_FAILED_INDEXES_EXCEEDED, SUCCESS_CRITERIA_MET, SUCCESS_POLICY};
use super::ctx::{Ctx, IndexedState};
use super::index_template::{pod_generate_name_with_index, template_for_index};
use super::indexed::{
    calculate_failed_indexes, calculate_succeeded_indexes, completion_index,
    duplicated_index_pods_for_removal as split, first_pending_indexes, is_indexed_job,
    pods_with_delayed_deletion_per_index, remaining_time_per_index,
};
use super::intervals::OrderedIntervals;
use super::pods::{active_pods_order, is_pod_failed, only_replace_failed_pods};
use super::success_policy::match_success_policy;
use super::write::Count;
use crate::common::pod::is_pod_terminating;

pub(super) use super::index_template::add_completion_index_env_variables;
pub(super) use super::indexed::has_backoff_limit_per_index;

/// The Indexed part of the decisions (upstream `syncJob`): the succeeded
/// count is the succeeded indexes; with `backoffLimitPerIndex` the Job
/// fails once more indexes failed than `maxFailedIndexes`, or once every
/// index finished and some failed; then the success policy.
pub(super) fn decide(ctx: &mut Ctx<'_>) {
    let completions = ctx.spec_completions().unwrap_or(0);
    let tracked: Vec<&Pod> = ctx.pods.iter().copied().filter(|p| ctx.tracked(p)).collect();
    let (prev_succeeded, succeeded) = calculate_succeeded_indexes(&ctx.job, &tracked);
    ctx.succeeded = succeeded.total();
    let mut state =
        IndexedState { completions, prev_succeeded, succeeded, failed: None, delayed_deletion: HashMap::new() };
    if has_backoff_limit_per_index(&ctx.job) {
        let job = ctx.job.clone();
        let failed = calculate_failed_indexes(&job, &tracked, |p| is_pod_failed(p, &job));
        if ctx.finished_condition.is_none() {
            let max_failed = job.spec.as_ref().and_then(|s| s.max_failed_indexes);
            if max_failed.is_some_and(|max| failed.total() > max) {
                ctx.finished_condition = Some(conditions::failure(
                    MAX_FAILED_INDEXES_EXCEEDED,
                    "Job has exceeded the specified maximal number of failed indexes",
                    ctx.now,
                ));
            } else if failed.total() > 0 && failed.total() + state.succeeded.total() >= completions {
                ctx.finished_condition = Some(conditions::failure(FAILED_INDEXES, "Job has failed indexes", ctx.now));
            }
        }
        let candidates: Vec<&Pod> =
            tracked.iter().copied().filter(|p| !ctx.removing(p) && is_pod_failed(p, &job)).collect();
        state.delayed_deletion =
            pods_with_delayed_deletion_per_index(&job, &candidates, &ctx.active, &state.succeeded, &failed);
        state.failed = Some(failed);
    }
    if ctx.finished_condition.is_none() {
        let policy = ctx.job.spec.as_ref().and_then(|s| s.success_policy.as_ref());
        if let Some(message) = match_success_policy(policy, completions, &state.succeeded) {
            ctx.finished_condition =
                Some(conditions::new_condition(SUCCESS_CRITERIA_MET, "True", SUCCESS_POLICY, &message, ctx.now));
        }
    }
    ctx.indexed = Some(state);
}

/// For an Indexed Job, whether the pod has an index below `completions`.
pub(super) fn valid_index(ctx: &Ctx<'_>, pod: &Pod) -> Option<bool> {
    let completions = ctx.spec_completions().unwrap_or(0);
    is_indexed_job(&ctx.job).then(|| completion_index(pod).is_some_and(|ix| ix < completions))
}

/// For an Indexed Job, the pods by completion index (pods without one
/// first), so completed indexes are introduced in order.
pub(super) fn sort_by_completion_index(ctx: &Ctx<'_>, pods: &mut [&Pod]) {
    if is_indexed_job(&ctx.job) {
        pods.sort_by_key(|p| completion_index(p));
    }
}

/// For an Indexed Job, the index a succeeded pod completes: `Some(None)`
/// when it completes none (invalid, or counted before). `None` for a
/// NonIndexed Job, which counts the pod by uid.
pub(super) fn newly_succeeded_index(ctx: &Ctx<'_>, pod: &Pod) -> Option<Option<i32>> {
    let state = ctx.indexed.as_ref()?;
    let index = completion_index(pod).filter(|&ix| ix < state.completions && !state.prev_succeeded.has(ix));
    Some(index)
}

/// Writes `completedIndexes`, `succeeded` and `failedIndexes` of an
/// Indexed Job, with the indexes succeeded in this sync. Whether the
/// status changed.
pub(super) fn update_index_status(ctx: &mut Ctx<'_>, new_succeeded: Vec<i32>) -> bool {
    let Some(state) = ctx.indexed.as_mut() else { return false };
    state.succeeded = state.succeeded.with_ordered_indexes(&new_succeeded);
    let completed = state.succeeded.to_string();
    let total = state.succeeded.total();
    let failed = state.failed.as_ref().map(ToString::to_string);
    let status = ctx.status();
    let mut changed = status.completed_indexes.as_deref().unwrap_or("") != completed;
    status.succeeded = Some(total);
    status.completed_indexes = Some(completed);
    if status.failed_indexes != failed {
        status.failed_indexes = failed;
        changed = true;
    }
    changed
}

/// Whether the pod is the failed pod its index keeps until the
/// replacement exists (`backoffLimitPerIndex`).
pub(super) fn deletion_delayed(ctx: &Ctx<'_>, pod: &Pod) -> bool {
    let Some(state) = ctx.indexed.as_ref() else { return false };
    completion_index(pod)
        .and_then(|ix| state.delayed_deletion.get(&ix))
        .is_some_and(|kept| kept.metadata.uid == pod.metadata.uid)
}

/// The indexes to create pods for, at most `count`: the first pending
/// ones; with `backoffLimitPerIndex` only those whose backoff has passed,
/// or, when none has, `Err` with the shortest wait.
pub(super) fn indexes_to_create(ctx: &Ctx<'_>, count: usize) -> Result<Vec<i32>, Duration> {
    let Some(state) = ctx.indexed.as_ref() else { return Ok(Vec::new()) };
    let terminating: Vec<&Pod> = if only_replace_failed_pods(&ctx.job) {
        ctx.pods.iter().copied().filter(|p| is_pod_terminating(p)).collect()
    } else {
        Vec::new()
    };
    let pending = first_pending_indexes(
        &ctx.active,
        &terminating,
        &state.succeeded,
        state.failed.as_ref(),
        count,
        state.completions,
    );
    if !has_backoff_limit_per_index(&ctx.job) {
        return Ok(pending);
    }
    let mut ready = Vec::new();
    let mut shortest: Option<Duration> = None;
    for index in pending {
        let last_failed = state.delayed_deletion.get(&index).copied();
        let wait = remaining_time_per_index(
            last_failed,
            ctx.now,
            DEFAULT_JOB_POD_FAILURE_BACK_OFF,
            MAX_JOB_POD_FAILURE_BACK_OFF,
        );
        if wait.is_zero() {
            ready.push(index);
        } else {
            shortest = Some(shortest.map_or(wait, |s| s.min(wait)));
        }
    }
    match shortest {
        Some(wait) if ready.is_empty() => Err(wait),
        _ => Ok(ready),
    }
}

/// The active pods of an Indexed Job to delete whatever the counts say
/// (no index, an index out of range, a repeated index), and the rest.
pub(super) fn duplicated_index_pods_for_removal<'a>(
    active: &[&'a Pod],
    completions: i32,
) -> (Vec<&'a Pod>, Vec<&'a Pod>) {
    split(active, completions, active_pods_order)
}

/// Gives an index's template its annotations, label, hostname and
/// failure counts.
pub(super) fn prepare_index_template(ctx: &Ctx<'_>, template: &mut PodTemplateSpec, index: i32) {
    let replaced = ctx.indexed.as_ref().and_then(|s| s.delayed_deletion.get(&index).copied());
    *template = template_for_index(template, &ctx.job, index, replaced);
}

/// `<job>-<index>-`, cut to fit.
pub(super) fn generate_name(job_name: &str, index: i32) -> String {
    pod_generate_name_with_index(job_name, index)
}

/// The metrics' `completion_mode` label.
pub(super) fn completion_mode_label(job: &Job) -> &'static str {
    if is_indexed_job(job) { "Indexed" } else { "NonIndexed" }
}

/// How many more indexes `completedIndexes` holds than in `old`, for an
/// Indexed Job (upstream counts succeeded pods of an Indexed Job so, as
/// scaling `completions` down drops indexes).
pub(super) fn succeeded_indexes_diff(job: &Job, old: &JobStatus) -> Option<i64> {
    if !is_indexed_job(job) {
        return None;
    }
    let completions = job.spec.as_ref().and_then(|s| s.completions).unwrap_or(0);
    let count = |s: Option<&str>| i64::from(OrderedIntervals::parse(s.unwrap_or(""), completions).total());
    let new = job.status.as_ref().and_then(|s| s.completed_indexes.as_deref());
    Some(count(new) - count(old.completed_indexes.as_deref()))
}

/// `job_finished_indexes_total` for an Indexed Job: the indexes that
/// succeeded, and with `backoffLimitPerIndex` failed, since `old`.
pub(super) fn finished_indexes_counts(job: &Job, old: &JobStatus) -> Vec<Count> {
    let Some(succeeded) = succeeded_indexes_diff(job, old) else { return Vec::new() };
    let per_index = has_backoff_limit_per_index(job);
    let backoff_limit = if per_index { "perIndex" } else { "global" };
    let mut counts = Vec::new();
    if let Ok(n @ 1..) = u64::try_from(succeeded) {
        counts.push(Count::FinishedIndexes { status: "succeeded", backoff_limit, n });
    }
    if per_index {
        let completions = job.spec.as_ref().and_then(|s| s.completions).unwrap_or(0);
        let count = |s: Option<&str>| i64::from(OrderedIntervals::parse(s.unwrap_or(""), completions).total());
        let new = job.status.as_ref().and_then(|s| s.failed_indexes.as_deref());
        if let Ok(n @ 1..) = u64::try_from(count(new) - count(old.failed_indexes.as_deref())) {
            counts.push(Count::FinishedIndexes { status: "failed", backoff_limit, n });
        }
    }
    counts
}
