//! Tests of the batch/v1 rules, from upstream's tables in
//! pkg/apis/batch/validation/validation_test.go (`TestValidateJob`,
//! `TestValidateJobUpdate`, `TestValidateJobUpdateStatus`,
//! `TestValidateCronJob`, `TestValidateCronJobScheduleTZ`,
//! `TestValidateIndexesString`) for the cases kube-sim checks: each
//! invalid object gives upstream's field path and message.

use serde_json::{Value, json};

use super::fixtures::{lines, with, without};
use super::{validate_create, validate_status_update, validate_update};
use crate::resources::Builtin;

/// CronJob: schedules, time zones, the spec.
mod cron_job;
/// Job create and update: spec rules and what is immutable.
mod job;
/// Job status: interim and terminal conditions, counters.
mod job_status;

// === utils ===

/// A valid Job as the API server stores it after defaulting and selector
/// generation.
fn job() -> Value {
    let labels = json!({"controller-uid": "u-1", "job-name": "pi",
        "batch.kubernetes.io/controller-uid": "u-1", "batch.kubernetes.io/job-name": "pi"});
    json!({
        "metadata": {"name": "pi", "namespace": "default", "uid": "u-1"},
        "spec": {
            "parallelism": 1, "completions": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
            "suspend": false, "manualSelector": false, "podReplacementPolicy": "TerminatingOrFailed",
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}},
            "template": {"metadata": {"labels": labels},
                "spec": {"restartPolicy": "Never", "dnsPolicy": "ClusterFirst",
                    "containers": [{"name": "pi", "image": "perl", "imagePullPolicy": "Always",
                        "terminationMessagePolicy": "File"}]}},
        },
        "status": {},
    })
}

fn indexed(completions: i64) -> Value {
    let j = with(job(), "/spec/completionMode", json!("Indexed"));
    let j = with(j, "/spec/completions", json!(completions));
    with(j, "/spec/parallelism", json!(completions))
}

fn create(kind: Builtin, object: &Value) -> Vec<String> {
    lines(&validate_create(kind, object))
}

fn update(kind: Builtin, old: &Value, new: &Value) -> Vec<String> {
    lines(&validate_update(kind, old, new))
}

fn status(old: &Value, new: &Value) -> Vec<String> {
    lines(&validate_status_update(Builtin::Job, old, new))
}

fn condition(kind: &str) -> Value {
    json!({"type": kind, "status": "True"})
}

/// A valid CronJob.
fn cron_job() -> Value {
    let template = without(job()["spec"]["template"].clone(), "/metadata");
    json!({
        "metadata": {"name": "hello", "namespace": "default", "uid": "c-1"},
        "spec": {"schedule": "*/5 * * * *", "concurrencyPolicy": "Allow", "suspend": false,
            "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
            "jobTemplate": {"spec": {"template": with(template, "/spec/restartPolicy", json!("OnFailure"))}}},
    })
}
