//! Rollout progress (upstream `progress.go` `syncRolloutStatus` and
//! `requeueStuckDeployment`, `sync.go` `checkPausedConditions`, and
//! `deployment_util.go` `DeploymentProgressing`/`DeploymentTimedOut`): the
//! status with the Progressing condition, and its write or the requeue at
//! the deadline.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStatus};
use kcm_objects::Deployment;
use kcm_objects::ReplicaSet;

use super::conditions::{
    NEW_RS_AVAILABLE_REASON, PAUSED_DEPLOY_REASON, PROGRESSING, REPLICA_FAILURE, RESUMED_DEPLOY_REASON,
    RS_UPDATED_REASON, TIMED_OUT_REASON, get_condition, new_condition, remove_condition, set_condition,
};
use super::planner::{Planner, Rs};
use super::progress_deadline;
use super::status::{calculate_status, deployment_complete, n, same_status};

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
        rs.status.as_ref()?.conditions.iter().flatten().find(|c| c.type_.as_deref() == Some(REPLICA_FAILURE)).map(|c| {
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
        Some(rs) => format!("ReplicaSet \"{}\" {what}", rs.metadata.name),
        None => format!("Deployment \"{}\" {what}", d.metadata.name),
    };
    if deadline.is_some() && !complete {
        if deployment_complete(d, &status) {
            let msg = name("has successfully progressed.");
            set_condition(&mut status, new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON, msg, now));
        } else if deployment_progressing(d, &status) {
            let msg = name("is progressing.");
            let mut condition = new_condition(PROGRESSING, "True", RS_UPDATED_REASON, msg, now);
            if let Some(current) = current {
                if current.status.as_deref() == Some("True") {
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
    let paused = d.spec.paused.unwrap_or(false);
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

impl Planner<'_> {
    /// Writes the status with the progress conditions if it changed, else
    /// asks for a requeue at the progress deadline (upstream
    /// `syncRolloutStatus`).
    pub(super) fn sync_rollout_status(&mut self, new: Option<Rs>, old: &[Rs]) {
        let all = self.refs(new, old);
        let (status, requeue) =
            rollout_status(&self.d, &all, new.map(|i| &self.rss[i]), self.options.terminating_replicas, self.now);
        if same_status(&self.d.status.clone().unwrap_or_default(), &status) {
            self.plan.requeue_after = requeue;
        } else {
            self.update_status(status);
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{DeploymentSpec, DeploymentStrategy, ReplicaSetStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    use super::*;
    use crate::deployment::testing::{DeploymentBuilder, NOW, RsB, World, cond, conditions, hashed, rs};
    use crate::deployment::{AVAILABLE, MINIMUM_REPLICAS_AVAILABLE, REVISION_ANNOTATION};
    use crate::plan::Action;

    /// 2017-02-15T18:49:00Z, upstream's `testTime`.
    fn test_time() -> Timestamp {
        "2017-02-15T18:49:00Z".parse().unwrap()
    }

    fn at(secs: i64) -> Timestamp {
        test_time().checked_add(jiff::SignedDuration::from_secs(secs)).unwrap()
    }

    fn progressing(status: &str, reason: &str) -> DeploymentCondition {
        DeploymentCondition {
            type_: Some(PROGRESSING.into()),
            status: Some(status.into()),
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
        Deployment::new(k8s_openapi::api::apps::v1::Deployment {
            metadata: ObjectMeta { name: Some("progress-test".into()), ..Default::default() },
            spec: DeploymentSpec {
                replicas: Some(replicas),
                progress_deadline_seconds: pds,
                strategy: Some(DeploymentStrategy { type_: Some("Recreate".into()), rolling_update: None }),
                ..Default::default()
            },
            status: Some(status(st, conditions)),
        })
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
                    assert_eq!(
                        (c.status.as_deref().unwrap_or_default(), c.reason.as_deref()),
                        (status, Some(reason)),
                        "{name}"
                    );
                    let kept = |t: &Option<Time>| t.as_ref().map(|t| t.0) == Some(test_time());
                    assert_eq!(kept(&c.last_update_time), update_kept, "{name}: lastUpdateTime");
                    assert_eq!(kept(&c.last_transition_time), transition_kept, "{name}: lastTransitionTime");
                }
            }
        }
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

    /// Scenario 29: complete: NewReplicaSetAvailable with the RS's name, no
    /// requeue; a later drop in availability keeps it.
    #[test]
    fn completion_and_its_guard() {
        let new = hashed("v2");
        let rss = || [RsB::new(&new, 10).image("v2").revision("1").sized(10, 13)];
        let w =
            World::new(DeploymentBuilder::new(10).condition(PROGRESSING, "True", RS_UPDATED_REASON, NOW - 10), rss());
        let s = w.last_status().unwrap();
        let p = s.conditions.iter().flatten().find(|c| c.type_.as_deref() == Some(PROGRESSING)).unwrap();
        assert_eq!(p.reason.as_deref(), Some(NEW_RS_AVAILABLE_REASON));
        assert_eq!(p.message.as_deref(), Some(format!("ReplicaSet \"{new}\" has successfully progressed.").as_str()));
        assert_eq!(w.plan().requeue_after, None);

        let complete = DeploymentStatus {
            observed_generation: Some(1),
            replicas: Some(10),
            updated_replicas: Some(10),
            ready_replicas: Some(10),
            available_replicas: Some(10),
            unavailable_replicas: Some(0),
            ..Default::default()
        };
        let w = World::new(
            DeploymentBuilder::new(10)
                .status(complete)
                .condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, NOW - 100)
                .condition(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON, NOW - 100)
                .annotation(REVISION_ANNOTATION, "1"),
            [RsB::new(&new, 10).image("v2").revision("1").sized(10, 13).available(10, 5)],
        );
        let s = w.last_status().unwrap();
        assert!(conditions(&s).contains(&cond(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON)), "{s:?}");
    }

    /// Scenario 5 (deadline): no progress for 600 s: ProgressDeadlineExceeded;
    /// before it, an unchanged status requeues one second after the deadline.
    #[test]
    fn progress_deadline() {
        let new = hashed("v2");
        let stuck = DeploymentStatus {
            observed_generation: Some(1),
            replicas: Some(13),
            updated_replicas: Some(5),
            ready_replicas: Some(8),
            available_replicas: Some(8),
            unavailable_replicas: Some(5),
            ..Default::default()
        };
        let world = |now: i64| {
            World::new(
                DeploymentBuilder::new(10)
                    .status(stuck.clone())
                    .condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, NOW - 1000)
                    .condition(PROGRESSING, "True", RS_UPDATED_REASON, NOW)
                    .annotation(REVISION_ANNOTATION, "2"),
                [
                    RsB::new("old", 8).revision("1").sized(10, 13),
                    RsB::new(&new, 5).image("v2").revision("2").sized(10, 13).created(5).available(5, 0),
                ],
            )
            .at(now)
        };
        let w = world(NOW + 30);
        assert_eq!(w.lines(), Vec::<String>::new());
        assert_eq!(w.plan().requeue_after, Some(std::time::Duration::from_secs(571)));
        let w = world(NOW + 600);
        assert!(w.lines().is_empty(), "not strictly after yet: {:?}", w.lines());
        let w = world(NOW + 601);
        let s = w.last_status().unwrap();
        let p = s.conditions.iter().flatten().find(|c| c.type_.as_deref() == Some(PROGRESSING)).unwrap();
        assert_eq!((p.status.as_deref().unwrap_or_default(), p.reason.as_deref()), ("False", Some(TIMED_OUT_REASON)));
        assert_eq!(p.message.as_deref(), Some(format!("ReplicaSet \"{new}\" has timed out progressing.").as_str()));
    }

    /// Scenario 31: without a deadline there is no Progressing condition, and
    /// pausing writes none.
    #[test]
    fn no_deadline_no_progressing() {
        let w = World::new(
            DeploymentBuilder::new(10).deadline(None).paused(),
            [RsB::new("old", 10).revision("1").sized(10, 13)],
        );
        assert!(w.plan().actions().all(|a| match a {
            Action::UpdateDeploymentStatus { deployment } =>
                !conditions(deployment.status.as_ref().unwrap()).iter().any(|c| c.0 == PROGRESSING),
            _ => true,
        }));
        for pds in [None, Some(i32::MAX)] {
            let w = World::new(
                DeploymentBuilder::new(10).deadline(pds).condition(PROGRESSING, "True", RS_UPDATED_REASON, NOW - 5),
                [RsB::new("old", 10).revision("1").sized(10, 13)],
            );
            let s = w.last_status().unwrap();
            assert!(!conditions(&s).iter().any(|c| c.0 == PROGRESSING), "{pds:?}: {s:?}");
        }
    }

    /// Scenario 32: ReplicaFailure mirrored from the new RS.
    #[test]
    fn replica_failure_is_mirrored() {
        let new = hashed("v2");
        let w = World::new(
            DeploymentBuilder::new(3),
            [RsB::new(&new, 3).image("v2").revision("1").sized(3, 4).available(1, 1).failure("FailedCreate", "quota")],
        );
        let s = w.last_status().unwrap();
        assert!(conditions(&s).contains(&cond(REPLICA_FAILURE, "True", "FailedCreate")), "{s:?}");
    }
}
