//! Deployment conditions (upstream `deployment_util.go`: `NewDeploymentCondition`,
//! `SetDeploymentCondition`, ...), and their types and reasons:
//!
//! - `Available`: True `MinimumReplicasAvailable` while at least
//!   `replicas − maxUnavailable` pods are available, else False
//!   `MinimumReplicasUnavailable` (set by `status`).
//! - `Progressing` (only with a progress deadline): `NewReplicaSetCreated`,
//!   `FoundNewReplicaSet`, `ReplicaSetUpdated` (refreshed on every sign of
//!   progress), `NewReplicaSetAvailable` (complete), `ProgressDeadlineExceeded`
//!   (no progress for `progressDeadlineSeconds`), `DeploymentPaused`,
//!   `DeploymentResumed`, `ReplicaSetCreateError` (set by `progress` and
//!   `sync`).
//! - `ReplicaFailure`: copied from the new ReplicaSet (or any ReplicaSet).

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// Condition type: enough pods are available.
pub const AVAILABLE: &str = "Available";
/// Condition type: the rollout is moving (or finished, or stuck).
pub const PROGRESSING: &str = "Progressing";
/// Condition type: a ReplicaSet cannot create or delete pods.
pub const REPLICA_FAILURE: &str = "ReplicaFailure";

/// Available=True reason.
pub const MINIMUM_REPLICAS_AVAILABLE: &str = "MinimumReplicasAvailable";
/// Available=False reason.
pub const MINIMUM_REPLICAS_UNAVAILABLE: &str = "MinimumReplicasUnavailable";
/// Progressing reason: the new ReplicaSet was created.
pub const NEW_RS_REASON: &str = "NewReplicaSetCreated";
/// Progressing reason: an existing ReplicaSet is the new one.
pub const FOUND_NEW_RS_REASON: &str = "FoundNewReplicaSet";
/// Progressing reason: the rollout moved.
pub const RS_UPDATED_REASON: &str = "ReplicaSetUpdated";
/// Progressing reason: the rollout is complete.
pub const NEW_RS_AVAILABLE_REASON: &str = "NewReplicaSetAvailable";
/// Progressing reason: no progress within the deadline.
pub const TIMED_OUT_REASON: &str = "ProgressDeadlineExceeded";
/// Progressing reason: the Deployment is paused.
pub const PAUSED_DEPLOY_REASON: &str = "DeploymentPaused";
/// Progressing reason: the Deployment was resumed.
pub const RESUMED_DEPLOY_REASON: &str = "DeploymentResumed";
/// Progressing reason (and event reason): the new ReplicaSet could not be
/// created.
pub const RS_CREATE_ERROR_REASON: &str = "ReplicaSetCreateError";

/// A condition as upstream's `NewDeploymentCondition` makes it: both times
/// `now`, to the second (what the API keeps).
pub(super) fn new_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    now: Timestamp,
) -> DeploymentCondition {
    let now = Time(Timestamp::from_second(now.as_second()).unwrap_or(now));
    DeploymentCondition {
        type_: Some(type_.to_owned()),
        status: Some(status.to_owned()),
        reason: Some(reason.to_owned()),
        message: Some(message),
        last_update_time: Some(now.clone()),
        last_transition_time: Some(now),
    }
}

/// The condition of `type_`, if present.
pub(super) fn get_condition<'a>(status: &'a DeploymentStatus, type_: &str) -> Option<&'a DeploymentCondition> {
    status.conditions.iter().flatten().find(|c| c.type_.as_deref() == Some(type_))
}

/// Sets `condition` (upstream `SetDeploymentCondition`): nothing if the
/// status and reason are unchanged; the transition time is kept if only
/// the reason changed; the condition moves to the end.
pub(super) fn set_condition(status: &mut DeploymentStatus, mut condition: DeploymentCondition) {
    if let Some(current) = get_condition(status, condition.type_.as_deref().unwrap_or_default()) {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition.last_transition_time = current.last_transition_time.clone();
        }
    }
    remove_condition(status, condition.type_.as_deref().unwrap_or_default());
    status.conditions.get_or_insert_default().push(condition);
}

/// Removes the condition of `type_` (upstream `RemoveDeploymentCondition`).
pub(super) fn remove_condition(status: &mut DeploymentStatus, type_: &str) {
    if let Some(conditions) = status.conditions.as_mut() {
        conditions.retain(|c| c.type_.as_deref() != Some(type_));
    }
}
