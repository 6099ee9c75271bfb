//! One sync of a Job, in upstream's order (`syncJob`): skip a Job someone
//! else manages, that finished, or that this controller wrote finished
//! while the cache still shows it unfinished; claim its pods; count them;
//! decide whether it finished (failure policy, backoff limit, deadline,
//! indexes, success policy, completions); delete its active pods when it
//! finished, otherwise manage them (`manage`) and the Suspended condition;
//! then track the finished pods and write the status (`track`).

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{Job, UncountedTerminatedPods};
use kcm_objects::Pod;

use super::backoff::{BackoffRecord, BackoffStore};
use super::conditions::{self, JOB_RESUMED, JOB_SUSPENDED, SUSPENDED};
use super::ctx::Ctx;
use super::finalizers::FinalizerExpectations;
use super::finished::FinishedJobExpectations;
use super::pod_failure_policy::match_pod_failure_policy;
use super::pods::{is_pod_failed, past_backoff_limit_on_failure};
use super::write;
use super::{Action, Plan};
use super::{CompletionMode, SyncAction, claim, is_suspended, key, manage, object_ref, track};
use crate::common::expectations::Expectations;
use crate::common::pod::{is_pod_active, is_pod_ready, is_pod_terminating};
use crate::plan::EventType;

/// What one sync of a Job reads.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot<'a> {
    /// The Job, from the cache.
    pub job: &'a kcm_objects::Job,
    /// The cached pods of its namespace (the claim's candidates).
    pub pods: &'a [Arc<Pod>],
    /// The pod creations and deletions in flight.
    pub expectations: &'a Expectations,
    /// The finalizer removals in flight.
    pub finalizer_expectations: &'a FinalizerExpectations,
    /// The Jobs written finished that the cache may not show so yet.
    pub finished_expectations: &'a FinishedJobExpectations,
    /// The pod-recreation backoff records.
    pub backoff: &'a BackoffStore,
    /// The time of the sync.
    pub now: Timestamp,
}

/// What a sync decided.
#[derive(Clone, Debug, PartialEq)]
pub struct Synced {
    /// The writes, in order.
    pub plan: Plan,
    /// The Job's completion mode (the metrics' `completion_mode` label).
    pub completion_mode: CompletionMode,
    /// What the sync did (the metrics' `action` label); `None` when it was
    /// skipped and counts in no metric.
    pub action: Option<SyncAction>,
    /// The cache shows the Job finished: forget its backoff record and its
    /// finished expectation.
    pub finished: bool,
    /// The `reason` label of `job_pods_creation_total` for the pods this
    /// plan creates.
    pub creation_reason: &'static str,
}

/// Plans one sync of the snapshot's Job (upstream `syncJob`).
#[doc(alias = "syncJob")]
pub fn sync(snapshot: &Snapshot<'_>) -> Synced {
    let job = snapshot.job;
    let completion_mode = CompletionMode::of(job);
    let mut skipped = Synced {
        plan: Plan::new(),
        completion_mode: completion_mode.unwrap_or(CompletionMode::NonIndexed),
        action: None,
        finished: false,
        creation_reason: "new",
    };
    if conditions::managed_by_external(job).is_some() {
        return skipped;
    }
    if conditions::is_finished(job) {
        skipped.finished = true;
        return skipped;
    }
    if job.metadata.uid.as_deref().is_some_and(|uid| snapshot.finished_expectations.pending(uid)) {
        // Written finished, but the cache shows the Job from before: its
        // pods may have lost their finalizers already (see `finished`).
        return skipped;
    }
    let Some(completion_mode) = completion_mode else {
        skipped.plan.push(Action::Event(write::event(
            &object_ref(job),
            EventType::Warning,
            write::UNKNOWN_COMPLETION_MODE,
            "Skipped Job sync because completion mode is unknown",
        )));
        return skipped;
    };
    let key = key(job);
    let mut plan = Plan::new();
    let Some(claimed) = claim::claim_pods(job, snapshot.pods, &mut plan) else {
        // An invalid selector: upstream returns the error; there is
        // nothing to retry until the Job changes.
        return skipped;
    };
    let satisfied = snapshot.expectations.satisfied(&key, snapshot.now);
    let mut ctx = new_ctx(snapshot, key, claimed);
    let mut action = SyncAction::Reconciling;

    decide_failure(&mut ctx, snapshot);
    if completion_mode == CompletionMode::Indexed {
        super::indexed_sync::decide(&mut ctx);
    }

    let mut active = i32::try_from(ctx.active.len()).unwrap_or(i32::MAX);
    let mut suspend_changed = false;
    if ctx.finished_condition.is_some() {
        let (deleted_ready, deleted) = manage::delete_active_pods(&mut ctx, &mut plan);
        if deleted != active || !satisfied {
            // Pods may still be terminating, or not yet in the cache.
            ctx.finished_condition = None;
        }
        active -= deleted;
        ctx.terminating += deleted;
        ctx.ready -= deleted_ready;
    } else {
        let mut manage_called = false;
        if satisfied && job.metadata.deletion_timestamp.is_none() {
            (active, action) = manage::manage_job(&mut ctx, &mut plan);
            manage_called = true;
        }
        let complete = match ctx.spec_completions() {
            None => ctx.succeeded > 0 && active == 0,
            Some(completions) => ctx.succeeded >= completions && active == 0,
        };
        if complete {
            ctx.finished_condition = Some(conditions::success(ctx.now));
        } else if manage_called {
            suspend_changed = ensure_suspended_condition(&mut ctx, &mut plan);
        }
    }

    let (ready, terminating) = (ctx.ready, ctx.terminating);
    let status = ctx.status();
    let needs_status_update = suspend_changed
        || active != status.active.unwrap_or(0)
        || Some(ready) != status.ready
        || Some(terminating) != status.terminating;
    status.active = Some(active);
    status.ready = Some(ready);
    status.terminating = Some(terminating);
    track::track_job_status_and_remove_finalizers(&mut ctx, needs_status_update, &mut plan);

    plan.requeue_after = ctx.requeue_after;
    Synced {
        plan,
        completion_mode,
        action: Some(action),
        finished: false,
        creation_reason: manage::creation_reason(&ctx),
    }
}

fn new_ctx<'a>(snapshot: &Snapshot<'a>, key: String, claimed: claim::Claimed<'a>) -> Ctx<'a> {
    let mut job = snapshot.job.clone();
    let status = job.status.get_or_insert_default();
    let uncounted = status.uncounted_terminated_pods.get_or_insert_with(UncountedTerminatedPods::default).clone();
    let active: Vec<&Pod> = claimed.pods.iter().copied().filter(|p| is_pod_active(p)).collect();
    let mut ctx = Ctx {
        owner: object_ref(snapshot.job),
        job,
        now: snapshot.now,
        ready: i32::try_from(active.iter().filter(|p| is_pod_ready(p)).count()).unwrap_or(i32::MAX),
        terminating: i32::try_from(claimed.pods.iter().filter(|p| is_pod_terminating(p)).count()).unwrap_or(i32::MAX),
        active,
        pods: claimed.pods,
        adopted: claimed.adopted,
        finished_condition: None,
        succeeded: 0,
        failed: 0,
        uncounted_succeeded: uncounted.succeeded.into_iter().flatten().collect(),
        uncounted_failed: uncounted.failed.into_iter().flatten().collect(),
        expected_rm_finalizers: snapshot.finalizer_expectations.expected(&key),
        new_backoff: BackoffRecord::default(),
        indexed: None,
        requeue_after: None,
        key,
    };
    let (new_succeeded, new_failed) = track::new_finished_pods(&ctx);
    let counted_failed = new_failed.iter().filter(|p| counts_as_failed(&ctx.job, p)).count();
    let status = ctx.job.status.as_ref().cloned().unwrap_or_default();
    let as_i32 = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    ctx.succeeded = status.succeeded.unwrap_or(0) + as_i32(new_succeeded.len()) + as_i32(ctx.uncounted_succeeded.len());
    ctx.failed = status.failed.unwrap_or(0) + as_i32(counted_failed) + as_i32(ctx.uncounted_failed.len());
    ctx.new_backoff = snapshot.backoff.new_record(&ctx.key, &new_succeeded, &new_failed);
    if status.start_time.is_none() && !ctx.suspended() {
        ctx.status().start_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(snapshot.now));
    }
    ctx
}

/// Whether a failed pod counts against the backoff limit: not when a pod
/// failure policy rule ignores it (upstream `nonIgnoredFailedPodsCount`).
pub(super) fn counts_as_failed(job: &Job, pod: &Pod) -> bool {
    let policy = job.spec.as_ref().and_then(|s| s.pod_failure_policy.as_ref());
    policy.is_none() || match_pod_failure_policy(policy, pod).count_failed
}

/// The failure conditions, in upstream's order: an earlier
/// `SuccessCriteriaMet` wins; then an earlier `FailureTarget`, a pod
/// failure policy `FailJob` rule, the backoff limit (failed pods, or
/// restarts with `OnFailure`), the active deadline (or the sync that
/// checks it again).
fn decide_failure(ctx: &mut Ctx<'_>, snapshot: &Snapshot<'_>) {
    let job = snapshot.job;
    let now = ctx.now;
    if let Some(met) = conditions::success_criteria_met(job) {
        ctx.finished_condition = Some(met.clone());
        return;
    }
    if let Some(target) = conditions::failure_target(job) {
        ctx.finished_condition = Some(conditions::terminal_for(target, now));
        return;
    }
    if let Some(message) = fail_job_message(&ctx.job, &ctx.pods) {
        ctx.finished_condition = Some(conditions::new_condition(
            conditions::FAILURE_TARGET,
            "True",
            conditions::POD_FAILURE_POLICY,
            &message,
            now,
        ));
        return;
    }
    let backoff_limit = job.spec.as_ref().and_then(|s| s.backoff_limit).unwrap_or(6);
    if ctx.failed > backoff_limit || past_backoff_limit_on_failure(&ctx.job, &ctx.pods) {
        ctx.finished_condition = Some(conditions::failure(
            conditions::BACKOFF_LIMIT_EXCEEDED,
            "Job has reached the specified backoff limit",
            now,
        ));
        return;
    }
    let Some(deadline) = active_deadline(&ctx.job) else { return };
    let Some(start) = ctx.job.status.as_ref().and_then(|s| s.start_time.as_ref()).map(|t| t.0) else { return };
    let elapsed = start.duration_until(now);
    let allowed = jiff::SignedDuration::from_secs(deadline);
    if elapsed >= allowed {
        ctx.finished_condition = Some(conditions::failure(
            conditions::DEADLINE_EXCEEDED,
            "Job was active longer than specified deadline",
            now,
        ));
    } else {
        ctx.requeue(Duration::try_from(allowed - elapsed).unwrap_or(Duration::ZERO));
    }
}

/// `spec.activeDeadlineSeconds` of a Job that is not suspended.
fn active_deadline(job: &Job) -> Option<i64> {
    if is_suspended(job) {
        return None;
    }
    job.spec.as_ref()?.active_deadline_seconds
}

/// The message of the first `FailJob` rule a failed pod matches (upstream
/// `getFailJobMessage`).
fn fail_job_message(job: &Job, pods: &[&Pod]) -> Option<String> {
    let policy = job.spec.as_ref()?.pod_failure_policy.as_ref()?;
    pods.iter()
        .filter(|p| is_pod_failed(p, job))
        .find_map(|p| match_pod_failure_policy(Some(policy), p).job_failure_message)
}

/// Sets the Suspended condition from `spec.suspend`, with its event; a
/// resumed Job's `startTime` restarts now, so that `activeDeadlineSeconds`
/// counts the time it was active without a break. Whether it changed.
fn ensure_suspended_condition(ctx: &mut Ctx<'_>, plan: &mut Plan) -> bool {
    let now = ctx.now;
    let suspended = ctx.suspended();
    let (status, reason, message, event, event_message) = if suspended {
        ("True", JOB_SUSPENDED, "Job suspended", write::SUSPENDED, "Job suspended")
    } else {
        ("False", JOB_RESUMED, "Job resumed", write::RESUMED, "Job resumed")
    };
    let list = ctx.status().conditions.get_or_insert_default();
    let changed = conditions::ensure(list, SUSPENDED, status, reason, message, now);
    if list.is_empty() {
        ctx.status().conditions = None;
    }
    if changed {
        plan.push(Action::Event(write::event(&ctx.owner, EventType::Normal, event, event_message)));
        if !suspended {
            ctx.status().start_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now));
        }
    }
    changed
}
