//! Defaults of the batch/v1 kinds (`pkg/apis/batch/v1/defaults.go`): Job
//! and CronJob. Their pod templates get the pod spec defaults in `pod.rs`;
//! a CronJob's job template gets only those, as upstream's generated
//! defaulter gives it (no `SetDefaults_Job` on a template).

use serde_json::{Map, Value, json};

use super::fields::{child, children, default_str, default_value};
use super::pod::pod_template;

/// `math.MaxInt32`, a Job's `backoffLimit` when it has a
/// `backoffLimitPerIndex`.
const MAX_INT32: i64 = 2_147_483_647;

/// `SetDefaults_Job`, then the pod template's defaults.
///
/// Both `completions` and `parallelism` 1 when neither is given, else
/// `parallelism` 1; `backoffLimit` 6 (`MaxInt32` with
/// `backoffLimitPerIndex`); the template's labels as the Job's when it has
/// none; `completionMode` NonIndexed; `suspend` false; the pod failure
/// policy's pod condition patterns `status` True; `podReplacementPolicy`
/// Failed with a pod failure policy, TerminatingOrFailed without;
/// `manualSelector` false.
pub(super) fn job(object: &mut Value) {
    let template_labels = object.pointer("/spec/template/metadata/labels").filter(|l| l.is_object()).cloned();
    if let Some(labels) = template_labels
        && let Some(job) = object.as_object_mut()
    {
        let metadata = job.entry("metadata").or_insert_with(|| json!({}));
        if let Some(metadata) = metadata.as_object_mut()
            && metadata.get("labels").and_then(Value::as_object).is_none_or(Map::is_empty)
        {
            metadata.insert("labels".to_owned(), labels);
        }
    }
    if let Some(spec) = child(object, "spec") {
        job_spec(spec);
        if let Some(template) = spec.get_mut("template").and_then(Value::as_object_mut) {
            pod_template(template);
        }
    }
}

/// The spec part of `SetDefaults_Job`.
fn job_spec(spec: &mut Map<String, Value>) {
    let unset = |spec: &Map<String, Value>, key: &str| spec.get(key).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".to_owned(), json!(1));
    }
    default_value(spec, "parallelism", json!(1));
    let backoff = if unset(spec, "backoffLimitPerIndex") { 6 } else { MAX_INT32 };
    default_value(spec, "backoffLimit", json!(backoff));
    default_value(spec, "completionMode", json!("NonIndexed"));
    default_value(spec, "suspend", json!(false));
    let has_failure_policy = !unset(spec, "podFailurePolicy");
    if let Some(policy) = spec.get_mut("podFailurePolicy").and_then(Value::as_object_mut) {
        for rule in children(policy, "rules") {
            for pattern in children(rule, "onPodConditions") {
                default_str(pattern, "status", "True");
            }
        }
    }
    let replacement = if has_failure_policy { "Failed" } else { "TerminatingOrFailed" };
    default_value(spec, "podReplacementPolicy", json!(replacement));
    default_value(spec, "manualSelector", json!(false));
}

/// `SetDefaults_CronJob`, then the job template's pod template defaults.
///
/// `concurrencyPolicy` Allow, `suspend` false, `successfulJobsHistoryLimit`
/// 3, `failedJobsHistoryLimit` 1.
pub(super) fn cron_job(object: &mut Value) {
    let Some(spec) = child(object, "spec") else {
        return;
    };
    default_str(spec, "concurrencyPolicy", "Allow");
    default_value(spec, "suspend", json!(false));
    default_value(spec, "successfulJobsHistoryLimit", json!(3));
    default_value(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(template) = spec
        .get_mut("jobTemplate")
        .and_then(|t| t.get_mut("spec"))
        .and_then(|s| s.get_mut("template"))
        .and_then(Value::as_object_mut)
    {
        pod_template(template);
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestSetDefaultJob` and `TestSetDefaultCronJob` cases
    //! (pkg/apis/batch/v1/defaults_test.go), on the JSON kube-sim keeps.

    use super::*;

    fn job_with(spec: Value) -> Value {
        let mut object = json!({"metadata": {}, "spec": spec});
        object["spec"]["template"] = json!({"metadata": {"labels": {"app": "x"}}, "spec": {"containers": []}});
        job(&mut object);
        object
    }

    fn fields(object: &Value, keys: &[&str]) -> Vec<Value> {
        keys.iter().map(|k| object["spec"].get(*k).cloned().unwrap_or(Value::Null)).collect()
    }

    #[test]
    fn a_job_with_neither_count_gets_one_of_each_and_upstreams_defaults() {
        let object = job_with(json!({}));
        assert_eq!(
            fields(
                &object,
                &[
                    "completions",
                    "parallelism",
                    "backoffLimit",
                    "completionMode",
                    "suspend",
                    "podReplacementPolicy",
                    "manualSelector"
                ]
            ),
            [
                json!(1),
                json!(1),
                json!(6),
                json!("NonIndexed"),
                json!(false),
                json!("TerminatingOrFailed"),
                json!(false)
            ]
        );
        assert_eq!(object["metadata"]["labels"], json!({"app": "x"}));
        assert_eq!(object["spec"]["template"]["spec"]["restartPolicy"], "Always");
    }

    #[test]
    fn counts_given_are_kept_and_only_parallelism_is_filled_in() {
        let object = job_with(json!({"completions": 5}));
        assert_eq!(fields(&object, &["completions", "parallelism"]), [json!(5), json!(1)]);
        let object = job_with(json!({"parallelism": 3}));
        assert_eq!(fields(&object, &["completions", "parallelism"]), [Value::Null, json!(3)]);
        let object = job_with(json!({"completions": 0, "parallelism": 0, "backoffLimit": 0}));
        assert_eq!(fields(&object, &["completions", "parallelism", "backoffLimit"]), [json!(0), json!(0), json!(0)]);
    }

    #[test]
    fn backoff_limit_per_index_makes_the_backoff_limit_max_int32() {
        let object = job_with(json!({"completionMode": "Indexed", "completions": 2, "backoffLimitPerIndex": 1}));
        assert_eq!(object["spec"]["backoffLimit"], MAX_INT32);
    }

    #[test]
    fn a_pod_failure_policy_gets_failed_replacement_and_true_condition_patterns() {
        let policy = json!({"rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}, {"type": "X", "status": "False"}]},
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}},
        ]});
        let object = job_with(json!({"podFailurePolicy": policy}));
        assert_eq!(object["spec"]["podReplacementPolicy"], "Failed");
        let patterns = &object["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"];
        assert_eq!(
            patterns,
            &json!([{"type": "DisruptionTarget", "status": "True"}, {"type": "X", "status": "False"}])
        );
    }

    #[test]
    fn the_jobs_own_labels_win_over_the_templates() {
        let mut object = json!({"metadata": {"labels": {"team": "a"}},
            "spec": {"template": {"metadata": {"labels": {"app": "x"}}}}});
        job(&mut object);
        assert_eq!(object["metadata"]["labels"], json!({"team": "a"}));
    }

    #[test]
    fn a_cron_job_gets_its_policy_limits_and_pod_defaults_but_no_job_defaults() {
        let mut object = json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {
            "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}}});
        cron_job(&mut object);
        let spec = &object["spec"];
        assert_eq!(spec["concurrencyPolicy"], "Allow");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["successfulJobsHistoryLimit"], 3);
        assert_eq!(spec["failedJobsHistoryLimit"], 1);
        let job_spec = &spec["jobTemplate"]["spec"];
        assert!(job_spec.get("backoffLimit").is_none() && job_spec.get("completions").is_none());
        assert_eq!(job_spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
        assert_eq!(job_spec["template"]["spec"]["containers"][0]["imagePullPolicy"], "Always");
    }
}
