//! Counting finished pods exactly once (upstream
//! `trackJobStatusAndRemoveFinalizers`, `flushUncountedAndRemoveFinalizers`,
//! `enactJobFinished`).
//!
//! A finished pod still carrying the `batch.kubernetes.io/job-tracking`
//! finalizer is not counted yet. The plan, in order:
//! 1. its uid goes into `status.uncountedTerminatedPods` (for an Indexed
//!    Job a succeeded pod's index goes into `completedIndexes` instead),
//!    with the interim condition, in one status write;
//! 2. its finalizer is removed;
//! 3. the uids whose pods have no finalizer left move from the uncounted
//!    lists to `succeeded` / `failed`, and, once nothing is uncounted and
//!    no pod terminates, the terminal condition is added, in a second
//!    status write; once that write succeeded, the Job's syncs wait for the
//!    cache to show it finished ([`finished`](super::finished)).
//!
//! A restart between any two steps loses nothing: the uncounted lists are
//! in the API, and a pod whose finalizer is gone while its uid is still
//! uncounted is moved to the counts by the next sync (step 3 runs first in
//! every sync). A sync takes at most [`MAX_UNCOUNTED_PODS`] pods, so the
//! lists stay small and a big Job does not starve the others.

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::batch::v1::{Job, JobStatus, UncountedTerminatedPods};
use kcm_objects::Pod;

use super::conditions::{self, FAILURE_TARGET, SUCCESS_CRITERIA_MET};
use super::ctx::Ctx;
use super::indexed_sync;
use super::pod_failure_policy::match_pod_failure_policy;
use super::pods::is_pod_failed;
use super::write::{self, Count, Write};
use super::{Action, Plan};
use crate::common::pod::phase;
use crate::plan::EventType;

/// Most pods one sync adds to the uncounted lists (upstream
/// `MaxUncountedPods`), which keeps them near 20 KB.
pub const MAX_UNCOUNTED_PODS: usize = 500;

/// Finished pods not yet counted, nor in the uncounted lists, nor with a
/// finalizer removal in flight (upstream `getNewFinishedPods`): succeeded
/// ones, and failed ones as [`is_pod_failed`] says.
pub(super) fn new_finished_pods<'a>(ctx: &Ctx<'a>) -> (Vec<&'a Pod>, Vec<&'a Pod>) {
    let valid = |p: &&&'a Pod| ctx.tracked(p) && !ctx.removing(p) && indexed_sync::valid_index(ctx, p).unwrap_or(true);
    let succeeded = ctx
        .pods
        .iter()
        .filter(valid)
        .filter(|p| !ctx.uncounted_succeeded.contains(&p.metadata.uid.to_string()))
        .filter(|p| phase(p) == "Succeeded")
        .copied()
        .collect();
    let failed = ctx
        .pods
        .iter()
        .filter(valid)
        .filter(|p| !ctx.uncounted_failed.contains(&p.metadata.uid.to_string()))
        .filter(|p| is_pod_failed(p, &ctx.job))
        .copied()
        .collect();
    (succeeded, failed)
}

/// The three steps of the module doc, appended to `plan`.
pub(super) fn track_job_status_and_remove_finalizers(ctx: &mut Ctx<'_>, mut needs_flush: bool, plan: &mut Plan) {
    let mut pods = ctx.pods.clone();
    indexed_sync::sort_by_completion_index(ctx, &mut pods);
    let mut with_finalizer: HashSet<String> =
        pods.iter().filter(|p| ctx.tracked(p) && !ctx.removing(p)).map(|p| p.metadata.uid.to_string()).collect();
    let mut old_counters = ctx.status().clone();
    needs_flush |= clean_uncounted_pods_without_finalizers(ctx.status(), &with_finalizer);

    let mut uncounted = ctx.status().uncounted_terminated_pods.clone().unwrap_or_default();
    let (mut to_remove, mut new_succeeded_indexes) = (Vec::new(), Vec::new());
    let mut by_policy_action = BTreeMap::<String, u64>::new();
    let mut reached_max = false;
    let job_failing = ctx.finished_condition.as_ref().is_some_and(|c| c.type_ != SUCCESS_CRITERIA_MET);
    for pod in pods {
        if !ctx.tracked(pod) || ctx.removing(pod) {
            continue;
        }
        let considered_failed = is_pod_failed(pod, &ctx.job);
        if !can_remove_finalizer(ctx, pod, considered_failed) {
            continue;
        }
        to_remove.push(pod);
        let uid = pod.metadata.uid.to_string();
        if phase(pod) == "Succeeded" && !ctx.uncounted_failed.contains(&uid) {
            match indexed_sync::newly_succeeded_index(ctx, pod) {
                Some(Some(index)) => {
                    new_succeeded_indexes.push(index);
                    needs_flush = true;
                }
                Some(None) => {}
                None if !ctx.uncounted_succeeded.contains(&uid) => {
                    uncounted.succeeded.get_or_insert_default().push(uid);
                    needs_flush = true;
                }
                None => {}
            }
        } else if (considered_failed || job_failing)
            && !ctx.uncounted_failed.contains(&uid)
            && indexed_sync::valid_index(ctx, pod).unwrap_or(true)
        {
            let policy = ctx.job.spec.as_ref().and_then(|s| s.pod_failure_policy.as_ref());
            let counted = match policy {
                Some(policy) => {
                    let matched = match_pod_failure_policy(Some(policy), pod);
                    if let Some(action) = matched.action {
                        *by_policy_action.entry(action.as_str().to_owned()).or_default() += 1;
                    }
                    matched.count_failed
                }
                None => true,
            };
            if counted {
                uncounted.failed.get_or_insert_default().push(uid);
                needs_flush = true;
            }
        }
        let listed = uncounted.succeeded.as_ref().map_or(0, Vec::len) + uncounted.failed.as_ref().map_or(0, Vec::len);
        if new_succeeded_indexes.len() + listed >= MAX_UNCOUNTED_PODS {
            // The status and pod updates bring the Job back for the rest.
            reached_max = true;
            break;
        }
    }
    ctx.status().uncounted_terminated_pods = Some(uncounted);
    needs_flush |= indexed_sync::update_index_status(ctx, new_succeeded_indexes);
    needs_flush |= add_interim_condition(ctx);

    if needs_flush {
        plan.push(Action::Own(Write::UpdateStatus { job: Box::new(ctx.job.full()) }));
        let mut bookkeeping =
            vec![Action::Own(Write::RecordBackoff { key: ctx.key.clone(), record: ctx.new_backoff.clone() })];
        bookkeeping.extend(pods_finished_counts(&ctx.job, &old_counters));
        plan.push_concurrent(bookkeeping);
        old_counters = ctx.status().clone();
        needs_flush = false;
    }
    plan.push_concurrent(
        by_policy_action
            .into_iter()
            .map(|(action, n)| Action::Own(Write::Count(Count::FailurePolicyAction { action, n })))
            .collect(),
    );
    if !to_remove.is_empty() {
        let uids: Vec<String> = to_remove.iter().map(|p| p.metadata.uid.to_string()).collect();
        plan.push(Action::Own(Write::ExpectFinalizerRemovals { key: ctx.key.clone(), uids: uids.clone() }));
        plan.push_concurrent(
            to_remove
                .iter()
                .map(|p| {
                    Action::Own(Write::RemoveFinalizer {
                        key: ctx.key.clone(),
                        namespace: p.metadata.namespace.to_string(),
                        name: p.metadata.name.to_string(),
                        uid: p.metadata.uid.to_string(),
                    })
                })
                .collect(),
        );
        for uid in &uids {
            with_finalizer.remove(uid);
        }
    }
    needs_flush |= clean_uncounted_pods_without_finalizers(ctx.status(), &with_finalizer);
    let finished = !reached_max && enact_job_finished(ctx);
    if needs_flush || finished {
        plan.push(Action::Own(Write::UpdateStatus { job: Box::new(ctx.job.full()) }));
        let mut after = Vec::new();
        if finished {
            if let Some(uid) = ctx.job.metadata.uid.clone() {
                after.push(Action::Own(Write::ExpectFinished { uid }));
            }
            after.extend(job_finished_records(ctx));
        }
        after.extend(pods_finished_counts(&ctx.job, &old_counters));
        plan.push_concurrent(after);
    }
}

/// Whether the pod's finalizer may go now (upstream `canRemoveFinalizer`):
/// the Job is being deleted or finishing, the pod succeeded, or it failed
/// and is not the last failed pod of an index awaiting its replacement
/// (`backoffLimitPerIndex` carries the failure count over to it).
fn can_remove_finalizer(ctx: &Ctx<'_>, pod: &Pod, considered_failed: bool) -> bool {
    if ctx.job.metadata.deletion_timestamp.is_some() || ctx.finished_condition.is_some() || phase(pod) == "Succeeded" {
        return true;
    }
    considered_failed && !indexed_sync::deletion_delayed(ctx, pod)
}

/// Moves the uncounted uids whose pods have no finalizer left to the
/// counts (upstream `cleanUncountedPodsWithoutFinalizers`). Whether the
/// status changed.
pub(super) fn clean_uncounted_pods_without_finalizers(
    status: &mut JobStatus,
    with_finalizer: &HashSet<String>,
) -> bool {
    let uncounted = status.uncounted_terminated_pods.get_or_insert_with(UncountedTerminatedPods::default);
    let moved = |list: &mut Option<Vec<String>>| {
        let before = list.as_ref().map_or(0, Vec::len);
        let kept: Vec<String> = list.iter().flatten().filter(|u| with_finalizer.contains(*u)).cloned().collect();
        let moved = before - kept.len();
        *list = (!kept.is_empty()).then_some(kept);
        i32::try_from(moved).unwrap_or(i32::MAX)
    };
    let (succeeded, failed) = (moved(&mut uncounted.succeeded), moved(&mut uncounted.failed));
    if succeeded > 0 {
        *status.succeeded.get_or_insert(0) += succeeded;
    }
    if failed > 0 {
        *status.failed.get_or_insert(0) += failed;
    }
    succeeded > 0 || failed > 0
}

/// Appends the interim condition (`FailureTarget`, or `SuccessCriteriaMet`
/// unless the Job has it), and turns the finished condition into the
/// terminal one it leads to. Whether the status changed.
fn add_interim_condition(ctx: &mut Ctx<'_>) -> bool {
    let Some(finished) = ctx.finished_condition.clone() else { return false };
    let now = ctx.now;
    match finished.type_.as_str() {
        FAILURE_TARGET => {
            ctx.status().conditions.get_or_insert_default().push(finished.clone());
            ctx.finished_condition = Some(conditions::terminal_for(&finished, now));
            true
        }
        SUCCESS_CRITERIA_MET => {
            let add = conditions::success_criteria_met(&ctx.job).is_none();
            if add {
                ctx.status().conditions.get_or_insert_default().push(finished.clone());
            }
            ctx.finished_condition = Some(conditions::terminal_for(&finished, now));
            add
        }
        _ => false,
    }
}

/// Adds the terminal condition (and `completionTime` for `Complete`) once
/// no pod is uncounted and none terminates (upstream `enactJobFinished`).
/// Whether the Job finished.
fn enact_job_finished(ctx: &mut Ctx<'_>) -> bool {
    let Some(finished) = ctx.finished_condition.clone() else { return false };
    let uncounted = ctx.status().uncounted_terminated_pods.clone().unwrap_or_default();
    if uncounted.succeeded.is_some_and(|l| !l.is_empty()) || uncounted.failed.is_some_and(|l| !l.is_empty()) {
        return false;
    }
    if ctx.terminating > 0 {
        return false;
    }
    let now = ctx.now;
    let text = |s: &Option<String>| s.clone().unwrap_or_default();
    let list = ctx.status().conditions.get_or_insert_default();
    conditions::ensure(list, &finished.type_, &finished.status, &text(&finished.reason), &text(&finished.message), now);
    if finished.type_ == conditions::COMPLETE {
        ctx.status().completion_time = finished.last_transition_time.clone();
    }
    true
}

/// The events and `jobs_finished_total` of a Job that just finished
/// (upstream `recordJobFinished`).
fn job_finished_records(ctx: &Ctx<'_>) -> Vec<Action> {
    let Some(finished) = &ctx.finished_condition else { return Vec::new() };
    let completion_mode = indexed_sync::completion_mode_label(&ctx.job);
    let mut records = Vec::new();
    if finished.type_ == conditions::COMPLETE {
        let succeeded = ctx.job.status.as_ref().and_then(|s| s.succeeded).unwrap_or(0);
        if ctx.spec_completions().is_some_and(|c| succeeded > c) {
            records.push(Action::Event(write::event(
                &ctx.owner,
                EventType::Warning,
                write::TOO_MANY_SUCCEEDED_PODS,
                "Too many succeeded pods running after completion count reached",
            )));
        }
        records.push(Action::Event(write::event(&ctx.owner, EventType::Normal, write::COMPLETED, "Job completed")));
        records.push(Action::Own(Write::Count(Count::JobFinished {
            completion_mode,
            result: "succeeded",
            reason: String::new(),
        })));
    } else {
        let reason = finished.reason.clone().unwrap_or_default();
        let message = finished.message.clone().unwrap_or_default();
        records.push(Action::Event(write::event(&ctx.owner, EventType::Warning, &reason, &message)));
        records.push(Action::Own(Write::Count(Count::JobFinished { completion_mode, result: "failed", reason })));
    }
    records
}

/// `job_pods_finished_total` (and, for an Indexed Job,
/// `job_finished_indexes_total`) for what the status counts more than
/// `old` (upstream `recordJobPodFinished`).
fn pods_finished_counts(job: &Job, old: &JobStatus) -> Vec<Action> {
    let status = job.status.clone().unwrap_or_default();
    let completion_mode = indexed_sync::completion_mode_label(job);
    let mut counts = indexed_sync::finished_indexes_counts(job, old);
    let succeeded = match indexed_sync::succeeded_indexes_diff(job, old) {
        Some(diff) => diff,
        None => i64::from(status.succeeded.unwrap_or(0)) - i64::from(old.succeeded.unwrap_or(0)),
    };
    let failed = i64::from(status.failed.unwrap_or(0)) - i64::from(old.failed.unwrap_or(0));
    for (result, diff) in [("succeeded", succeeded), ("failed", failed)] {
        if let Ok(n @ 1..) = u64::try_from(diff) {
            counts.push(Count::PodsFinished { completion_mode, result, n });
        }
    }
    counts.into_iter().map(|c| Action::Own(Write::Count(c))).collect()
}
