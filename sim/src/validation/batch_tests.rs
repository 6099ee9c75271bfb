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

// === Job create ===

#[test]
fn valid_jobs_pass() {
    assert_eq!(create(Builtin::Job, &job()), Vec::<String>::new());
    assert_eq!(create(Builtin::Job, &indexed(5)), Vec::<String>::new());
    let per_index = with(indexed(5), "/spec/backoffLimitPerIndex", json!(1));
    assert_eq!(create(Builtin::Job, &with(per_index, "/spec/maxFailedIndexes", json!(2))), Vec::<String>::new());
    let manual = with(job(), "/spec/manualSelector", json!(true));
    let manual = with(manual, "/spec/selector", json!({"matchLabels": {"a": "b"}}));
    let manual = with(manual, "/spec/template/metadata/labels", json!({"a": "b"}));
    assert_eq!(create(Builtin::Job, &manual), Vec::<String>::new());
}

#[test]
fn counts_must_not_be_negative() {
    let mut j = job();
    for field in ["parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"] {
        j = with(j, &format!("/spec/{field}"), json!(-1));
    }
    assert_eq!(
        create(Builtin::Job, &j),
        [
            "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
            "spec.completions: Invalid value: -1: must be greater than or equal to 0",
            "spec.activeDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
            "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0",
            "spec.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0",
        ]
    );
}

#[test]
fn the_restart_policy_is_never_or_on_failure() {
    let always = with(job(), "/spec/template/spec/restartPolicy", json!("Always"));
    assert_eq!(
        create(Builtin::Job, &always),
        [r#"spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#]
    );
    let policy = json!({"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]});
    let on_failure = with(job(), "/spec/template/spec/restartPolicy", json!("OnFailure"));
    let on_failure =
        with(with(on_failure, "/spec/podFailurePolicy", policy), "/spec/podReplacementPolicy", json!("Failed"));
    assert_eq!(
        create(Builtin::Job, &on_failure),
        [
            r#"spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified"#
        ]
    );
}

#[test]
fn the_generated_selector_and_labels_must_be_there() {
    let mut missing = job();
    missing["spec"]["template"]["metadata"]["labels"].as_object_mut().unwrap().remove("batch.kubernetes.io/job-name");
    assert_eq!(
        create(Builtin::Job, &missing),
        ["spec.template.metadata.labels[batch.kubernetes.io/job-name]: Required value: pi"]
    );
    let mut wrong = job();
    wrong["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"] = json!("other");
    let causes = create(Builtin::Job, &wrong);
    assert!(
        causes[0].starts_with("spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"),
        "{causes:?}"
    );
    assert!(causes[0].ends_with("`selector` not auto-generated"), "{causes:?}");
    assert!(causes[1].ends_with("`selector` does not match template `labels`"), "{causes:?}");
    let no_uid = without(job(), "/metadata/uid");
    assert!(create(Builtin::Job, &no_uid).contains(&"metadata.uid: Required value".to_owned()));
}

#[test]
fn indexed_rules() {
    let no_completions = without(indexed(3), "/spec/completions");
    assert!(
        create(Builtin::Job, &no_completions)
            .contains(&"spec.completions: Required value: when completion mode is Indexed".to_owned())
    );
    let per_index = with(job(), "/spec/backoffLimitPerIndex", json!(1));
    assert_eq!(
        create(Builtin::Job, &per_index),
        ["spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode"]
    );
    let max_failed = with(indexed(3), "/spec/maxFailedIndexes", json!(5));
    assert_eq!(
        create(Builtin::Job, &max_failed),
        [
            "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
            "spec.maxFailedIndexes: Invalid value: 5: must be less than or equal to completions",
        ]
    );
    let mode = with(job(), "/spec/completionMode", json!("Sometimes"));
    assert_eq!(
        create(Builtin::Job, &mode),
        [r#"spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed""#]
    );
    let long_name = "a".repeat(62);
    let named = with(indexed(10), "/metadata/name", json!(long_name));
    let named = with(named, "/spec/template/metadata/labels/job-name", json!(long_name));
    let mut named = named;
    named["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"] = json!(long_name);
    let causes = create(Builtin::Job, &named);
    assert!(
        causes
            .iter()
            .any(|c| c.contains(&format!("will not able to create pod with invalid DNS label: {long_name}-9"))),
        "{causes:?}"
    );
}

#[test]
fn pod_failure_policy_rules() {
    let rules = json!([
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0, 3, 3, 2]}},
        {"action": "FailIndex", "onExitCodes": {"containerName": "nope", "operator": "NotIn", "values": [1]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "Maybe"}],
            "onExitCodes": {"operator": "Within", "values": [1]}},
        {"action": ""},
    ]);
    let j = with(job(), "/spec/podFailurePolicy", json!({"rules": rules}));
    let j = with(j, "/spec/podReplacementPolicy", json!("TerminatingOrFailed"));
    assert_eq!(
        create(Builtin::Job, &j),
        [
            "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
            "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
            "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{0, 3, 3, 2}: must be ordered",
            r#"spec.podFailurePolicy.rules[1].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set"#,
            r#"spec.podFailurePolicy.rules[1].onExitCodes.containerName: Invalid value: "nope": must be one of the container or initContainer names in the pod template"#,
            r#"spec.podFailurePolicy.rules[2].onExitCodes.operator: Unsupported value: "Within": supported values: "In", "NotIn""#,
            r#"spec.podFailurePolicy.rules[2].onPodConditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown""#,
            "spec.podFailurePolicy.rules[2]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported",
            r#"spec.podFailurePolicy.rules[3].action: Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]"#,
            "spec.podFailurePolicy.rules[3]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
            r#"spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed""#,
        ]
    );
}

#[test]
fn managed_by_is_a_short_domain_prefixed_path() {
    let bare = with(job(), "/spec/managedBy", json!("controller"));
    assert_eq!(
        create(Builtin::Job, &bare),
        [r#"spec.managedBy: Invalid value: "controller": must be a domain-prefixed path (such as "acme.io/foo")"#]
    );
    let long = with(job(), "/spec/managedBy", json!(format!("example.com/{}", "x".repeat(60))));
    assert_eq!(create(Builtin::Job, &long), ["spec.managedBy: Too long: may not be more than 63 bytes"]);
    let ok = with(job(), "/spec/managedBy", json!("kueue.x-k8s.io/multikueue"));
    assert!(create(Builtin::Job, &ok).is_empty());
}

#[test]
fn success_policy_rules() {
    let policy = json!({"rules": [{"succeededIndexes": "0-2"}]});
    let non_indexed = with(job(), "/spec/successPolicy", policy);
    assert_eq!(
        create(Builtin::Job, &non_indexed),
        [
            "spec.successPolicy: Invalid value: batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{batch.SuccessPolicyRule{SucceededIndexes:(*string)(0xc000000000), SucceededCount:(*int32)(nil)}}}: requires indexed completion mode"
        ]
    );
    let rules = json!({"rules": [{"succeededIndexes": "1,0", "succeededCount": 9}, {}, {"succeededIndexes": "3-1"},
        {"succeededIndexes": "0-1", "succeededCount": 3}]});
    let indexed = with(indexed(5), "/spec/successPolicy", rules);
    assert_eq!(
        create(Builtin::Job, &indexed),
        [
            r#"spec.successPolicy.rules[0].succeededIndexes: Invalid value: "1,0": error parsing succeededIndexes: non-increasing order, previous: 1, current: 0"#,
            "spec.successPolicy.rules[0].succeededCount: Invalid value: 9: must be less than or equal to 5 (the number of specified completions)",
            "spec.successPolicy.rules[0].succeededCount: Invalid value: 9: must be less than or equal to 0 (the number of indexes in the specified succeededIndexes field)",
            "spec.successPolicy.rules[1]: Required value: at least one of succeededCount or succeededIndexes must be specified",
            r#"spec.successPolicy.rules[2].succeededIndexes: Invalid value: "3-1": error parsing succeededIndexes: non-increasing order, previous: 3, current: 1"#,
            "spec.successPolicy.rules[3].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)",
        ]
    );
}

// === Job update ===

#[test]
fn immutable_spec_fields() {
    let old = job();
    let selector = with(old.clone(), "/spec/selector/matchLabels/extra", json!("x"));
    let selector = with(selector, "/spec/template/metadata/labels/extra", json!("x"));
    let causes = update(Builtin::Job, &old, &selector);
    assert!(
        causes
            .iter()
            .any(|c| c.starts_with("spec.selector: Invalid value: v1.LabelSelector")
                && c.ends_with("field is immutable")),
        "{causes:?}"
    );
    assert!(causes.iter().any(|c| c.starts_with("spec.template: Invalid value: core.PodTemplateSpec")), "{causes:?}");
    assert_eq!(
        update(Builtin::Job, &old, &with(old.clone(), "/spec/completions", json!(3))),
        ["spec.completions: Invalid value: 3: field is immutable"]
    );
    assert_eq!(
        update(Builtin::Job, &old, &with(old.clone(), "/spec/managedBy", json!("example.com/x"))),
        [r#"spec.managedBy: Invalid value: "example.com/x": field is immutable"#]
    );
    assert_eq!(
        update(Builtin::Job, &old, &with(old.clone(), "/spec/template/spec/containers/0/image", json!("perl:6"))),
        ["spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"]
    );
    let mutable = with(with(old.clone(), "/spec/parallelism", json!(4)), "/spec/suspend", json!(true));
    assert!(update(Builtin::Job, &old, &with(mutable, "/spec/activeDeadlineSeconds", json!(60))).is_empty());
}

#[test]
fn an_indexed_job_scales_completions_with_parallelism() {
    let old = indexed(3);
    let scaled = with(with(old.clone(), "/spec/completions", json!(5)), "/spec/parallelism", json!(5));
    assert!(update(Builtin::Job, &old, &scaled).is_empty());
    let alone = with(old.clone(), "/spec/completions", json!(5));
    assert_eq!(
        update(Builtin::Job, &old, &alone),
        ["spec.completions: Invalid value: 5: can only be modified in tandem with spec.parallelism"]
    );
}

#[test]
fn a_suspended_job_that_never_started_may_change_its_scheduling_directives() {
    let old = with(job(), "/spec/suspend", json!(true));
    let moved = with(old.clone(), "/spec/template/spec/nodeSelector", json!({"zone": "b"}));
    let moved = with(moved, "/spec/template/spec/tolerations", json!([{"key": "k", "operator": "Exists"}]));
    let moved = with(moved, "/spec/template/metadata/annotations", json!({"a": "b"}));
    let affinity =
        json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}});
    let moved = with(moved, "/spec/template/spec/affinity", affinity);
    assert_eq!(update(Builtin::Job, &old, &moved), Vec::<String>::new());
    let started = with(old.clone(), "/status/startTime", json!("2024-01-01T00:00:00Z"));
    assert_eq!(
        update(Builtin::Job, &started, &moved),
        ["spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"]
    );
    let image = with(old.clone(), "/spec/template/spec/containers/0/image", json!("perl:6"));
    assert_eq!(
        update(Builtin::Job, &old, &image),
        ["spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"]
    );
}

// === Job status ===

#[test]
fn terminal_conditions_follow_their_interim_ones() {
    let old = with(job(), "/status/startTime", json!("2024-01-01T00:00:00Z"));
    let complete = with(old.clone(), "/status/conditions", json!([condition("Complete")]));
    let complete = with(complete, "/status/completionTime", json!("2024-01-01T00:01:00Z"));
    assert_eq!(
        status(&old, &complete),
        [
            "status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition"
        ]
    );
    let met =
        with(complete.clone(), "/status/conditions", json!([condition("SuccessCriteriaMet"), condition("Complete")]));
    assert!(status(&old, &met).is_empty());
    let failed = with(old.clone(), "/status/conditions", json!([condition("Failed")]));
    assert_eq!(
        status(&old, &failed),
        ["status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition"]
    );
    let no_time = without(met.clone(), "/status/completionTime");
    assert_eq!(
        status(&old, &no_time),
        ["status.completionTime: Required value: completionTime is required for Complete jobs"]
    );
    let reopened = with(met.clone(), "/status/conditions", json!([condition("SuccessCriteriaMet")]));
    let reopened = without(reopened, "/status/completionTime");
    assert_eq!(
        status(&met, &reopened),
        ["status.conditions: Invalid value: cannot disable the terminal Complete=True condition"]
    );
}

#[test]
fn counters_and_pods_of_finished_jobs() {
    let old = with(with(job(), "/status/failed", json!(2)), "/status/succeeded", json!(1));
    assert_eq!(
        status(&old, &with(old.clone(), "/status/failed", json!(1))),
        ["status.failed: Invalid value: 1: cannot decrease the failed counter"]
    );
    let ready = with(with(old.clone(), "/status/active", json!(1)), "/status/ready", json!(2));
    assert_eq!(status(&old, &ready), ["status.ready: Invalid value: 2: cannot set more ready pods than active"]);
    let uids = json!({"succeeded": ["a", ""], "failed": ["a"]});
    assert_eq!(
        status(&old, &with(old.clone(), "/status/uncountedTerminatedPods", uids)),
        [
            r#"status.uncountedTerminatedPods.succeeded[1]: Invalid value: "": must not be empty"#,
            r#"status.uncountedTerminatedPods.failed[0]: Duplicate value: "a""#,
        ]
    );
    let finished = with(old.clone(), "/status/conditions", json!([condition("FailureTarget"), condition("Failed")]));
    let finished = with(finished, "/status/active", json!(1));
    assert_eq!(
        status(&old, &finished),
        [
            "status.active: Invalid value: 1: active>0 is invalid for finished job",
            "status.startTime: Required value: startTime is required for finished job",
        ]
    );
    let indexes = with(old.clone(), "/status/completedIndexes", json!("0"));
    assert_eq!(
        status(&old, &indexes),
        [
            r#"status.completedIndexes: Invalid value: "0": cannot set non-empty completedIndexes when non-indexed completion mode"#
        ]
    );
    let bad = with(indexed(3), "/status/completedIndexes", json!("0,5"));
    assert_eq!(
        status(&indexed(3), &bad),
        [r#"status.completedIndexes: Invalid value: "0,5": error parsing completedIndexes: too large index: "5""#]
    );
}

// === CronJob ===

#[test]
fn valid_cron_jobs_pass() {
    for schedule in ["*/5 * * * *", "0 0 1 jan-mar mon", "@hourly", "@every 5m", "5 4 * * SUN", "0 0 ? * *"] {
        let cj = with(cron_job(), "/spec/schedule", json!(schedule));
        assert_eq!(create(Builtin::CronJob, &cj), Vec::<String>::new(), "{schedule}");
    }
    let zoned = with(cron_job(), "/spec/timeZone", json!("Europe/Paris"));
    assert!(create(Builtin::CronJob, &zoned).is_empty());
}

#[test]
fn schedules_are_parsed_as_robfig_cron_does() {
    let cases = [
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("x * * * *", r#"failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax"#),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ];
    for (schedule, message) in cases {
        let cj = with(cron_job(), "/spec/schedule", json!(schedule));
        assert_eq!(
            create(Builtin::CronJob, &cj),
            [format!("spec.schedule: Invalid value: {:?}: {message}", schedule)],
            "{schedule}"
        );
    }
}

#[test]
fn time_zones_belong_in_the_time_zone_field() {
    let tz = with(cron_job(), "/spec/schedule", json!("TZ=UTC 0 * * * *"));
    assert_eq!(
        create(Builtin::CronJob, &tz),
        [
            r#"spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"#
        ]
    );
    // An existing schedule with TZ may stay, but not beside timeZone.
    assert!(update(Builtin::CronJob, &tz, &tz).is_empty());
    let both = with(tz.clone(), "/spec/timeZone", json!("UTC"));
    assert_eq!(
        update(Builtin::CronJob, &tz, &both),
        [
            r#"spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule"#
        ]
    );
    let unknown = with(cron_job(), "/spec/timeZone", json!("Mars/Olympus"));
    assert_eq!(
        create(Builtin::CronJob, &unknown),
        [r#"spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus"#]
    );
    let local = with(cron_job(), "/spec/timeZone", json!("Local"));
    assert_eq!(
        create(Builtin::CronJob, &local),
        [
            r#"spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"#
        ]
    );
    let empty = with(cron_job(), "/spec/timeZone", json!(""));
    assert_eq!(
        create(Builtin::CronJob, &empty),
        [r#"spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string"#]
    );
}

#[test]
fn cron_job_spec_rules() {
    let long = with(cron_job(), "/metadata/name", json!("a".repeat(53)));
    assert_eq!(
        create(Builtin::CronJob, &long),
        [format!("metadata.name: Invalid value: \"{}\": must be no more than 52 characters", "a".repeat(53))]
    );
    assert!(update(Builtin::CronJob, &long, &long).is_empty(), "the limit is for new CronJobs only");
    let cj = with(cron_job(), "/spec/concurrencyPolicy", json!("Sometimes"));
    let cj = with(cj, "/spec/startingDeadlineSeconds", json!(-1));
    let cj = with(cj, "/spec/jobTemplate/spec/selector", json!({"matchLabels": {"a": "b"}}));
    let cj = with(cj, "/spec/jobTemplate/spec/manualSelector", json!(true));
    let cj = with(cj, "/spec/failedJobsHistoryLimit", json!(-1));
    assert_eq!(
        create(Builtin::CronJob, &cj),
        [
            "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
            r#"spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace""#,
            r#"spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated"#,
            r#"spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false""#,
            "spec.failedJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
        ]
    );
    let always = with(cron_job(), "/spec/jobTemplate/spec/template/spec/restartPolicy", json!("Always"));
    assert_eq!(
        create(Builtin::CronJob, &always),
        [r#"spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#]
    );
}
