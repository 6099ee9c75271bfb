//! ReplicaSet status: computed from the claimed pods, compared with the
//! stored status, written only when it differs (upstream
//! `replica_set_utils.go` `calculateStatus` and `updateReplicaSetStatus`),
//! and the requeue that makes `availableReplicas` catch up after
//! `minReadySeconds`.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ReplicaSetCondition, ReplicaSetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kcm_objects::Pod;
use kcm_objects::{ReplicaSet, Template};

use crate::common::pod::{is_pod_available, is_pod_ready, next_availability_check};
use crate::common::replica_set::replicas;
use crate::common::selector::contains_all;

/// Condition type set when creating or deleting pods failed.
pub const REPLICA_FAILURE: &str = "ReplicaFailure";
/// `ReplicaFailure` reason when pods are missing.
pub const FAILED_CREATE: &str = "FailedCreate";
/// `ReplicaFailure` reason when pods are in excess.
pub const FAILED_DELETE: &str = "FailedDelete";

/// The status the ReplicaSet should have, from its active claimed pods
/// (`claimed`), its terminating claimed pods (`terminating`, counted only
/// when `count_terminating`) and the error of this sync's creates or deletes.
///
/// `ReplicaFailure` is added (reason `FailedCreate` when pods are missing,
/// `FailedDelete` when in excess, message = the error) only if absent, and
/// removed when this sync's manage step had no error, including when it was
/// skipped because expectations were pending.
pub fn calculate_status(
    rs: &ReplicaSet,
    claimed: &[&Pod],
    terminating: Option<usize>,
    manage_error: Option<&str>,
    now: Timestamp,
) -> ReplicaSetStatus {
    let template_labels = rs.spec.template.as_ref().map(Template::labels).unwrap_or_default();
    let min_ready = min_ready_seconds(rs);
    let count = |f: &dyn Fn(&Pod) -> bool| to_i32(claimed.iter().filter(|p| f(p)).count());

    let mut status = rs.status.clone().unwrap_or_default();
    status.replicas = to_i32(claimed.len());
    status.fully_labeled_replicas = Some(count(&|p| contains_all(&p.metadata.labels, Some(&template_labels))));
    status.ready_replicas = Some(count(&is_pod_ready));
    status.available_replicas = Some(count(&|p| is_pod_available(p, min_ready, now)));
    status.terminating_replicas = terminating.map(to_i32);
    status.observed_generation = rs.metadata.generation;

    let has_failure = condition(&status, REPLICA_FAILURE).is_some();
    match manage_error {
        Some(message) if !has_failure => {
            let diff = i64::from(status.replicas) - i64::from(replicas(rs));
            let reason = match diff {
                d if d < 0 => FAILED_CREATE,
                d if d > 0 => FAILED_DELETE,
                _ => "",
            };
            status.conditions.get_or_insert_default().push(ReplicaSetCondition {
                type_: Some(REPLICA_FAILURE.to_owned()),
                status: Some("True".to_owned()),
                reason: Some(reason.to_owned()),
                message: Some(message.to_owned()),
                last_transition_time: Some(Time(now)),
            });
        }
        None if has_failure => {
            let conditions = status.conditions.get_or_insert_default();
            conditions.retain(|c| c.type_.as_deref() != Some(REPLICA_FAILURE));
            if conditions.is_empty() {
                status.conditions = None;
            }
        }
        _ => {}
    }
    status
}

/// Whether `new` must be written: a count or the conditions differ, or the
/// generation was not observed yet (upstream `updateReplicaSetStatus`'s
/// early return, unset counts reading as 0 and unset conditions as empty).
pub fn needs_update(rs: &ReplicaSet, new: &ReplicaSetStatus) -> bool {
    let old = rs.status.clone().unwrap_or_default();
    let n = |v: Option<i32>| v.unwrap_or(0);
    let conditions = |s: &ReplicaSetStatus| s.conditions.clone().unwrap_or_default();
    old.replicas != new.replicas
        || n(old.fully_labeled_replicas) != n(new.fully_labeled_replicas)
        || n(old.ready_replicas) != n(new.ready_replicas)
        || n(old.available_replicas) != n(new.available_replicas)
        || old.terminating_replicas != new.terminating_replicas
        || rs.metadata.generation != old.observed_generation
        || conditions(&old) != conditions(new)
}

/// When to look again so `availableReplicas` catches up: with
/// `minReadySeconds > 0` and some Ready pod not yet available, the soonest
/// moment one becomes available, else `minReadySeconds` (upstream main's
/// `FindMinNextPodAvailabilityCheck`).
///
/// Example: `minReadySeconds = 10`, pods Ready since t0 and t0+4, synced at
/// t0+3: requeue after 7 s (t0+10), not 10 s.
pub fn requeue_after(rs: &ReplicaSet, status: &ReplicaSetStatus, claimed: &[&Pod], now: Timestamp) -> Option<Duration> {
    let min_ready = min_ready_seconds(rs);
    if min_ready <= 0 || status.ready_replicas == status.available_replicas {
        return None;
    }
    let soonest = claimed.iter().filter_map(|p| next_availability_check(p, min_ready, now)).min();
    Some(soonest.unwrap_or(Duration::from_secs(u64::try_from(min_ready).unwrap_or(0))))
}

fn min_ready_seconds(rs: &ReplicaSet) -> i32 {
    rs.spec.min_ready_seconds.unwrap_or(0)
}

fn condition<'a>(status: &'a ReplicaSetStatus, type_: &str) -> Option<&'a ReplicaSetCondition> {
    status.conditions.iter().flatten().find(|c| c.type_.as_deref() == Some(type_))
}

fn to_i32(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{PodBuilder, RsBuilder, ts};

    fn status(replicas: i32, labeled: i32, ready: i32, available: i32) -> ReplicaSetStatus {
        ReplicaSetStatus {
            replicas,
            fully_labeled_replicas: Some(labeled),
            ready_replicas: Some(ready),
            available_replicas: Some(available),
            observed_generation: Some(1),
            ..Default::default()
        }
    }

    #[test]
    fn counts_table() {
        let now = ts(1000);
        let ready_old = PodBuilder::new("a").ready_since(ts(900)).build();
        let ready_new = PodBuilder::new("b").ready_since(ts(995)).build();
        let not_ready = PodBuilder::new("c").not_ready().build();
        let extra_labels = PodBuilder::new("d").labels(&[("app", "web"), ("x", "y")]).ready_since(ts(900)).build();
        let partial = PodBuilder::new("e").labels(&[("other", "z")]).build();
        let cases: Vec<(&str, i32, Vec<&Pod>, ReplicaSetStatus)> = vec![
            ("no pods", 0, vec![], status(0, 0, 0, 0)),
            ("ready counts as available without minReadySeconds", 0, vec![&ready_old, &ready_new], status(2, 2, 2, 2)),
            ("minReadySeconds holds back recent pods", 10, vec![&ready_old, &ready_new], status(2, 2, 2, 1)),
            ("not ready", 0, vec![&not_ready], status(1, 1, 0, 0)),
            ("superset of template labels is fully labeled", 0, vec![&extra_labels, &partial], status(2, 1, 1, 1)),
        ];
        for (name, mrs, pods, want) in cases {
            let rs = RsBuilder::new(3).min_ready_seconds(mrs).build();
            assert_eq!(calculate_status(&rs, &pods, None, None, now), want, "{name}");
        }
    }

    #[test]
    fn replica_failure_is_set_once_and_cleared() {
        let rs = RsBuilder::new(3).build();
        let s = calculate_status(&rs, &[], None, Some("quota exceeded"), ts(5));
        let c = condition(&s, REPLICA_FAILURE).unwrap();
        assert_eq!(
            (c.status.as_deref().unwrap_or_default(), c.reason.as_deref(), c.message.as_deref()),
            ("True", Some(FAILED_CREATE), Some("quota exceeded"))
        );
        assert_eq!(c.last_transition_time, Some(Time(ts(5))));

        // A second error keeps the first condition as it is.
        let failing = RsBuilder::new(3).status(s.clone()).build();
        let again = calculate_status(&failing, &[], None, Some("other"), ts(9));
        assert_eq!(again.conditions, s.conditions);

        // Too many pods: FailedDelete.
        let p = [PodBuilder::new("a").build(), PodBuilder::new("b").build()];
        let s = calculate_status(&RsBuilder::new(1).build(), &[&p[0], &p[1]], None, Some("boom"), ts(5));
        assert_eq!(condition(&s, REPLICA_FAILURE).unwrap().reason.as_deref(), Some(FAILED_DELETE));

        // No error: removed.
        let cleared = calculate_status(&failing, &[], None, None, ts(9));
        assert_eq!(cleared.conditions, None);
    }

    #[test]
    fn written_only_when_changed() {
        let rs = RsBuilder::new(1).status(status(1, 1, 1, 1)).build();
        assert!(!needs_update(&rs, &status(1, 1, 1, 1)));
        assert!(needs_update(&rs, &status(1, 1, 1, 0)));
        assert!(needs_update(&rs, &status(2, 1, 1, 1)));
        let bumped = RsBuilder::new(1).generation(2).status(status(1, 1, 1, 1)).build();
        assert!(needs_update(&bumped, &ReplicaSetStatus { observed_generation: Some(2), ..status(1, 1, 1, 1) }));
        let unset =
            RsBuilder::new(0).status(ReplicaSetStatus { observed_generation: Some(1), ..Default::default() }).build();
        assert!(!needs_update(&unset, &status(0, 0, 0, 0)), "unset counts read as 0");
    }

    #[test]
    fn requeue_at_the_soonest_availability() {
        let rs = RsBuilder::new(2).min_ready_seconds(10).build();
        let a = PodBuilder::new("a").ready_since(ts(100)).build();
        let b = PodBuilder::new("b").ready_since(ts(104)).build();
        let pods = [&a, &b];
        let s = calculate_status(&rs, &pods, None, None, ts(103));
        assert_eq!(requeue_after(&rs, &s, &pods, ts(103)), Some(Duration::from_secs(7)));
        // Everything available: no requeue.
        let s = calculate_status(&rs, &pods, None, None, ts(200));
        assert_eq!(requeue_after(&rs, &s, &pods, ts(200)), None);
        // No minReadySeconds: no requeue.
        let plain = RsBuilder::new(2).build();
        let s = calculate_status(&plain, &pods, None, None, ts(103));
        assert_eq!(requeue_after(&plain, &s, &pods, ts(103)), None);
    }
}
