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

/// A sum of replica counts that saturates instead of overflowing (absurd
/// but valid counts near `i32::MAX` must not panic the sync).
pub(super) fn total(counts: impl IntoIterator<Item = i32>) -> i32 {
    counts.into_iter().fold(0, i32::saturating_add)
}

/// Σ `status.availableReplicas` (upstream
/// `GetAvailableReplicaCountForReplicaSets`).
pub(super) fn available_count(rss: &[&ReplicaSet]) -> i32 {
    total(rss.iter().map(|rs| status_of(rs).2))
}

/// Σ `status.replicas` (upstream `GetActualReplicaCountForReplicaSets`).
pub(super) fn actual_count(rss: &[&ReplicaSet]) -> i32 {
    total(rss.iter().map(|rs| status_of(rs).0))
}

/// Σ `spec.replicas` (upstream `GetReplicaCountForReplicaSets`).
pub(super) fn spec_count(rss: &[&ReplicaSet]) -> i32 {
    total(rss.iter().map(|rs| rs_replicas(rs)))
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
        ready_replicas: Some(total(all.iter().map(|rs| status_of(rs).1))),
        available_replicas: Some(available),
        unavailable_replicas: Some(spec_count(all).saturating_sub(available).max(0)),
        collision_count: current.collision_count,
        terminating_replicas: if terminating_replicas { terminating_count(all) } else { current.terminating_replicas },
        conditions: current.conditions.clone(),
    };
    let condition = if available >= replicas(d).saturating_sub(max_unavailable(d)) {
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

/// Deep equality of two statuses as the API stores them: the counts,
/// observedGeneration and condition strings are `omitempty`, so an unset
/// value equals 0 (or ""), and no condition list equals an empty one.
/// Without this a status read back from a real API server never equals the
/// computed one when a count is 0, and every sync would write it again.
pub(super) fn same_status(a: &DeploymentStatus, b: &DeploymentStatus) -> bool {
    normalize(a) == normalize(b)
}

fn normalize(s: &DeploymentStatus) -> DeploymentStatus {
    let count = |v: Option<i32>| v.filter(|&n| n != 0);
    let text = |v: &Option<String>| v.clone().filter(|t| !t.is_empty());
    DeploymentStatus {
        observed_generation: s.observed_generation.filter(|&g| g != 0),
        replicas: count(s.replicas),
        updated_replicas: count(s.updated_replicas),
        ready_replicas: count(s.ready_replicas),
        available_replicas: count(s.available_replicas),
        unavailable_replicas: count(s.unavailable_replicas),
        terminating_replicas: s.terminating_replicas,
        collision_count: s.collision_count,
        conditions: s.conditions.as_ref().filter(|c| !c.is_empty()).map(|c| {
            c.iter()
                .map(|c| DeploymentCondition { reason: text(&c.reason), message: text(&c.message), ..c.clone() })
                .collect()
        }),
    }
}

/// When to look at an unchanged, unfinished rollout again: one second after
/// its progress deadline (upstream `requeueStuckDeployment`). Upstream
/// retries with rate limiting when the deadline is less than a second away
/// (or past); kcm-rs waits one second instead, so that a deadline a few
/// milliseconds away is not polled every 5 ms.
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
    let updated = current.last_update_time.as_ref().map_or(Timestamp::UNIX_EPOCH, |t| t.0);
    let at = updated.checked_add(Duration::from_secs(u64::try_from(deadline).unwrap_or(0))).ok()?;
    let after = Duration::try_from(now.duration_until(at)).unwrap_or(Duration::ZERO);
    Some(if after < Duration::from_secs(1) { Duration::from_secs(1) } else { after + Duration::from_secs(1) })
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

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{DeploymentSpec, DeploymentStrategy, ReplicaSetStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;
    use crate::deployment::tests::rs;

    /// 2017-02-15T18:49:00Z, upstream's `testTime`.
    fn test_time() -> Timestamp {
        "2017-02-15T18:49:00Z".parse().unwrap()
    }

    fn at(secs: i64) -> Timestamp {
        test_time().checked_add(jiff::SignedDuration::from_secs(secs)).unwrap()
    }

    fn progressing(status: &str, reason: &str) -> DeploymentCondition {
        DeploymentCondition {
            type_: PROGRESSING.into(),
            status: status.into(),
            reason: Some(reason.into()),
            message: None,
            last_update_time: Some(Time(test_time())),
            last_transition_time: Some(Time(test_time())),
        }
    }

    /// Upstream `currentDeployment`: Recreate, observed.
    fn current(
        pds: Option<i32>,
        replicas: i32,
        st: (i32, i32, i32),
        conditions: Vec<DeploymentCondition>,
    ) -> Deployment {
        Deployment {
            metadata: ObjectMeta { name: Some("progress-test".into()), ..Default::default() },
            spec: Some(DeploymentSpec {
                replicas: Some(replicas),
                progress_deadline_seconds: pds,
                strategy: Some(DeploymentStrategy { type_: Some("Recreate".into()), rolling_update: None }),
                ..Default::default()
            }),
            status: Some(status(st, conditions)),
        }
    }

    fn status(
        (replicas, updated, available): (i32, i32, i32),
        conditions: Vec<DeploymentCondition>,
    ) -> DeploymentStatus {
        DeploymentStatus {
            replicas: Some(replicas),
            updated_replicas: Some(updated),
            available_replicas: Some(available),
            conditions: (!conditions.is_empty()).then_some(conditions),
            ..Default::default()
        }
    }

    /// Upstream `newRSWithAvailable`.
    fn rs_with(name: &str, spec: i32, replicas: i32, available: i32) -> ReplicaSet {
        let mut r = rs(name, spec);
        r.status = Some(ReplicaSetStatus { replicas, available_replicas: Some(available), ..Default::default() });
        r
    }

    /// Upstream `TestRequeueStuckDeployment` (pds 60, Progressing last
    /// updated at 18:49:00); upstream's "rate limited" answers become 1 s.
    #[test]
    fn requeue_stuck_table() {
        let stuck = || vec![DeploymentCondition { message: None, ..progressing("True", "") }];
        let failed = || vec![progressing("False", TIMED_OUT_REASON)];
        let secs = |s: u64| Some(Duration::from_secs(s));
        type Case = (&'static str, Deployment, (i32, i32, i32), Timestamp, Option<Duration>);
        let cases: Vec<Case> = vec![
            ("nil deadline", current(None, 4, (3, 3, 2), vec![]), (3, 3, 2), at(0), None),
            ("infinite deadline", current(Some(i32::MAX), 4, (3, 3, 2), vec![]), (3, 3, 2), at(0), None),
            ("no progressing condition", current(Some(60), 4, (3, 3, 2), vec![]), (3, 3, 2), at(0), None),
            ("complete", current(Some(60), 3, (3, 3, 3), stuck()), (3, 3, 3), at(0), None),
            ("already failed", current(Some(60), 3, (3, 3, 0), failed()), (3, 3, 0), at(0), None),
            ("stuck - 30s", current(Some(60), 3, (3, 3, 1), stuck()), (3, 3, 1), at(30), secs(31)),
            ("stuck - 1s", current(Some(60), 3, (3, 3, 1), stuck()), (3, 3, 1), at(59), secs(2)),
            (
                "less than a second",
                current(Some(60), 3, (3, 3, 1), stuck()),
                (3, 3, 1),
                at(59).checked_add(jiff::SignedDuration::from_nanos(1)).unwrap(),
                secs(1),
            ),
            ("now", current(Some(60), 3, (3, 3, 1), stuck()), (3, 3, 1), at(60), secs(1)),
            ("after the deadline", current(Some(60), 3, (3, 3, 1), stuck()), (3, 3, 1), at(120), secs(1)),
        ];
        for (name, d, st, now, want) in cases {
            let mut d = d;
            d.status.get_or_insert_default().observed_generation = Some(0);
            let mut new = status(st, vec![]);
            new.observed_generation = Some(0);
            assert_eq!(requeue_stuck(&d, &new, now), want, "{name}");
        }
    }

    /// Upstream `TestSyncRolloutStatus` (pds 60, now two minutes after
    /// upstream's `testTime`): (condition status, reason, lastUpdate kept,
    /// lastTransition kept).
    #[test]
    fn rollout_status_table() {
        type Case = (
            &'static str,
            Deployment,
            Vec<ReplicaSet>,
            Option<ReplicaSet>,
            Option<(&'static str, &'static str)>,
            bool,
            bool,
        );
        let updated = || progressing("True", RS_UPDATED_REASON);
        let available = || progressing("True", NEW_RS_AVAILABLE_REASON);
        let timed_out = || progressing("False", TIMED_OUT_REASON);
        let cases: Vec<Case> = vec![
            (
                "no deadline: removed",
                current(None, 3, (2, 2, 2), vec![updated()]),
                vec![rs_with("bar", 0, 1, 1)],
                Some(rs_with("foo", 3, 2, 2)),
                None,
                false,
                false,
            ),
            (
                "one active RS, complete",
                current(Some(60), 3, (3, 3, 3), vec![available()]),
                vec![rs_with("bar", 3, 3, 3)],
                None,
                Some(("True", NEW_RS_AVAILABLE_REASON)),
                true,
                true,
            ),
            (
                "progressing keeps transition",
                current(Some(60), 3, (2, 2, 2), vec![updated()]),
                vec![rs_with("bar", 0, 1, 1)],
                Some(rs_with("foo", 3, 2, 2)),
                Some(("True", RS_UPDATED_REASON)),
                false,
                true,
            ),
            (
                "progressing after False",
                current(Some(60), 3, (2, 2, 2), vec![timed_out()]),
                vec![rs_with("bar", 0, 1, 1)],
                Some(rs_with("foo", 3, 2, 2)),
                Some(("True", RS_UPDATED_REASON)),
                false,
                false,
            ),
            (
                "progressing created",
                current(Some(60), 3, (2, 2, 2), vec![]),
                vec![rs_with("bar", 0, 1, 1)],
                Some(rs_with("foo", 3, 2, 2)),
                Some(("True", RS_UPDATED_REASON)),
                false,
                false,
            ),
            (
                "complete keeps transition",
                current(Some(60), 3, (3, 3, 3), vec![updated()]),
                vec![],
                Some(rs_with("foo", 3, 3, 3)),
                Some(("True", NEW_RS_AVAILABLE_REASON)),
                false,
                true,
            ),
            (
                "complete after False",
                current(Some(60), 3, (3, 3, 3), vec![timed_out()]),
                vec![],
                Some(rs_with("foo", 3, 3, 3)),
                Some(("True", NEW_RS_AVAILABLE_REASON)),
                false,
                false,
            ),
            (
                "complete created",
                current(Some(60), 3, (3, 3, 3), vec![]),
                vec![],
                Some(rs_with("foo", 3, 3, 3)),
                Some(("True", NEW_RS_AVAILABLE_REASON)),
                false,
                false,
            ),
            (
                "complete without new RS",
                current(Some(60), 0, (3, 3, 3), vec![updated()]),
                vec![rs_with("foo", 0, 0, 0)],
                None,
                Some(("True", NEW_RS_AVAILABLE_REASON)),
                false,
                true,
            ),
            (
                "timed out",
                current(Some(60), 3, (2, 2, 2), vec![updated()]),
                vec![],
                Some(rs_with("foo", 3, 2, 2)),
                Some(("False", TIMED_OUT_REASON)),
                false,
                false,
            ),
            (
                "already timed out",
                current(Some(60), 3, (2, 2, 2), vec![timed_out()]),
                vec![],
                Some(rs_with("foo", 3, 2, 2)),
                Some(("False", TIMED_OUT_REASON)),
                true,
                true,
            ),
        ];
        for (name, d, mut all, new, want, update_kept, transition_kept) in cases {
            all.extend(new.clone());
            let refs: Vec<&ReplicaSet> = all.iter().collect();
            let (st, _) = rollout_status(&d, &refs, new.as_ref(), false, at(120));
            let cond = get_condition(&st, PROGRESSING);
            match want {
                None => assert!(cond.is_none(), "{name}: {cond:?}"),
                Some((status, reason)) => {
                    let c = cond.unwrap_or_else(|| panic!("{name}: no condition"));
                    assert_eq!((c.status.as_str(), c.reason.as_deref()), (status, Some(reason)), "{name}");
                    let kept = |t: &Option<Time>| t.as_ref().map(|t| t.0) == Some(test_time());
                    assert_eq!(kept(&c.last_update_time), update_kept, "{name}: lastUpdateTime");
                    assert_eq!(kept(&c.last_transition_time), transition_kept, "{name}: lastTransitionTime");
                }
            }
        }
    }

    /// A status read back from the API (zeros and empty strings omitted)
    /// equals the computed one: no write at a steady state with zero
    /// counts.
    #[test]
    fn omitted_zeros_are_equal() {
        let computed = DeploymentStatus {
            observed_generation: Some(1),
            replicas: Some(0),
            updated_replicas: Some(0),
            ready_replicas: Some(0),
            available_replicas: Some(0),
            unavailable_replicas: Some(0),
            conditions: Some(vec![DeploymentCondition { message: Some(String::new()), ..progressing("True", "") }]),
            ..Default::default()
        };
        let stored = DeploymentStatus {
            observed_generation: Some(1),
            conditions: Some(vec![DeploymentCondition { message: None, reason: None, ..progressing("True", "") }]),
            ..Default::default()
        };
        assert!(same_status(&computed, &stored));
        assert!(!same_status(&computed, &DeploymentStatus { replicas: Some(1), ..stored.clone() }));
        assert!(!same_status(&computed, &DeploymentStatus { collision_count: Some(0), ..stored }));
    }

    /// Upstream `TestDeploymentComplete`, `TestDeploymentProgressing` and
    /// `TestDeploymentTimedOut` in brief.
    #[test]
    fn complete_progressing_timed_out() {
        let d = |replicas, st| current(Some(60), replicas, st, vec![]);
        let mut s = status((5, 5, 5), vec![]);
        assert!(deployment_complete(&d(5, (0, 0, 0)), &s));
        s.available_replicas = Some(4);
        assert!(!deployment_complete(&d(5, (0, 0, 0)), &s), "not all available");
        let mut d2 = d(5, (0, 0, 0));
        d2.metadata.generation = Some(2);
        assert!(!deployment_complete(&d2, &status((5, 5, 5), vec![])), "generation not observed");

        let old = d(10, (10, 0, 10));
        assert!(deployment_progressing(&old, &status((10, 1, 10), vec![])), "more updated");
        assert!(deployment_progressing(&old, &status((9, 0, 9), vec![])), "fewer old");
        assert!(!deployment_progressing(&old, &status((10, 0, 10), vec![])), "no change");
        assert!(deployment_progressing(&old, &status((10, 0, 11), vec![])), "more available");

        let with = |c: DeploymentCondition| status((1, 1, 1), vec![c]);
        let d60 = d(1, (1, 1, 1));
        assert!(
            !deployment_timed_out(&d60, &with(progressing("True", RS_UPDATED_REASON)), at(60)),
            "exactly at the deadline"
        );
        assert!(deployment_timed_out(&d60, &with(progressing("True", RS_UPDATED_REASON)), at(61)));
        assert!(!deployment_timed_out(&d60, &with(progressing("True", NEW_RS_AVAILABLE_REASON)), at(600)));
        assert!(deployment_timed_out(&d60, &with(progressing("False", TIMED_OUT_REASON)), at(0)));
        assert!(!deployment_timed_out(&current(None, 1, (1, 1, 1), vec![]), &with(progressing("True", "")), at(600)));
    }
}
