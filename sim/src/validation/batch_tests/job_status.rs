//! Job status rules.

use serde_json::json;

use super::*;

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
