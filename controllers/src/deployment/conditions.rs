//! The Deployment's status and conditions (upstream `sync.go`
//! `calculateStatus`, `progress.go`, and the condition helpers of
//! `deployment_util.go`).
//!
//! - `Available`: True `MinimumReplicasAvailable` while at least
//!   `replicas − maxUnavailable` pods are available, else False
//!   `MinimumReplicasUnavailable`.
//! - `Progressing` (only with a progress deadline): `NewReplicaSetCreated`,
//!   `FoundNewReplicaSet`, `ReplicaSetUpdated` (refreshed on every sign of
//!   progress), `NewReplicaSetAvailable` (complete), `ProgressDeadlineExceeded`
//!   (no progress for `progressDeadlineSeconds`), `DeploymentPaused`,
//!   `DeploymentResumed`, `ReplicaSetCreateError`.
//! - `ReplicaFailure`: copied from the new ReplicaSet (or any ReplicaSet).

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::{max_unavailable, progress_deadline, replicas};
use crate::replicaset::replicas as rs_replicas;

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
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message),
        last_update_time: Some(now.clone()),
        last_transition_time: Some(now),
    }
}

/// The condition of `type_`, if present.
pub(super) fn get_condition<'a>(status: &'a DeploymentStatus, type_: &str) -> Option<&'a DeploymentCondition> {
    status.conditions.iter().flatten().find(|c| c.type_ == type_)
}

/// Sets `condition` (upstream `SetDeploymentCondition`): nothing if the
/// status and reason are unchanged; the transition time is kept if only
/// the reason changed; the condition moves to the end.
pub(super) fn set_condition(status: &mut DeploymentStatus, mut condition: DeploymentCondition) {
    if let Some(current) = get_condition(status, &condition.type_) {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition.last_transition_time = current.last_transition_time.clone();
        }
    }
    remove_condition(status, &condition.type_);
    status.conditions.get_or_insert_default().push(condition);
}

/// Removes the condition of `type_` (upstream `RemoveDeploymentCondition`).
pub(super) fn remove_condition(status: &mut DeploymentStatus, type_: &str) {
    if let Some(conditions) = status.conditions.as_mut() {
        conditions.retain(|c| c.type_ != type_);
    }
}

fn status_of(rs: &ReplicaSet) -> (i32, i32, i32) {
    let s = rs.status.as_ref();
    (
        s.map_or(0, |s| s.replicas),
        s.and_then(|s| s.ready_replicas).unwrap_or(0),
        s.and_then(|s| s.available_replicas).unwrap_or(0),
    )
}

/// Σ `status.availableReplicas` (upstream
/// `GetAvailableReplicaCountForReplicaSets`).
pub(super) fn available_count(rss: &[&ReplicaSet]) -> i32 {
    rss.iter().map(|rs| status_of(rs).2).sum()
}

/// Σ `status.replicas` (upstream `GetActualReplicaCountForReplicaSets`).
pub(super) fn actual_count(rss: &[&ReplicaSet]) -> i32 {
    rss.iter().map(|rs| status_of(rs).0).sum()
}

/// Σ `spec.replicas` (upstream `GetReplicaCountForReplicaSets`).
pub(super) fn spec_count(rss: &[&ReplicaSet]) -> i32 {
    rss.iter().map(|rs| rs_replicas(rs)).sum()
}

/// Σ `status.terminatingReplicas`, or `None` when an observed ReplicaSet
/// does not report it (upstream `GetTerminatingReplicaCountForReplicaSets`).
fn terminating_count(rss: &[&ReplicaSet]) -> Option<i32> {
    let mut total = 0;
    for rs in rss {
        let status = rs.status.as_ref();
        match status.and_then(|s| s.terminating_replicas) {
            Some(n) => total += n,
            None if status.and_then(|s| s.observed_generation).unwrap_or(0) == 0 => {}
            None => return None,
        }
    }
    Some(total)
}

/// The status the ReplicaSets imply (upstream `calculateStatus`), with the
/// Available condition; other conditions are carried over.
///
/// Example (scenario 33): new spec 5 (status 3, 3 available), old spec 8
/// (8/8): replicas 11, updated 3, available 11, unavailable 13 − 11 = 2.
pub(super) fn calculate_status(
    d: &Deployment,
    all: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    terminating_replicas: bool,
    now: Timestamp,
) -> DeploymentStatus {
    let current = d.status.clone().unwrap_or_default();
    let available = available_count(all);
    let mut status = DeploymentStatus {
        observed_generation: d.metadata.generation,
        replicas: Some(actual_count(all)),
        updated_replicas: Some(new_rs.map_or(0, |rs| status_of(rs).0)),
        ready_replicas: Some(all.iter().map(|rs| status_of(rs).1).sum()),
        available_replicas: Some(available),
        unavailable_replicas: Some((spec_count(all) - available).max(0)),
        collision_count: current.collision_count,
        terminating_replicas: if terminating_replicas { terminating_count(all) } else { current.terminating_replicas },
        conditions: current.conditions.clone(),
    };
    let condition = if available >= replicas(d) - max_unavailable(d) {
        new_condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, "Deployment has minimum availability.".into(), now)
    } else {
        new_condition(
            AVAILABLE,
            "False",
            MINIMUM_REPLICAS_UNAVAILABLE,
            "Deployment does not have minimum availability.".into(),
            now,
        )
    };
    set_condition(&mut status, condition);
    status
}

fn n(v: Option<i32>) -> i32 {
    v.unwrap_or(0)
}

/// Every pod is updated and available and the generation is observed
/// (upstream `DeploymentComplete`).
pub(super) fn deployment_complete(d: &Deployment, status: &DeploymentStatus) -> bool {
    let want = replicas(d);
    n(status.updated_replicas) == want
        && n(status.replicas) == want
        && n(status.available_replicas) == want
        && status.observed_generation.unwrap_or(0) >= d.metadata.generation.unwrap_or(0)
}

/// Whether `new` shows progress over the stored status (upstream
/// `DeploymentProgressing`): more updated, fewer old, more ready or more
/// available pods.
fn deployment_progressing(d: &Deployment, new: &DeploymentStatus) -> bool {
    let old = d.status.clone().unwrap_or_default();
    let old_old = n(old.replicas) - n(old.updated_replicas);
    let new_old = n(new.replicas) - n(new.updated_replicas);
    n(new.updated_replicas) > n(old.updated_replicas)
        || new_old < old_old
        || n(new.ready_replicas) > n(old.ready_replicas)
        || n(new.available_replicas) > n(old.available_replicas)
}

/// Whether the Progressing condition of `status` is older than the
/// deadline (upstream `DeploymentTimedOut`, strictly after).
fn deployment_timed_out(d: &Deployment, status: &DeploymentStatus, now: Timestamp) -> bool {
    let Some(deadline) = progress_deadline(d) else { return false };
    let Some(condition) = get_condition(status, PROGRESSING) else { return false };
    match condition.reason.as_deref() {
        Some(NEW_RS_AVAILABLE_REASON) => false,
        Some(TIMED_OUT_REASON) => true,
        _ => condition
            .last_update_time
            .as_ref()
            .and_then(|t| t.0.checked_add(Duration::from_secs(u64::try_from(deadline).unwrap_or(0))).ok())
            .is_some_and(|at| at < now),
    }
}

/// The ReplicaFailure conditions to mirror: the new ReplicaSet's, else any
/// ReplicaSet's (upstream `getReplicaFailures`).
fn replica_failure(all: &[&ReplicaSet], new_rs: Option<&ReplicaSet>) -> Option<DeploymentCondition> {
    let failure = |rs: &ReplicaSet| {
        rs.status.as_ref()?.conditions.iter().flatten().find(|c| c.type_ == REPLICA_FAILURE).map(|c| {
            DeploymentCondition {
                type_: c.type_.clone(),
                status: c.status.clone(),
                reason: c.reason.clone(),
                message: c.message.clone(),
                last_update_time: c.last_transition_time.clone(),
                last_transition_time: c.last_transition_time.clone(),
            }
        })
    };
    new_rs.and_then(failure).or_else(|| all.iter().find_map(|rs| failure(rs)))
}

/// The status after a rollout step (upstream `syncRolloutStatus`), and
/// when to look again if it is unchanged and the rollout may get stuck.
pub(super) fn rollout_status(
    d: &Deployment,
    all: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    terminating_replicas: bool,
    now: Timestamp,
) -> (DeploymentStatus, Option<Duration>) {
    let mut status = calculate_status(d, all, new_rs, terminating_replicas, now);
    let stored = d.status.clone().unwrap_or_default();
    let current = get_condition(&stored, PROGRESSING);
    let deadline = progress_deadline(d);
    if deadline.is_none() {
        remove_condition(&mut status, PROGRESSING);
    }
    let complete = n(status.replicas) == n(status.updated_replicas)
        && current.is_some_and(|c| c.reason.as_deref() == Some(NEW_RS_AVAILABLE_REASON));
    let name = |what: &str| match new_rs {
        Some(rs) => format!("ReplicaSet \"{}\" {what}", rs.metadata.name.as_deref().unwrap_or("")),
        None => format!("Deployment \"{}\" {what}", d.metadata.name.as_deref().unwrap_or("")),
    };
    if deadline.is_some() && !complete {
        if deployment_complete(d, &status) {
            let msg = name("has successfully progressed.");
            set_condition(&mut status, new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON, msg, now));
        } else if deployment_progressing(d, &status) {
            let msg = name("is progressing.");
            let mut condition = new_condition(PROGRESSING, "True", RS_UPDATED_REASON, msg, now);
            if let Some(current) = current {
                if current.status == "True" {
                    condition.last_transition_time = current.last_transition_time.clone();
                }
                remove_condition(&mut status, PROGRESSING);
            }
            set_condition(&mut status, condition);
        } else if deployment_timed_out(d, &status, now) {
            let msg = name("has timed out progressing.");
            set_condition(&mut status, new_condition(PROGRESSING, "False", TIMED_OUT_REASON, msg, now));
        }
    }
    match replica_failure(all, new_rs) {
        Some(failure) => set_condition(&mut status, failure),
        None => remove_condition(&mut status, REPLICA_FAILURE),
    }
    let requeue = if same_status(&stored, &status) { requeue_stuck(d, &status, now) } else { None };
    (status, requeue)
}

/// Deep equality of two statuses, an empty condition list equal to none.
pub(super) fn same_status(a: &DeploymentStatus, b: &DeploymentStatus) -> bool {
    let norm = |s: &DeploymentStatus| {
        let mut s = s.clone();
        if s.conditions.as_ref().is_some_and(Vec::is_empty) {
            s.conditions = None;
        }
        s
    };
    norm(a) == norm(b)
}

/// When the progress deadline of an unchanged, unfinished rollout passes
/// (upstream `requeueStuckDeployment`): one second after it.
///
/// Example: Progressing last updated at t0 with a 600 s deadline, synced at
/// t0 + 30 s: look again after 571 s.
fn requeue_stuck(d: &Deployment, status: &DeploymentStatus, now: Timestamp) -> Option<Duration> {
    let deadline = progress_deadline(d)?;
    let stored = d.status.clone().unwrap_or_default();
    let current = get_condition(&stored, PROGRESSING)?;
    if deployment_complete(d, status) || current.reason.as_deref() == Some(TIMED_OUT_REASON) {
        return None;
    }
    let updated = current.last_update_time.as_ref()?.0;
    let at = updated.checked_add(Duration::from_secs(u64::try_from(deadline).unwrap_or(0))).ok()?;
    let after = Duration::try_from(now.duration_until(at)).unwrap_or(Duration::ZERO);
    Some(after + Duration::from_secs(1))
}

/// The Progressing condition for a pause or resume (upstream
/// `checkPausedConditions`), if it changes: Unknown `DeploymentPaused` when
/// paused, Unknown `DeploymentResumed` when resumed; never over
/// `ProgressDeadlineExceeded`.
pub(super) fn paused_condition(d: &Deployment, now: Timestamp) -> Option<DeploymentStatus> {
    progress_deadline(d)?;
    let mut status = d.status.clone().unwrap_or_default();
    let current = get_condition(&status, PROGRESSING);
    let reason = current.and_then(|c| c.reason.as_deref());
    if reason == Some(TIMED_OUT_REASON) {
        return None;
    }
    let paused_exists = reason == Some(PAUSED_DEPLOY_REASON);
    let paused = d.spec.as_ref().and_then(|s| s.paused).unwrap_or(false);
    let condition = if paused && !paused_exists {
        new_condition(PROGRESSING, "Unknown", PAUSED_DEPLOY_REASON, "Deployment is paused".into(), now)
    } else if !paused && paused_exists {
        new_condition(PROGRESSING, "Unknown", RESUMED_DEPLOY_REASON, "Deployment is resumed".into(), now)
    } else {
        return None;
    };
    set_condition(&mut status, condition);
    Some(status)
}
