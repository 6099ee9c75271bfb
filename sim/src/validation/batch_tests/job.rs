//! Job create and update rules.

use serde_json::json;

use super::*;
use crate::resources::Builtin;

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
