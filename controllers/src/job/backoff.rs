//! How long a Job waits before replacing failed pods (upstream
//! `backoff_utils.go`).
//!
//! The delay doubles with each failure since the Job's last success,
//! from [`DEFAULT_JOB_POD_FAILURE_BACK_OFF`] (10 s) up to
//! [`MAX_JOB_POD_FAILURE_BACK_OFF`] (10 min), and counts from the last
//! failure: three failures, the last at 12:00:00, hold new pods back until
//! 12:00:40 (10 s, 20 s, 40 s). A success resets the count: only failures
//! that finished after the newest success still count.
//!
//! A Job without `backoffLimitPerIndex` keeps one [`BackoffRecord`] in the
//! controller's memory, updated each sync from the pods that finished since
//! ([`BackoffStore`]). With `backoffLimitPerIndex` each index has its own
//! delay, read from its last failed pod: the failures it carries in its
//! `batch.kubernetes.io/job-index-failure-count` and
//! `...-ignored-failure-count` annotations, plus itself
//! (`indexed::remaining_time_per_index`).
//!
//! When a pod finished is [`finished_time`]: its containers' latest
//! `finishedAt` (sidecars included), else when its Ready condition turned
//! False, else its deletion time less its grace period, else its creation.

use std::collections::HashMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kcm_objects::{ContainerStatus, Pod};

use crate::common::pod::sidecar_names;

/// The delay after the first failure (upstream
/// `DefaultJobPodFailureBackOff`).
pub const DEFAULT_JOB_POD_FAILURE_BACK_OFF: Duration = Duration::from_secs(10);

/// The longest delay (upstream `MaxJobPodFailureBackOff`; the Job
/// documentation's "six minutes" predates it).
pub const MAX_JOB_POD_FAILURE_BACK_OFF: Duration = Duration::from_secs(10 * 60);

/// A Job's failures since its last success (upstream `backoffRecord`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackoffRecord {
    /// Pods failed since the last succeeded one.
    pub failures_after_last_success: i32,
    /// When the newest of those failures happened.
    pub last_failure_time: Option<Timestamp>,
}

/// The Jobs' backoff records, by Job key (`namespace/name`); the
/// controller's own memory, lost on restart as upstream's is.
#[derive(Debug, Default)]
pub struct BackoffStore {
    records: HashMap<String, BackoffRecord>,
}

impl BackoffStore {
    /// The Job's record once the pods finished since the last sync are
    /// counted (upstream `newBackoffRecord`); the store is unchanged until
    /// [`update`](Self::update), after the Job's status is written.
    pub fn new_record(&self, key: &str, new_succeeded: &[&Pod], new_failed: &[&Pod]) -> BackoffRecord {
        let old = self.records.get(key).cloned().unwrap_or_default();
        old.with_finished(new_succeeded, new_failed)
    }

    /// Keeps `record` as the Job's.
    pub fn update(&mut self, key: &str, record: BackoffRecord) {
        self.records.insert(key.to_owned(), record);
    }

    /// Forgets the Job (finished or deleted).
    pub fn remove(&mut self, key: &str) {
        self.records.remove(key);
    }

    /// The Job's record, if it has one.
    pub fn get(&self, key: &str) -> Option<&BackoffRecord> {
        self.records.get(key)
    }
}

impl BackoffRecord {
    /// This record with newly finished pods counted: without a new success
    /// the failures add up; with one, only the failures after the newest
    /// success count.
    pub fn with_finished(&self, new_succeeded: &[&Pod], new_failed: &[&Pod]) -> BackoffRecord {
        let mut failed: Vec<Timestamp> = new_failed.iter().map(|p| finished_time(p)).collect();
        failed.sort();
        let Some(&newest_failure) = failed.last() else {
            return if new_succeeded.is_empty() { self.clone() } else { BackoffRecord::default() };
        };
        let Some(last_success) = new_succeeded.iter().map(|p| finished_time(p)).max() else {
            let added = i32::try_from(failed.len()).unwrap_or(i32::MAX);
            return BackoffRecord {
                failures_after_last_success: self.failures_after_last_success.saturating_add(added),
                last_failure_time: Some(newest_failure),
            };
        };
        let after = failed.iter().filter(|&&t| t > last_success).count();
        BackoffRecord {
            failures_after_last_success: i32::try_from(after).unwrap_or(i32::MAX),
            last_failure_time: (after > 0).then_some(newest_failure),
        }
    }

    /// How long new pods still wait at `now` (upstream `getRemainingTime`).
    pub fn remaining_time(&self, now: Timestamp, default_backoff: Duration, max_backoff: Duration) -> Duration {
        remaining_time_for_failures(
            now,
            default_backoff,
            max_backoff,
            self.failures_after_last_success,
            self.last_failure_time,
        )
    }
}

/// The delay after `failures` failures, the last at `last_failure`, less
/// what has passed of it by `now` (upstream
/// `getRemainingTimeForFailuresCount`).
pub fn remaining_time_for_failures(
    now: Timestamp,
    default_backoff: Duration,
    max_backoff: Duration,
    failures: i32,
    last_failure: Option<Timestamp>,
) -> Duration {
    let Some(last_failure) = last_failure.filter(|_| failures > 0) else { return Duration::ZERO };
    let mut backoff = default_backoff;
    for _ in 1..failures {
        backoff = backoff.saturating_mul(2);
        if backoff >= max_backoff {
            backoff = max_backoff;
            break;
        }
    }
    let elapsed = last_failure.duration_until(now);
    let backoff = SignedDuration::try_from(backoff).unwrap_or(SignedDuration::MAX);
    if backoff < elapsed { Duration::ZERO } else { Duration::try_from(backoff - elapsed).unwrap_or(Duration::MAX) }
}

/// When `pod` finished (upstream `getFinishedTime`), by the first of:
/// 1. every container terminated with a `finishedAt` (sidecars, which stop
///    after the main containers, included): the latest;
/// 2. the Ready condition False: when it turned so (the kubelet sets it on
///    a pod reaching a terminal phase);
/// 3. the pod being deleted: `deletionTimestamp` less the grace period (an
///    orphan the pod garbage collector removed);
/// 4. its creation.
pub fn finished_time(pod: &Pod) -> Timestamp {
    finish_time_from_containers(pod)
        .or_else(|| pod.condition("Ready").filter(|c| c.status() == "False").and_then(|c| c.last_transition_time()))
        .or_else(|| {
            let deleted = pod.metadata.deletion_timestamp()?;
            let grace = pod.metadata.deletion_grace_period_seconds().unwrap_or(0);
            deleted.checked_sub(SignedDuration::from_secs(grace)).ok()
        })
        .or(pod.metadata.creation_timestamp())
        .unwrap_or(Timestamp::UNIX_EPOCH)
}

/// The latest `finishedAt` of the containers, then of the sidecars: as
/// upstream's, a container not finished voids what came before it, so a
/// pod with none finished has none.
fn finish_time_from_containers(pod: &Pod) -> Option<Timestamp> {
    let sidecars = sidecar_names(pod);
    let regular = latest_finish(None, pod.status.container_statuses.iter());
    let sidecar_statuses =
        pod.status.rare().init_container_statuses.iter().filter(|s| sidecars.contains(&s.name.as_str()));
    latest_finish(regular, sidecar_statuses)
}

/// The latest of `start` and the statuses' `finishedAt`; `None` as soon
/// as one has not finished (upstream `latestFinishTime`).
fn latest_finish<'a>(
    start: Option<Timestamp>,
    statuses: impl Iterator<Item = &'a ContainerStatus>,
) -> Option<Timestamp> {
    let mut latest = start;
    for status in statuses {
        let finished = status.terminated.as_ref()?.finished_at?;
        latest = Some(latest.map_or(finished, |l| l.max(finished)));
    }
    latest
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1 as core;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    use super::*;
    use crate::testing::slim;

    // === utils ===

    /// Upstream's `defaultTestTime`, 2009-11-10T23:00:00Z.
    fn t0() -> Timestamp {
        "2009-11-10T23:00:00Z".parse().unwrap()
    }

    fn at(offset: SignedDuration) -> Timestamp {
        t0().checked_add(offset).unwrap()
    }

    /// Upstream's table offsets are milliseconds; the API's times are
    /// whole seconds, so the port counts in seconds.
    fn offset(n: i64) -> SignedDuration {
        SignedDuration::from_secs(n)
    }

    fn secs(n: i64) -> Duration {
        Duration::from_secs(u64::try_from(n).unwrap())
    }

    /// A container status: terminated (finished at `finished`, if given),
    /// or running.
    fn container(name: &str, terminated: Option<Option<Timestamp>>) -> core::ContainerStatus {
        core::ContainerStatus {
            name: name.into(),
            state: Some(match terminated {
                Some(finished) => core::ContainerState {
                    terminated: Some(core::ContainerStateTerminated {
                        finished_at: finished.map(Time),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                None => core::ContainerState { running: Some(Default::default()), ..Default::default() },
            }),
            ..Default::default()
        }
    }

    fn pod_with(containers: Vec<core::ContainerStatus>, meta: ObjectMeta) -> core::Pod {
        core::Pod {
            metadata: meta,
            status: Some(core::PodStatus { container_statuses: Some(containers), ..Default::default() }),
            ..Default::default()
        }
    }

    /// A pod whose one container finished at `finished`.
    fn finished_at(phase: &str, finished: Timestamp) -> Pod {
        let mut pod = pod_with(vec![container("", Some(Some(finished)))], ObjectMeta::default());
        pod.status.as_mut().unwrap().phase = Some(phase.into());
        slim(&pod)
    }

    // === tests ===

    /// Upstream `TestNewBackoffRecord`.
    #[test]
    fn new_backoff_record_table() {
        let record = |failures, last| BackoffRecord { failures_after_last_success: failures, last_failure_time: last };
        /// Name, stored record, new successes and failures, wanted record.
        type Case = (&'static str, Option<BackoffRecord>, Vec<SignedDuration>, Vec<SignedDuration>, BackoffRecord);
        let cases: Vec<Case> = vec![
            ("Empty backoff store and one new failure", None, vec![], vec![offset(0)], record(1, Some(t0()))),
            (
                "Empty backoff store and two new failures",
                None,
                vec![],
                vec![offset(0), offset(-1)],
                record(2, Some(t0())),
            ),
            (
                "Empty backoff store, two failures followed by success",
                None,
                vec![offset(0)],
                vec![offset(-2), offset(-1)],
                record(0, None),
            ),
            (
                "Empty backoff store, two failures, one success and two more failures",
                None,
                vec![offset(-2)],
                vec![offset(0), offset(-4), offset(-3), offset(-1)],
                record(2, Some(t0())),
            ),
            (
                "Backoff store having failure count 2 and one new failure",
                Some(record(2, None)),
                vec![],
                vec![offset(0)],
                record(3, Some(t0())),
            ),
            (
                "Empty backoff store with success and failure at same timestamp",
                None,
                vec![offset(0)],
                vec![offset(0)],
                record(0, None),
            ),
            ("Empty backoff store with no success/failure", None, vec![], vec![], record(0, None)),
            ("Empty backoff store with one success", None, vec![offset(0)], vec![], record(0, None)),
        ];
        for (name, stored, succeeded, failed, want) in cases {
            let mut store = BackoffStore::default();
            if let Some(stored) = stored {
                store.update("key", stored);
            }
            let succeeded: Vec<Pod> = succeeded.into_iter().map(|d| finished_at("Succeeded", at(d))).collect();
            let failed: Vec<Pod> = failed.into_iter().map(|d| finished_at("Failed", at(d))).collect();
            let got =
                store.new_record("key", &succeeded.iter().collect::<Vec<_>>(), &failed.iter().collect::<Vec<_>>());
            assert_eq!(got, want, "{name}");
        }
    }

    /// Upstream `TestGetFinishedTime`. In its "Pod with init container" case
    /// the init container is declared a sidecar, as only sidecars finish
    /// after the main containers and count.
    #[test]
    fn finished_time_table() {
        let s = |n| SignedDuration::from_secs(n);
        let deleted = |grace: Option<i64>| ObjectMeta {
            deletion_timestamp: Some(Time(t0())),
            deletion_grace_period_seconds: grace,
            ..Default::default()
        };
        let ready = |status: &str, since: Timestamp| core::PodCondition {
            type_: "Ready".into(),
            status: status.into(),
            last_transition_time: Some(Time(since)),
            ..Default::default()
        };
        let with_conditions = |mut pod: core::Pod, conditions: Vec<core::PodCondition>| {
            pod.status.as_mut().unwrap().conditions = Some(conditions);
            pod
        };
        let mut sidecar = pod_with(vec![container("main", Some(Some(at(s(-1)))))], ObjectMeta::default());
        sidecar.spec = Some(core::PodSpec {
            init_containers: Some(vec![core::Container {
                name: "proxy".into(),
                restart_policy: Some("Always".into()),
                ..Default::default()
            }]),
            ..Default::default()
        });
        sidecar.status.as_mut().unwrap().init_container_statuses = Some(vec![container("proxy", Some(Some(t0())))]);
        let unfinished = || vec![container("", Some(None))];
        let cases = [
            (
                "Pod with multiple containers and all containers terminated",
                pod_with(
                    vec![
                        container("a", Some(Some(at(s(-1))))),
                        container("b", Some(Some(t0()))),
                        container("c", Some(Some(at(s(-2))))),
                    ],
                    ObjectMeta::default(),
                ),
                t0(),
            ),
            (
                "Pod with multiple containers; two containers in terminated state and one in running state; fallback to deletionTimestamp",
                pod_with(
                    vec![
                        container("a", Some(Some(at(s(-1))))),
                        container("b", None),
                        container("c", Some(Some(at(s(-2))))),
                    ],
                    deleted(None),
                ),
                t0(),
            ),
            ("fallback to deletionTimestamp", pod_with(vec![container("a", None)], deleted(None)), t0()),
            (
                "fallback to deletionTimestamp, decremented by grace period",
                pod_with(vec![container("a", None)], deleted(Some(30))),
                at(s(-30)),
            ),
            (
                "fallback to PodReady.LastTransitionTime when status of the condition is False",
                with_conditions(pod_with(unfinished(), ObjectMeta::default()), vec![ready("False", t0())]),
                t0(),
            ),
            (
                "skip fallback to PodReady.LastTransitionTime when status of the condition is True",
                with_conditions(pod_with(unfinished(), deleted(None)), vec![ready("True", at(s(-30)))]),
                t0(),
            ),
            (
                "fallback to creationTimestamp",
                pod_with(unfinished(), ObjectMeta { creation_timestamp: Some(Time(t0())), ..Default::default() }),
                t0(),
            ),
            ("Pod with init container and all containers terminated", sidecar, t0()),
        ];
        for (name, pod, want) in cases {
            assert_eq!(finished_time(&slim(&pod)), want, "{name}");
        }
    }

    #[test]
    fn an_init_container_that_is_not_a_sidecar_does_not_date_the_end() {
        let mut pod = pod_with(vec![container("main", Some(Some(t0())))], ObjectMeta::default());
        pod.status.as_mut().unwrap().init_container_statuses =
            Some(vec![container("setup", Some(Some(t0().checked_add(SignedDuration::from_secs(5)).unwrap())))]);
        assert_eq!(finished_time(&slim(&pod)), t0());
    }

    /// Upstream `TestGetRemainingBackoffTime` (5 s doubling to 700 s).
    #[test]
    fn remaining_backoff_time_table() {
        let cases = [
            ("no failures", 0, None, 0, 0),
            ("one failure; current time and failure time are same", 1, Some(t0()), 0, 5),
            ("one failure; current time == 1 second + failure time", 1, Some(t0()), 1, 4),
            ("one failure; current time == expected backoff time", 1, Some(t0()), 5, 0),
            ("one failure; current time == expected backoff time + 1 Second", 1, Some(t0()), 6, 0),
            ("three failures; current time and failure time are same", 3, Some(t0()), 0, 20),
            (
                "eight failures; current time and failure time are same; backoff not exceeding maxBackoff",
                8,
                Some(t0()),
                0,
                640,
            ),
            (
                "nine failures; current time and failure time are same; backoff exceeding maxBackoff",
                9,
                Some(t0()),
                0,
                700,
            ),
        ];
        for (name, failures, last, elapsed, want) in cases {
            let record = BackoffRecord { failures_after_last_success: failures, last_failure_time: last };
            let now = at(SignedDuration::from_secs(elapsed));
            assert_eq!(record.remaining_time(now, secs(5), secs(700)), secs(want), "{name}");
        }
    }

    #[test]
    fn the_default_backoff_doubles_from_ten_seconds_to_ten_minutes() {
        let wait = |failures| {
            let record = BackoffRecord { failures_after_last_success: failures, last_failure_time: Some(t0()) };
            record.remaining_time(t0(), DEFAULT_JOB_POD_FAILURE_BACK_OFF, MAX_JOB_POD_FAILURE_BACK_OFF)
        };
        assert_eq!([1, 2, 3, 6, 7, 100].map(wait), [10, 20, 40, 320, 600, 600].map(secs));
    }

    #[test]
    fn the_store_forgets_a_finished_job() {
        let mut store = BackoffStore::default();
        let failed = finished_at("Failed", t0());
        let record = store.new_record("ns/job", &[], &[&failed]);
        store.update("ns/job", record.clone());
        assert_eq!(store.get("ns/job"), Some(&record));
        store.remove("ns/job");
        assert_eq!(store.get("ns/job"), None);
    }
}
