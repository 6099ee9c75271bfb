//! Status rules of the apps/v1 workloads, checked on their `/status`
//! writes: `ValidateReplicaSetStatus`, `ValidateDeploymentStatus`,
//! `validateDaemonSetStatus`, `ValidateStatefulSetStatus` and the
//! `collisionCount` rule of their status updates.
//!
//! Every count is non-negative, and no count of a subset exceeds the count
//! of the set it is part of: of 3 replicas at most 3 are ready, and of 2
//! ready at most 2 are available. `terminatingReplicas` (kept, as the
//! `DeploymentReplicaSetTerminatingReplicas` gate is on in 1.37) is only
//! checked for sign.

use serde_json::Value;

use super::access::{at, int};
use super::errors::{Errors, nonnegative};

/// Upstream's message for a subset count above `status.replicas`.
const ABOVE_REPLICAS: &str = "cannot be greater than status.replicas";

/// A count field of `status` (absent is 0, as the Go int32 is).
fn count(status: &Value, field: &str) -> i64 {
    int(status, field).unwrap_or(0)
}

/// `field` of `status` checked to be non-negative, at `status.<field>`.
fn nonnegative_count(errs: &mut Errors, status: &Value, field: &str) {
    nonnegative(errs, Some(count(status, field)), &format!("status.{field}"));
}

/// `field` not above `bound` (another count), else `detail`.
fn at_most(errs: &mut Errors, status: &Value, field: &str, bound: &str, detail: &str) {
    let value = count(status, field);
    if value > count(status, bound) {
        errs.invalid(&format!("status.{field}"), value.to_string(), detail);
    }
}

/// The optional `terminatingReplicas`, non-negative when set.
fn terminating(errs: &mut Errors, status: &Value) {
    nonnegative(errs, int(status, "terminatingReplicas"), "status.terminatingReplicas");
}

/// `ValidateReplicaSetStatus`.
pub(super) fn replica_set_status(errs: &mut Errors, status: &Value) {
    for field in ["replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration"] {
        nonnegative_count(errs, status, field);
    }
    terminating(errs, status);
    for field in ["fullyLabeledReplicas", "readyReplicas", "availableReplicas"] {
        at_most(errs, status, field, "replicas", ABOVE_REPLICAS);
    }
    at_most(errs, status, "availableReplicas", "readyReplicas", "cannot be greater than readyReplicas");
}

/// `ValidateDeploymentStatus`.
pub(super) fn deployment_status(errs: &mut Errors, status: &Value) {
    for field in ["observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas"] {
        nonnegative_count(errs, status, field);
    }
    nonnegative_count(errs, status, "unavailableReplicas");
    terminating(errs, status);
    nonnegative(errs, int(status, "collisionCount"), "status.collisionCount");
    for field in ["updatedReplicas", "readyReplicas", "availableReplicas"] {
        at_most(errs, status, field, "replicas", ABOVE_REPLICAS);
    }
    at_most(errs, status, "availableReplicas", "readyReplicas", "cannot be greater than readyReplicas");
}

/// `validateDaemonSetStatus`: every count non-negative (the counts are of
/// nodes, and upstream bounds none by another).
pub(super) fn daemon_set_status(errs: &mut Errors, status: &Value) {
    for field in [
        "currentNumberScheduled",
        "numberMisscheduled",
        "desiredNumberScheduled",
        "numberReady",
        "observedGeneration",
        "updatedNumberScheduled",
        "numberAvailable",
        "numberUnavailable",
    ] {
        nonnegative_count(errs, status, field);
    }
    nonnegative(errs, int(status, "collisionCount"), "status.collisionCount");
}

/// `ValidateStatefulSetStatus`.
pub(super) fn stateful_set_status(errs: &mut Errors, status: &Value) {
    for field in ["replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"] {
        nonnegative_count(errs, status, field);
    }
    nonnegative(errs, int(status, "observedGeneration"), "status.observedGeneration");
    nonnegative(errs, int(status, "collisionCount"), "status.collisionCount");
    for field in ["readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"] {
        at_most(errs, status, field, "replicas", ABOVE_REPLICAS);
    }
    at_most(errs, status, "availableReplicas", "readyReplicas", "cannot be greater than status.readyReplicas");
}

/// The `collisionCount` of a workload's status never goes down, nor
/// away once set (upstream `IsDecremented`; a removed count shows as 0).
pub(super) fn collision_count_update(errs: &mut Errors, old: &Value, new: &Value) {
    let old_count = int(at(old, "status"), "collisionCount");
    let new_count = int(at(new, "status"), "collisionCount");
    if let Some(old_count) = old_count
        && new_count.is_none_or(|n| n < old_count)
    {
        errs.invalid("status.collisionCount", new_count.unwrap_or(0).to_string(), "cannot be decremented");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lines(check: fn(&mut Errors, &Value), status: Value) -> Vec<String> {
        let mut errs = Errors::default();
        check(&mut errs, &status);
        errs.finish().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn consistent_counts_pass() {
        let rs = json!({"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2, "availableReplicas": 2,
            "observedGeneration": 4, "terminatingReplicas": 1});
        assert!(lines(replica_set_status, rs).is_empty());
        let deployment = json!({"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 2,
            "unavailableReplicas": 1, "terminatingReplicas": 0, "collisionCount": 1, "observedGeneration": 2});
        assert!(lines(deployment_status, deployment).is_empty());
        assert!(lines(deployment_status, json!({})).is_empty());
    }

    #[test]
    fn replica_set_counts() {
        assert_eq!(
            lines(
                replica_set_status,
                json!({"replicas": 2, "fullyLabeledReplicas": 3, "readyReplicas": 1, "availableReplicas": 2,
                    "observedGeneration": -1, "terminatingReplicas": -1})
            ),
            vec![
                "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
                "status.terminatingReplicas: Invalid value: -1: must be greater than or equal to 0",
                "status.fullyLabeledReplicas: Invalid value: 3: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas",
            ]
        );
    }

    #[test]
    fn deployment_counts() {
        assert_eq!(
            lines(
                deployment_status,
                json!({"replicas": 1, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 3,
                    "unavailableReplicas": -1, "collisionCount": -2})
            ),
            vec![
                "status.unavailableReplicas: Invalid value: -1: must be greater than or equal to 0",
                "status.collisionCount: Invalid value: -2: must be greater than or equal to 0",
                "status.updatedReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas",
            ]
        );
    }

    #[test]
    fn daemon_set_counts() {
        let fine = json!({"currentNumberScheduled": 3, "desiredNumberScheduled": 3, "numberReady": 2,
            "numberAvailable": 2, "numberUnavailable": 1, "updatedNumberScheduled": 3, "observedGeneration": 2});
        assert!(lines(daemon_set_status, fine).is_empty());
        assert_eq!(
            lines(daemon_set_status, json!({"numberMisscheduled": -1, "numberReady": -2, "collisionCount": -1})),
            vec![
                "status.numberMisscheduled: Invalid value: -1: must be greater than or equal to 0",
                "status.numberReady: Invalid value: -2: must be greater than or equal to 0",
                "status.collisionCount: Invalid value: -1: must be greater than or equal to 0",
            ]
        );
    }

    #[test]
    fn stateful_set_counts() {
        let fine = json!({"replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 1,
            "availableReplicas": 2, "observedGeneration": 4, "collisionCount": 0});
        assert!(lines(stateful_set_status, fine).is_empty());
        assert_eq!(
            lines(
                stateful_set_status,
                json!({"replicas": 2, "readyReplicas": 1, "currentReplicas": 3, "availableReplicas": 2,
                    "observedGeneration": -1})
            ),
            vec![
                "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
                "status.currentReplicas: Invalid value: 3: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas",
            ]
        );
    }

    #[test]
    fn collision_count_never_goes_down() {
        let check = |old: Value, new: Value| {
            let mut errs = Errors::default();
            collision_count_update(&mut errs, &json!({"status": old}), &json!({"status": new}));
            errs.finish().iter().map(ToString::to_string).collect::<Vec<_>>()
        };
        assert!(check(json!({}), json!({"collisionCount": 0})).is_empty());
        assert!(check(json!({"collisionCount": 1}), json!({"collisionCount": 2})).is_empty());
        assert_eq!(
            check(json!({"collisionCount": 2}), json!({"collisionCount": 1})),
            vec!["status.collisionCount: Invalid value: 1: cannot be decremented"]
        );
        assert_eq!(
            check(json!({"collisionCount": 2}), json!({})),
            vec!["status.collisionCount: Invalid value: 0: cannot be decremented"]
        );
    }
}
