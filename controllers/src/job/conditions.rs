//! A Job's conditions and whose Job it is: the condition types and
//! reasons upstream writes, `ensureJobConditionStatus`, "finished", the
//! interim conditions (`FailureTarget`, `SuccessCriteriaMet`) and the
//! terminal ones they become, and `spec.managedBy` (upstream
//! `job_controller.go`, `pkg/controller/job/util`).
//!
//! Since 1.31 (`JobManagedBy`, `JobPodReplacementPolicy`, both GA by 1.37)
//! a Job about to finish first gets the interim condition, its pods'
//! finalizers are removed, and only then the terminal one (`Complete` or
//! `Failed`), once no pod is terminating: `FailureTarget` becomes `Failed`
//! with the same reason and message, `SuccessCriteriaMet` becomes
//! `Complete`.

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{Job, JobCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

pub use crate::common::job_finished::{COMPLETE, FAILED, is_finished};

/// Condition type: the Job is suspended (`True`) or was resumed (`False`).
pub const SUSPENDED: &str = "Suspended";
/// Interim condition type: the Job will fail once its pods are terminated.
pub const FAILURE_TARGET: &str = "FailureTarget";
/// Interim condition type: the Job will complete once its pods are
/// terminated.
pub const SUCCESS_CRITERIA_MET: &str = "SuccessCriteriaMet";

/// Reason: `status.failed` passed `spec.backoffLimit`.
pub const BACKOFF_LIMIT_EXCEEDED: &str = "BackoffLimitExceeded";
/// Reason: active longer than `spec.activeDeadlineSeconds`.
pub const DEADLINE_EXCEEDED: &str = "DeadlineExceeded";
/// Reason: a `FailJob` rule of the pod failure policy matched.
pub const POD_FAILURE_POLICY: &str = "PodFailurePolicy";
/// Reason: more failed indexes than `spec.maxFailedIndexes`.
pub const MAX_FAILED_INDEXES_EXCEEDED: &str = "MaxFailedIndexesExceeded";
/// Reason: every index finished and some failed.
pub const FAILED_INDEXES: &str = "FailedIndexes";
/// Reason: a rule of the success policy was met.
pub const SUCCESS_POLICY: &str = "SuccessPolicy";
/// Reason: every completion succeeded.
pub const COMPLETIONS_REACHED: &str = "CompletionsReached";
/// Suspended condition reason when suspended.
pub const JOB_SUSPENDED: &str = "JobSuspended";
/// Suspended condition reason when resumed.
pub const JOB_RESUMED: &str = "JobResumed";

/// `spec.managedBy` of a Job this controller syncs.
pub const JOB_CONTROLLER_NAME: &str = "kubernetes.io/job-controller";

/// The controller named by `spec.managedBy`, when it is not this one
/// (upstream `managedByExternalController`): such a Job is left alone.
pub fn managed_by_external(job: &Job) -> Option<&str> {
    job.spec.as_ref()?.managed_by.as_deref().filter(|m| *m != JOB_CONTROLLER_NAME)
}

/// The condition of `type_`, if the Job has one.
pub fn find<'a>(conditions: &'a [JobCondition], type_: &str) -> Option<&'a JobCondition> {
    conditions.iter().find(|c| c.type_ == type_)
}

fn conditions(job: &Job) -> &[JobCondition] {
    job.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default()
}

/// The `SuccessCriteriaMet` condition, when `True`.
pub fn success_criteria_met(job: &Job) -> Option<&JobCondition> {
    find(conditions(job), SUCCESS_CRITERIA_MET).filter(|c| c.status == "True")
}

/// The `FailureTarget` condition, when `True`.
pub fn failure_target(job: &Job) -> Option<&JobCondition> {
    find(conditions(job), FAILURE_TARGET).filter(|c| c.status == "True")
}

/// A condition as upstream builds it: probe and transition time `now`.
pub fn new_condition(type_: &str, status: &str, reason: &str, message: &str, now: Timestamp) -> JobCondition {
    JobCondition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: Some(reason.to_owned()).filter(|r| !r.is_empty()),
        message: Some(message.to_owned()).filter(|m| !m.is_empty()),
        last_probe_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
    }
}

/// The interim failure condition (`FailureTarget`) with this reason and
/// message (upstream `newFailureCondition` with `delayTerminalCondition`).
pub fn failure(reason: &str, message: &str, now: Timestamp) -> JobCondition {
    new_condition(FAILURE_TARGET, "True", reason, message, now)
}

/// The interim success condition (`SuccessCriteriaMet`, reason
/// `CompletionsReached`, upstream `newSuccessCondition`).
pub fn success(now: Timestamp) -> JobCondition {
    new_condition(SUCCESS_CRITERIA_MET, "True", COMPLETIONS_REACHED, "Reached expected number of succeeded pods", now)
}

/// The terminal condition an interim one becomes: `FailureTarget` ->
/// `Failed`, `SuccessCriteriaMet` -> `Complete`, same reason and message.
pub fn terminal_for(interim: &JobCondition, now: Timestamp) -> JobCondition {
    let type_ = if interim.type_ == SUCCESS_CRITERIA_MET { COMPLETE } else { FAILED };
    let text = |s: &Option<String>| s.clone().unwrap_or_default();
    new_condition(type_, "True", &text(&interim.reason), &text(&interim.message), now)
}

/// Sets the condition of `type_` to this status, reason and message
/// (upstream `ensureJobConditionStatus`): an existing one that differs is
/// replaced (new times), a missing one is appended unless its status would
/// be `False`. Whether the list changed.
pub fn ensure(
    list: &mut Vec<JobCondition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> bool {
    if let Some(existing) = list.iter_mut().find(|c| c.type_ == type_) {
        let same = existing.status == status
            && existing.reason.as_deref().unwrap_or("") == reason
            && existing.message.as_deref().unwrap_or("") == message;
        if !same {
            *existing = new_condition(type_, status, reason, message, now);
        }
        return !same;
    }
    if status != "False" {
        list.push(new_condition(type_, status, reason, message, now));
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::batch::v1::{JobSpec, JobStatus};

    use super::*;
    use crate::testing::ts;

    /// Upstream `TestEnsureJobConditions`.
    #[test]
    fn ensure_job_conditions() {
        let now = ts(100);
        let cases: Vec<(&str, Vec<JobCondition>, &str, bool, usize)> = vec![
            ("append true condition", vec![], "True", true, 1),
            ("append false condition", vec![], "False", false, 0),
            ("update true condition reason", vec![new_condition(SUSPENDED, "True", "foo", "", ts(0))], "True", true, 1),
            ("update true condition status", vec![new_condition(SUSPENDED, "False", "", "", ts(0))], "True", true, 1),
            ("update false condition status", vec![new_condition(SUSPENDED, "True", "", "", ts(0))], "False", true, 1),
            ("condition already exists", vec![new_condition(SUSPENDED, "True", "", "", ts(0))], "True", false, 1),
        ];
        for (name, mut list, status, updated, len) in cases {
            assert_eq!(ensure(&mut list, SUSPENDED, status, "", "", now), updated, "{name}");
            assert_eq!(list.len(), len, "{name}");
            if updated {
                assert_eq!(list[0].last_transition_time, Some(Time(now)), "{name}");
                assert_eq!(list[0].status, status, "{name}");
            }
        }
    }

    #[test]
    fn interim_conditions_become_terminal_ones() {
        let f = failure(BACKOFF_LIMIT_EXCEEDED, "Job has reached the specified backoff limit", ts(1));
        let t = terminal_for(&f, ts(2));
        assert_eq!((t.type_.as_str(), t.reason.as_deref()), (FAILED, Some(BACKOFF_LIMIT_EXCEEDED)));
        assert_eq!(t.message, f.message);
        let s = terminal_for(&success(ts(1)), ts(2));
        assert_eq!((s.type_.as_str(), s.reason.as_deref()), (COMPLETE, Some(COMPLETIONS_REACHED)));
    }

    #[test]
    fn finished_and_managed_by() {
        let mut job = Job { spec: Some(JobSpec::default()), ..Default::default() };
        assert!(!is_finished(&job));
        job.status = Some(JobStatus {
            conditions: Some(vec![new_condition(FAILED, "True", "", "", ts(0))]),
            ..Default::default()
        });
        assert!(is_finished(&job));
        assert_eq!(managed_by_external(&job), None);
        job.spec.as_mut().unwrap().managed_by = Some(JOB_CONTROLLER_NAME.into());
        assert_eq!(managed_by_external(&job), None);
        job.spec.as_mut().unwrap().managed_by = Some("example.com/custom".into());
        assert_eq!(managed_by_external(&job), Some("example.com/custom"));
    }
}
