//! Whether a Job has finished, read from its conditions (upstream
//! `pkg/controller/job/util`: `FinishedCondition`, `IsJobFinished`), shared
//! by the Job, CronJob and TTL-after-finished controllers.

use k8s_openapi::api::batch::v1::{Job, JobCondition};

/// Condition type: the Job completed.
pub const COMPLETE: &str = "Complete";
/// Condition type: the Job failed.
pub const FAILED: &str = "Failed";

/// The Job's first `Complete` or `Failed` condition whose status is `True`.
pub fn finished(job: &Job) -> Option<&JobCondition> {
    let conditions = job.status.as_ref().and_then(|s| s.conditions.as_ref())?;
    conditions.iter().find(|c| matches!(c.type_.as_str(), COMPLETE | FAILED) && c.status == "True")
}

/// The type of [`finished`]'s condition (upstream `FinishedCondition`,
/// `getFinishedStatus`), if the Job finished.
pub fn finished_condition(job: &Job) -> Option<&str> {
    finished(job).map(|c| c.type_.as_str())
}

/// `Complete` or `Failed` is `True` (upstream `IsJobFinished`).
pub fn is_finished(job: &Job) -> bool {
    finished(job).is_some()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::batch::v1::JobStatus;

    use super::*;

    fn job(conditions: &[(&str, &str)]) -> Job {
        let conditions = conditions
            .iter()
            .map(|(type_, status)| JobCondition {
                type_: (*type_).to_owned(),
                status: (*status).to_owned(),
                ..Default::default()
            })
            .collect();
        Job { status: Some(JobStatus { conditions: Some(conditions), ..Default::default() }), ..Default::default() }
    }

    #[test]
    fn the_first_true_complete_or_failed_condition_finishes_a_job() {
        assert_eq!(finished_condition(&job(&[])), None);
        assert_eq!(finished_condition(&job(&[("Suspended", "True"), (COMPLETE, "False")])), None);
        assert_eq!(
            finished_condition(&job(&[(COMPLETE, "False"), (FAILED, "True"), (COMPLETE, "True")])),
            Some(FAILED)
        );
        assert!(is_finished(&job(&[(COMPLETE, "True")])));
        assert!(!is_finished(&Job::default()));
    }
}
