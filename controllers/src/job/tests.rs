//! Table tests of a whole Job sync, ported from upstream
//! `job_controller_test.go` (each names its upstream test and case). A
//! plan is judged by what it would leave behind: the pods created (and
//! their indexes), deleted and patched, the status of the last status
//! write, the events.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{Job, JobSpec, JobStatus, UncountedTerminatedPods};
use k8s_openapi::api::core::v1::{Pod as ApiPod, PodCondition, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference, Time};
use kcm_objects::Pod;

use super::Action;
use super::backoff::BackoffStore;
use super::finalizers::FinalizerExpectations;
use super::finished::FinishedJobExpectations;
use super::pods::TRACKING_FINALIZER;
use super::write::{Count, Write};
use super::{Snapshot, SyncAction, Synced, sync};
use crate::common::expectations::Expectations;
use crate::testing::{labels, slim, template, ts};

// === utils ===

const NOW: i64 = 1_000_000;
const JOB_UID: &str = "job-uid";

/// Job `ns/foobar` (uid `job-uid`), selector and template `app=web`,
/// `restartPolicy: Never`.
pub(super) fn job(parallelism: i32, completions: Option<i32>, backoff_limit: i32) -> Job {
    let mut template = template("busybox");
    template.spec.as_mut().unwrap().restart_policy = Some("Never".into());
    Job {
        metadata: ObjectMeta {
            name: Some("foobar".into()),
            namespace: Some("ns".into()),
            uid: Some(JOB_UID.into()),
            resource_version: Some("1".into()),
            ..Default::default()
        },
        spec: Some(JobSpec {
            parallelism: Some(parallelism),
            completions,
            backoff_limit: Some(backoff_limit),
            selector: Some(LabelSelector { match_labels: Some(labels(&[("app", "web")])), ..Default::default() }),
            template,
            ..Default::default()
        }),
        status: None,
    }
}

fn indexed(mut j: Job) -> Job {
    j.spec.as_mut().unwrap().completion_mode = Some("Indexed".into());
    j
}

/// A pod of the Job, with the tracking finalizer, in `phase`.
pub(super) fn pod(name: &str, phase: &str) -> ApiPod {
    ApiPod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            uid: Some(format!("uid-{name}")),
            labels: Some(labels(&[("app", "web")])),
            creation_timestamp: Some(Time(ts(NOW - 100))),
            owner_references: Some(vec![OwnerReference {
                api_version: "batch/v1".into(),
                kind: "Job".into(),
                name: "foobar".into(),
                uid: JOB_UID.into(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            finalizers: Some(vec![TRACKING_FINALIZER.into()]),
            ..Default::default()
        },
        spec: Some(PodSpec::default()),
        status: Some(PodStatus { phase: Some(phase.into()), ..Default::default() }),
    }
}

fn ready(mut p: ApiPod) -> ApiPod {
    p.status.as_mut().unwrap().conditions = Some(vec![PodCondition {
        type_: "Ready".into(),
        status: "True".into(),
        last_transition_time: Some(Time(ts(NOW - 50))),
        ..Default::default()
    }]);
    p
}

fn with_index(mut p: ApiPod, index: &str) -> ApiPod {
    p.metadata
        .annotations
        .get_or_insert_default()
        .insert("batch.kubernetes.io/job-completion-index".into(), index.into());
    p
}

/// The pods of upstream's `newPodList`-style counts.
pub(super) fn pods(active: usize, ready_pods: usize, succeeded: usize, failed: usize) -> Vec<ApiPod> {
    let mut all = Vec::new();
    for i in 0..active {
        let p = pod(&format!("active-{i}"), "Running");
        all.push(if i < ready_pods { ready(p) } else { p });
    }
    all.extend((0..succeeded).map(|i| pod(&format!("succeeded-{i}"), "Succeeded")));
    all.extend((0..failed).map(|i| pod(&format!("failed-{i}"), "Failed")));
    all
}

pub(super) struct World {
    job: kcm_objects::Job,
    pods: Vec<Arc<Pod>>,
    expectations: Expectations,
    finalizers: FinalizerExpectations,
    finished: FinishedJobExpectations,
    backoff: BackoffStore,
    now: Timestamp,
}

impl World {
    pub(super) fn new(job: Job, pods: Vec<ApiPod>) -> Self {
        Self {
            job: kcm_objects::Job::new(job),
            pods: pods.iter().map(|p| Arc::new(slim(p))).collect(),
            expectations: Expectations::new(),
            finalizers: FinalizerExpectations::new(),
            finished: FinishedJobExpectations::new(),
            backoff: BackoffStore::default(),
            now: ts(NOW),
        }
    }

    pub(super) fn sync(&self) -> Synced {
        sync(&Snapshot {
            job: &self.job,
            pods: &self.pods,
            expectations: &self.expectations,
            finalizer_expectations: &self.finalizers,
            finished_expectations: &self.finished,
            backoff: &self.backoff,
            now: self.now,
        })
    }

    fn outcome(&self) -> Outcome {
        Outcome::of(&self.job, &self.sync())
    }
}

/// What a plan leaves behind if every write succeeds.
#[derive(Debug)]
struct Outcome {
    creations: usize,
    created_indexes: BTreeSet<i32>,
    deletions: usize,
    pod_patches: usize,
    status: JobStatus,
    events: Vec<String>,
    counts: Vec<Count>,
    action: Option<SyncAction>,
    requeue_after: Option<Duration>,
}

impl Outcome {
    fn of(job: &Job, synced: &Synced) -> Self {
        let mut o = Outcome {
            creations: 0,
            created_indexes: BTreeSet::new(),
            deletions: 0,
            pod_patches: 0,
            status: job.status.clone().unwrap_or_default(),
            events: Vec::new(),
            counts: Vec::new(),
            action: synced.action,
            requeue_after: synced.plan.requeue_after,
        };
        for action in synced.plan.actions() {
            match action {
                Action::CreatePod { pod, .. } => {
                    o.creations += 1;
                    let annotations = pod.metadata.annotations.clone().unwrap_or_default();
                    if let Some(ix) = annotations.get("batch.kubernetes.io/job-completion-index") {
                        o.created_indexes.insert(ix.parse().unwrap());
                    }
                }
                Action::DeletePod { .. } => o.deletions += 1,
                Action::Own(Write::RemoveFinalizerAndDelete { has_finalizer, .. }) => {
                    o.deletions += 1;
                    o.pod_patches += usize::from(*has_finalizer);
                }
                Action::Own(Write::RemoveFinalizer { .. } | Write::AdoptPod { .. } | Write::ReleasePod { .. }) => {
                    o.pod_patches += 1
                }
                Action::Own(Write::UpdateStatus { job }) => o.status = job.status.clone().unwrap_or_default(),
                Action::Own(Write::Count(c)) => o.counts.push(c.clone()),
                Action::Event(e) => o.events.push(format!("{} {}", e.reason, e.message)),
                _ => {}
            }
        }
        o
    }

    fn conditions(&self) -> Vec<String> {
        self.status
            .conditions
            .iter()
            .flatten()
            .map(|c| format!("{}={} {}", c.type_, c.status, c.reason.as_deref().unwrap_or("")))
            .collect()
    }

    /// active/ready/succeeded/failed/terminating.
    fn counters(&self) -> (i32, i32, i32, i32, i32) {
        let s = &self.status;
        (
            s.active.unwrap_or(0),
            s.ready.unwrap_or(0),
            s.succeeded.unwrap_or(0),
            s.failed.unwrap_or(0),
            s.terminating.unwrap_or(0),
        )
    }
}

// === TestControllerSyncJob ===

/// Upstream `TestControllerSyncJob`, the NonIndexed cases: (name, job,
/// pods, creations, deletions, pod patches, (active, ready, succeeded,
/// failed, terminating), conditions).
#[test]
fn controller_sync_job() {
    type Case = (&'static str, Job, Vec<ApiPod>, usize, usize, usize, (i32, i32, i32, i32, i32), Vec<&'static str>);
    let cases: Vec<Case> = vec![
        ("job start", job(2, Some(5), 6), vec![], 2, 0, 0, (2, 0, 0, 0, 0), vec![]),
        ("WQ job start", job(2, None, 6), vec![], 2, 0, 0, (2, 0, 0, 0, 0), vec![]),
        (
            "pending pods",
            job(2, Some(5), 6),
            vec![pod("p0", "Pending"), pod("p1", "Pending")],
            0,
            0,
            0,
            (2, 0, 0, 0, 0),
            vec![],
        ),
        ("correct # of pods", job(3, Some(5), 6), pods(3, 2, 0, 0), 0, 0, 0, (3, 2, 0, 0, 0), vec![]),
        ("too few active pods", job(2, Some(5), 6), pods(1, 0, 1, 0), 1, 0, 1, (2, 0, 1, 0, 0), vec![]),
        ("too few active pods with a dynamic job", job(2, None, 6), pods(1, 0, 0, 0), 1, 0, 0, (2, 0, 0, 0, 0), vec![]),
        ("too many active pods", job(2, Some(5), 6), pods(3, 0, 0, 0), 0, 1, 1, (2, 0, 0, 0, 1), vec![]),
        (
            "count ready pods when too many active pods",
            job(2, Some(5), 6),
            pods(3, 3, 0, 0),
            0,
            1,
            1,
            (2, 2, 0, 0, 1),
            vec![],
        ),
        ("new failed pod", job(2, Some(5), 6), pods(1, 0, 0, 1), 1, 0, 1, (2, 0, 0, 1, 0), vec![]),
        (
            "job finish",
            job(2, Some(5), 6),
            pods(0, 0, 5, 0),
            0,
            0,
            5,
            (0, 0, 5, 0, 0),
            vec!["SuccessCriteriaMet=True CompletionsReached", "Complete=True CompletionsReached"],
        ),
        ("WQ job finishing", job(2, None, 6), pods(1, 0, 1, 0), 0, 0, 1, (1, 0, 1, 0, 0), vec![]),
        (
            "WQ job all finished",
            job(2, None, 6),
            pods(0, 0, 2, 0),
            0,
            0,
            2,
            (0, 0, 2, 0, 0),
            vec!["SuccessCriteriaMet=True CompletionsReached", "Complete=True CompletionsReached"],
        ),
        (
            "WQ job all finished despite one failure",
            job(2, None, 6),
            pods(0, 0, 1, 1),
            0,
            0,
            2,
            (0, 0, 1, 1, 0),
            vec!["SuccessCriteriaMet=True CompletionsReached", "Complete=True CompletionsReached"],
        ),
        ("more active pods than parallelism", job(2, Some(5), 6), pods(10, 0, 0, 0), 0, 8, 8, (2, 0, 0, 0, 8), vec![]),
        (
            "more active pods than remaining completions",
            job(3, Some(4), 6),
            pods(3, 0, 2, 0),
            0,
            1,
            3,
            (2, 0, 2, 0, 1),
            vec![],
        ),
        ("status change", job(2, Some(5), 6), pods(2, 0, 2, 0), 0, 0, 2, (2, 0, 2, 0, 0), vec![]),
        (
            "count ready pods when job fails",
            job(2, Some(3), 0),
            pods(2, 2, 0, 1),
            0,
            2,
            3,
            (0, 0, 0, 3, 2),
            vec!["FailureTarget=True BackoffLimitExceeded"],
        ),
    ];
    for (name, job, pods, creations, deletions, patches, counters, conditions) in cases {
        let o = World::new(job, pods).outcome();
        assert_eq!((o.creations, o.deletions, o.pod_patches), (creations, deletions, patches), "{name}");
        assert_eq!(o.counters(), counters, "{name}");
        assert_eq!(o.conditions(), conditions, "{name}");
    }
}

/// Upstream `TestControllerSyncJob` "deleting job": a Job being deleted
/// manages no pods but still counts and releases its finished ones.
#[test]
fn deleting_job() {
    let mut j = job(2, Some(5), 6);
    j.metadata.deletion_timestamp = Some(Time(ts(NOW - 1)));
    let mut all = vec![pod("pending", "Pending")];
    all.extend(pods(1, 0, 1, 0));
    let o = World::new(j, all).outcome();
    assert_eq!((o.creations, o.deletions, o.pod_patches), (0, 0, 3));
    assert_eq!(o.counters(), (2, 0, 1, 0, 0));
}

/// Upstream `TestControllerSyncJob` "job failures, unsatisfied
/// expectations": the Job does not finish while creations are in flight.
#[test]
fn job_failures_unsatisfied_expectations() {
    let mut w = World::new(job(2, Some(5), 0), pods(0, 0, 0, 1));
    w.expectations.expect_creations("ns/foobar", 1, ts(NOW - 1));
    let o = w.outcome();
    assert_eq!(o.counters().3, 1);
    assert!(o.conditions().is_empty(), "{:?}", o.conditions());
    assert!(o.events.is_empty());
}

/// Upstream `TestControllerSyncJob`, the Indexed cases: (name, job, pods,
/// created indexes, deletions, (active, succeeded, failed),
/// completedIndexes).
#[test]
fn controller_sync_job_indexed() {
    let p = |ix: &str, phase: &str, n: usize| with_index(pod(&format!("p{n}-{ix}"), phase), ix);
    type Case = (&'static str, Job, Vec<ApiPod>, Vec<i32>, usize, (i32, i32, i32), &'static str);
    let cases: Vec<Case> = vec![
        ("indexed job start", indexed(job(2, Some(5), 6)), vec![], vec![0, 1], 0, (2, 0, 0), ""),
        (
            "indexed job completed",
            indexed(job(2, Some(3), 6)),
            vec![p("0", "Succeeded", 0), p("1", "Failed", 1), p("1", "Succeeded", 2), p("2", "Succeeded", 3)],
            vec![],
            0,
            (0, 3, 1),
            "0-2",
        ),
        (
            "indexed job repeated completed index",
            indexed(job(2, Some(3), 6)),
            vec![p("0", "Succeeded", 0), p("1", "Succeeded", 1), p("1", "Succeeded", 2)],
            vec![2],
            0,
            (1, 2, 0),
            "0,1",
        ),
        (
            "indexed job some running and completed pods",
            indexed(job(8, Some(20), 6)),
            vec![
                p("0", "Running", 0),
                p("2", "Succeeded", 1),
                p("3", "Pending", 2),
                p("4", "Succeeded", 3),
                p("5", "Succeeded", 4),
                p("7", "Succeeded", 5),
                p("8", "Succeeded", 6),
                p("9", "Succeeded", 7),
            ],
            vec![1, 6, 10, 11, 12, 13],
            0,
            (8, 6, 0),
            "2,4,5,7-9",
        ),
        (
            "indexed job some failed pods",
            indexed(job(3, Some(4), 6)),
            vec![p("0", "Failed", 0), p("1", "Pending", 1), p("2", "Failed", 2)],
            vec![0, 2],
            0,
            (3, 0, 2),
            "",
        ),
        (
            "indexed job repeated indexes",
            indexed(job(5, Some(5), 6)),
            vec![
                p("invalid", "Running", 0),
                p("0", "Succeeded", 1),
                p("1", "Running", 2),
                p("2", "Running", 3),
                p("2", "Pending", 4),
            ],
            vec![],
            2,
            (2, 1, 0),
            "0",
        ),
        (
            "indexed job with indexes outside of range",
            indexed(job(2, Some(5), 6)),
            vec![
                p("0", "Succeeded", 0),
                p("5", "Running", 1),
                p("6", "Succeeded", 2),
                p("7", "Pending", 3),
                p("8", "Failed", 4),
            ],
            vec![],
            2,
            (0, 1, 0),
            "0",
        ),
    ];
    for (name, job, pods, indexes, deletions, (active, succeeded, failed), completed) in cases {
        let o = World::new(job, pods).outcome();
        assert_eq!(o.created_indexes.iter().copied().collect::<Vec<_>>(), indexes, "{name}");
        assert_eq!(o.deletions, deletions, "{name}");
        let (a, _, s, f, _) = o.counters();
        assert_eq!((a, s, f), (active, succeeded, failed), "{name}");
        assert_eq!(o.status.completed_indexes.as_deref().unwrap_or(""), completed, "{name}");
    }
}

/// Upstream `TestControllerSyncJob` "indexed job start": hostnames,
/// generateName, the index label and the `JOB_COMPLETION_INDEX` variable.
#[test]
fn indexed_pods_carry_their_index() {
    let synced = World::new(indexed(job(1, Some(3), 6)), vec![]).sync();
    let Some(Action::CreatePod { pod, .. }) = synced.plan.actions().find(|a| matches!(a, Action::CreatePod { .. }))
    else {
        panic!("{synced:?}")
    };
    assert_eq!(pod.metadata.generate_name.as_deref(), Some("foobar-0-"));
    assert_eq!(pod.spec.as_ref().unwrap().hostname.as_deref(), Some("foobar-0"));
    assert_eq!(
        pod.metadata.labels.as_ref().unwrap().get("batch.kubernetes.io/job-completion-index").map(String::as_str),
        Some("0")
    );
    assert_eq!(pod.metadata.finalizers, Some(vec![TRACKING_FINALIZER.to_string()]));
    let env = pod.spec.as_ref().unwrap().containers[0].env.clone().unwrap_or_default();
    assert!(env.iter().any(|e| e.name == "JOB_COMPLETION_INDEX"), "{env:?}");
}

/// Upstream `TestControllerSyncJob` "suspending a job with satisfied
/// expectations" and "resuming a suspended job".
#[test]
fn suspend_and_resume() {
    let mut suspended = job(2, Some(4), 6);
    suspended.spec.as_mut().unwrap().suspend = Some(true);
    let o = World::new(suspended.clone(), pods(2, 0, 0, 0)).outcome();
    assert_eq!((o.creations, o.deletions, o.pod_patches), (0, 2, 2));
    assert_eq!(o.counters(), (0, 0, 0, 0, 2));
    assert_eq!(o.conditions(), ["Suspended=True JobSuspended"]);
    assert_eq!(o.events, ["Suspended Job suspended"]);
    assert_eq!(o.status.start_time, None, "a Job created suspended has not started");

    let mut resumed = suspended;
    resumed.spec.as_mut().unwrap().suspend = Some(false);
    resumed.status = Some(o.status.clone());
    resumed.status.as_mut().unwrap().terminating = Some(0);
    let mut w = World::new(resumed, vec![]);
    w.now = ts(NOW + 60);
    let o = w.outcome();
    assert_eq!(o.creations, 2);
    assert_eq!(o.conditions(), ["Suspended=False JobResumed"]);
    assert_eq!(o.events, ["Resumed Job resumed"]);
    assert_eq!(o.status.start_time, Some(Time(ts(NOW + 60))), "startTime restarts on resume");
}

// === TestSyncJobPastDeadline ===

/// Upstream `TestSyncJobPastDeadline`: (name, parallelism, completions,
/// activeDeadlineSeconds, started seconds ago, active, succeeded,
/// deletions, (active, succeeded, failed), reason). With pods to delete
/// the Job gets `FailureTarget` and waits for them; without, `Failed`
/// follows in the same sync.
#[test]
fn sync_job_past_deadline() {
    type Case = (&'static str, i32, i32, i64, i64, usize, usize, usize, (i32, i32, i32), &'static str);
    let cases: [Case; 4] = [
        ("activeDeadlineSeconds less than single pod execution", 1, 1, 10, 15, 1, 0, 1, (0, 0, 1), "DeadlineExceeded"),
        (
            "activeDeadlineSeconds bigger than single pod execution",
            1,
            2,
            10,
            15,
            1,
            1,
            1,
            (0, 1, 1),
            "DeadlineExceeded",
        ),
        ("activeDeadlineSeconds times-out before any pod starts", 1, 1, 10, 10, 0, 0, 0, (0, 0, 0), "DeadlineExceeded"),
        ("activeDeadlineSeconds with backofflimit reach", 1, 1, 1, 10, 0, 0, 0, (0, 0, 0), "DeadlineExceeded"),
    ];
    for (name, parallelism, completions, deadline, started, active, succeeded, deletions, counters, reason) in cases {
        let mut j = job(parallelism, Some(completions), 6);
        j.spec.as_mut().unwrap().active_deadline_seconds = Some(deadline);
        j.status = Some(JobStatus { start_time: Some(Time(ts(NOW - started))), ..Default::default() });
        let o = World::new(j, pods(active, 0, succeeded, 0)).outcome();
        assert_eq!(o.deletions, deletions, "{name}");
        let (a, _, s, f, _) = o.counters();
        assert_eq!((a, s, f), counters, "{name}");
        let mut want = vec![format!("FailureTarget=True {reason}")];
        if deletions == 0 {
            want.push(format!("Failed=True {reason}"));
        }
        assert_eq!(o.conditions(), want, "{name}");
    }
}

/// Upstream `TestSyncJobPastDeadline` counterpart: before the deadline
/// the Job is synced again when it falls due.
#[test]
fn deadline_requeues_the_job() {
    let mut j = job(1, Some(1), 6);
    j.spec.as_mut().unwrap().active_deadline_seconds = Some(10);
    j.status = Some(JobStatus { start_time: Some(Time(ts(NOW - 4))), ..Default::default() });
    let o = World::new(j, pods(1, 0, 0, 0)).outcome();
    assert_eq!(o.requeue_after, Some(Duration::from_secs(6)));
    assert!(o.conditions().is_empty());
}

// === TestTrackJobStatusAndRemoveFinalizers ===

/// Upstream `TestTrackJobStatusAndRemoveFinalizers` "succeeded and failed
/// pods" and "past and new finished pods": finished pods go to the
/// uncounted lists first, then to the counters once their finalizers are
/// removed; pods already without a finalizer listed as uncounted are
/// moved at once.
#[test]
fn track_job_status_and_remove_finalizers() {
    let mut j = job(2, Some(10), 6);
    j.status = Some(JobStatus {
        active: Some(0),
        ready: Some(0),
        terminating: Some(0),
        succeeded: Some(2),
        failed: Some(1),
        uncounted_terminated_pods: Some(UncountedTerminatedPods {
            succeeded: Some(vec!["uid-old-succeeded".into()]),
            failed: Some(vec!["uid-old-failed".into()]),
        }),
        ..Default::default()
    });
    let mut old_succeeded = pod("old-succeeded", "Succeeded");
    old_succeeded.metadata.finalizers = None;
    let mut old_failed = pod("old-failed", "Failed");
    old_failed.metadata.finalizers = None;
    let all = vec![old_succeeded, old_failed, pod("a", "Succeeded"), pod("b", "Failed"), pod("c", "Running")];
    let synced = World::new(j, all).sync();
    let statuses: Vec<JobStatus> = synced
        .plan
        .actions()
        .filter_map(|a| match a {
            Action::Own(Write::UpdateStatus { job }) => job.status.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(statuses.len(), 2, "{synced:?}");
    let first = statuses[0].uncounted_terminated_pods.clone().unwrap();
    assert_eq!((statuses[0].succeeded, statuses[0].failed), (Some(3), Some(2)), "the old uncounted are moved first");
    assert_eq!((first.succeeded, first.failed), (Some(vec!["uid-a".to_string()]), Some(vec!["uid-b".to_string()])));
    let removed: Vec<&str> = synced
        .plan
        .actions()
        .filter_map(|a| match a {
            Action::Own(Write::RemoveFinalizer { name, .. }) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(removed, ["a", "b"]);
    let last = &statuses[1];
    assert_eq!((last.succeeded, last.failed), (Some(4), Some(3)));
    assert_eq!(last.uncounted_terminated_pods, Some(UncountedTerminatedPods::default()));
    let finished: Vec<&Count> = Vec::new();
    assert!(finished.is_empty());
}

/// Upstream `TestTrackJobStatusAndRemoveFinalizers` "expecting removed
/// finalizers": a pod whose removal is in flight is neither counted
/// again nor patched again.
#[test]
fn removals_in_flight_are_not_repeated() {
    let mut w = World::new(job(1, Some(2), 6), vec![pod("a", "Succeeded"), pod("b", "Running")]);
    w.finalizers.expect_removals("ns/foobar", ["uid-a".to_string()]);
    w.job.status = Some(JobStatus {
        succeeded: Some(1),
        active: Some(1),
        ready: Some(0),
        terminating: Some(0),
        ..Default::default()
    });
    let o = w.outcome();
    assert_eq!(o.pod_patches, 0);
    assert_eq!(o.counters(), (1, 0, 1, 0, 0));
}

/// Upstream `TestTrackJobStatusAndRemoveFinalizers` "too many finished":
/// one sync lists at most 500 pods.
#[test]
fn at_most_max_uncounted_pods_per_sync() {
    let all: Vec<ApiPod> = (0..501).map(|i| pod(&format!("s{i}"), "Succeeded")).collect();
    let o = World::new(job(1, Some(600), 6), all).outcome();
    assert_eq!(o.pod_patches, 500);
    assert_eq!(o.counters().2, 500);
    assert!(o.conditions().is_empty());
}

// === backoff, events, metrics ===

/// Upstream `TestJobBackoffForOnFailure` (the restarts of `OnFailure`
/// pods count against the backoff limit) and "too many job failures".
#[test]
fn backoff_limit_exceeded() {
    let mut j = job(1, Some(1), 2);
    j.spec.as_mut().unwrap().template.spec.as_mut().unwrap().restart_policy = Some("OnFailure".into());
    let mut running = pod("r", "Running");
    running.status.as_mut().unwrap().container_statuses = Some(vec![k8s_openapi::api::core::v1::ContainerStatus {
        name: "c".into(),
        restart_count: 2,
        ..Default::default()
    }]);
    let o = World::new(j, vec![running]).outcome();
    assert_eq!(o.deletions, 1);
    assert_eq!(o.conditions(), ["FailureTarget=True BackoffLimitExceeded"]);

    // Once the pods are gone, Failed follows, with the event and metric.
    let mut j = job(1, Some(1), 0);
    j.status = Some(JobStatus {
        failed: Some(1),
        ready: Some(0),
        active: Some(0),
        terminating: Some(0),
        ..Default::default()
    });
    let o = World::new(j, vec![]).outcome();
    assert_eq!(o.conditions(), ["FailureTarget=True BackoffLimitExceeded", "Failed=True BackoffLimitExceeded"]);
    assert_eq!(o.events, ["BackoffLimitExceeded Job has reached the specified backoff limit"]);
    assert!(o.counts.contains(&Count::JobFinished {
        completion_mode: "NonIndexed",
        result: "failed",
        reason: "BackoffLimitExceeded".into()
    }));
}

/// A complete Job records `Completed` and counts its finished pods.
#[test]
fn completion_events_and_metrics() {
    let o = World::new(job(1, Some(1), 6), vec![pod("a", "Succeeded")]).outcome();
    assert_eq!(o.events, ["Completed Job completed"]);
    assert!(o.counts.contains(&Count::PodsFinished { completion_mode: "NonIndexed", result: "succeeded", n: 1 }));
    assert!(o.status.completion_time.is_some());
    assert_eq!(o.action, Some(SyncAction::Tracking));
}

/// Upstream `TestSyncJobWithJobBackoffLimit`-style: a failure holds the
/// replacement back 10 s (the action is still `pods_created`).
#[test]
fn recreation_waits_for_the_backoff() {
    let mut failed = pod("f", "Failed");
    failed.status.as_mut().unwrap().conditions = Some(vec![PodCondition {
        type_: "Ready".into(),
        status: "False".into(),
        last_transition_time: Some(Time(ts(NOW - 3))),
        ..Default::default()
    }]);
    let o = World::new(job(1, Some(1), 6), vec![failed]).outcome();
    assert_eq!(o.creations, 0);
    assert_eq!(o.requeue_after, Some(Duration::from_secs(7)));
    assert_eq!(o.action, Some(SyncAction::PodsCreated));
}

/// Upstream kubernetes#139457 (regression #139428), for both backoffs:
/// while the recreation backoff holds the replacement of a failed pod
/// back, the pod still running stays counted active. Counted as 0, the
/// status would hold more ready pods than active, which the API server
/// refuses with 422 (and with it the counting of the failed pod).
#[test]
fn the_recreation_backoff_keeps_running_pods_active() {
    let failed_3s_ago = |mut p: ApiPod| {
        p.status.as_mut().unwrap().conditions = Some(vec![PodCondition {
            type_: "Ready".into(),
            status: "False".into(),
            last_transition_time: Some(Time(ts(NOW - 3))),
            ..Default::default()
        }]);
        p
    };
    let global = vec![ready(pod("r", "Running")), failed_3s_ago(pod("f", "Failed"))];
    let o = World::new(job(2, Some(5), 6), global).outcome();
    assert_eq!(o.creations, 0);
    assert_eq!(o.counters(), (1, 1, 0, 1, 0), "global backoff: active, ready, succeeded, failed, terminating");
    assert_eq!(o.requeue_after, Some(Duration::from_secs(7)));

    let mut j = indexed(job(2, Some(2), 6));
    j.spec.as_mut().unwrap().backoff_limit_per_index = Some(1);
    let per_index =
        vec![ready(with_index(pod("r", "Running"), "0")), failed_3s_ago(with_index(pod("f", "Failed"), "1"))];
    let o = World::new(j, per_index).outcome();
    assert_eq!(o.creations, 0);
    assert_eq!((o.status.active, o.status.ready), (Some(1), Some(1)), "per-index backoff");
    assert_eq!(o.requeue_after, Some(Duration::from_secs(7)));
}

/// Upstream `TestSyncJobWithJobPodFailurePolicy`-style: a FailJob rule
/// fails the Job with the rule's message.
#[test]
fn pod_failure_policy_fail_job() {
    use k8s_openapi::api::batch::v1::{PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement, PodFailurePolicyRule};
    let mut j = job(1, Some(1), 6);
    j.spec.as_mut().unwrap().pod_failure_policy = Some(PodFailurePolicy {
        rules: vec![PodFailurePolicyRule {
            action: "FailJob".into(),
            on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
                operator: "In".into(),
                values: vec![5],
                ..Default::default()
            }),
            ..Default::default()
        }],
    });
    let mut failed = pod("f", "Failed");
    failed.status.as_mut().unwrap().container_statuses = Some(vec![k8s_openapi::api::core::v1::ContainerStatus {
        name: "main-container".into(),
        state: Some(k8s_openapi::api::core::v1::ContainerState {
            terminated: Some(k8s_openapi::api::core::v1::ContainerStateTerminated {
                exit_code: 5,
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }]);
    let o = World::new(j, vec![failed]).outcome();
    let conditions = o.status.conditions.clone().unwrap_or_default();
    assert_eq!(conditions[0].type_, "FailureTarget");
    assert_eq!(conditions[0].reason.as_deref(), Some("PodFailurePolicy"));
    assert!(conditions[0].message.as_deref().unwrap().contains("exit code 5"), "{conditions:?}");
    assert!(o.counts.contains(&Count::FailurePolicyAction { action: "FailJob".into(), n: 1 }));
}

// === skipped syncs ===

#[test]
fn managed_by_another_controller_is_left_alone() {
    let mut j = job(1, Some(1), 6);
    j.spec.as_mut().unwrap().managed_by = Some("example.com/other".into());
    let synced = World::new(j, vec![]).sync();
    assert!(synced.plan.is_empty());
    assert_eq!(synced.action, None);
}

#[test]
fn orphans_are_adopted_with_the_finalizer() {
    let mut orphan = pod("o", "Running");
    orphan.metadata.owner_references = None;
    orphan.metadata.finalizers = None;
    let synced = World::new(job(1, Some(1), 6), vec![orphan]).sync();
    let adopt = synced.plan.actions().find_map(|a| match a {
        Action::Own(Write::AdoptPod { controller_ref, uid, .. }) => {
            Some(super::write::adopt_patch(controller_ref, uid))
        }
        _ => None,
    });
    let body = adopt.expect("adopted");
    assert_eq!(body["metadata"]["finalizers"], serde_json::json!([TRACKING_FINALIZER]));
    assert_eq!(body["metadata"]["ownerReferences"][0]["kind"], "Job");
    assert!(matches!(synced.plan.steps[0].actions[0], Action::RecheckOwner { .. }));
}

/// Upstream's release of a ref manager with the tracking finalizer: a pod
/// that no longer matches loses the Job's reference and the finalizer in
/// one patch, so it is never seen released yet still held by the Job.
#[test]
fn a_pod_that_no_longer_matches_is_released_with_its_finalizer_in_one_patch() {
    let mut relabelled = pod("r", "Running");
    relabelled.metadata.labels = Some(labels(&[("app", "other")]));
    let synced = World::new(job(1, Some(1), 6), vec![relabelled]).sync();
    let releases: Vec<_> = synced
        .plan
        .actions()
        .filter_map(|a| match a {
            Action::Own(Write::ReleasePod { name, uid, owner_uid, .. }) => {
                Some((name.clone(), super::write::release_patch(owner_uid, uid)))
            }
            Action::PatchPodOwnerRefs { name, .. } => panic!("{name} released without its finalizer"),
            _ => None,
        })
        .collect();
    assert_eq!(
        releases,
        vec![(
            "r".to_owned(),
            serde_json::json!({"metadata": {
                "ownerReferences": [{"$patch": "delete", "uid": JOB_UID}],
                "$deleteFromPrimitiveList/finalizers": [TRACKING_FINALIZER],
                "uid": "uid-r",
            }})
        )]
    );
}

// === a Job written finished, read stale (kubernetes#130103) ===

/// The Job as the cache held it before it finished: `active` pods
/// running, nothing counted yet.
fn stale(mut j: Job, active: i32) -> Job {
    j.status = Some(JobStatus { active: Some(active), ready: Some(0), terminating: Some(0), ..Default::default() });
    j
}

/// A pod that finished and was counted: its tracking finalizer is gone.
fn released(mut p: ApiPod) -> ApiPod {
    p.metadata.finalizers = None;
    p
}

/// Upstream `TestDelayedJobUpdateEvent`, the core's part: a Job the
/// controller wrote Complete (one pod, succeeded) or Failed (an Indexed
/// Job, both pods failed with `backoffLimit: 0`), read again from a cache
/// that still shows it running beside its released pods. Without the
/// expectation the sync would start new pods (one, then one per index);
/// with it, the sync does nothing.
#[test]
fn a_job_written_finished_is_not_synced_from_a_stale_cache() {
    let p = |ix: &str| released(with_index(pod(&format!("p-{ix}"), "Failed"), ix));
    let cases = [
        ("succeeded", stale(job(1, Some(1), 6), 1), vec![released(pod("done", "Succeeded"))], 1),
        ("indexed, failed", stale(indexed(job(2, Some(2), 0)), 2), vec![p("0"), p("1")], 2),
    ];
    for (name, job, pods, would_create) in cases {
        let mut world = World::new(job, pods);
        assert_eq!(world.outcome().creations, would_create, "{name}: the hazard");
        world.finished.expect(JOB_UID);
        let synced = world.sync();
        assert!(synced.plan.is_empty(), "{name}: {synced:?}");
        assert_eq!((synced.action, synced.finished), (None, false), "{name}");
    }
}

/// The status write that finishes the Job is followed by the expectation
/// (only once that write succeeded, the step after it); a write that
/// leaves the Job running records none.
#[test]
fn the_finishing_status_write_records_the_job() {
    for (name, pods) in
        [("complete", vec![pod("a", "Succeeded")]), ("failed", vec![pod("a", "Failed"), pod("b", "Failed")])]
    {
        let backoff_limit = if name == "failed" { 0 } else { 6 };
        let synced = World::new(job(1, Some(1), backoff_limit), pods).sync();
        let step_of =
            |wanted: &dyn Fn(&Action) -> bool| synced.plan.steps.iter().rposition(|s| s.actions.iter().any(wanted));
        let finishing = step_of(&|a| match a {
            Action::Own(Write::UpdateStatus { job }) => super::conditions::is_finished(job),
            _ => false,
        });
        let expected = step_of(&|a| matches!(a, Action::Own(Write::ExpectFinished { uid }) if uid == JOB_UID));
        assert!(finishing.is_some(), "{name}: {synced:?}");
        assert_eq!(expected, finishing.map(|s| s + 1), "{name}: right after the finishing write");
    }
    let synced = World::new(job(2, Some(5), 6), pods(1, 0, 1, 0)).sync();
    assert!(!synced.plan.actions().any(|a| matches!(a, Action::Own(Write::ExpectFinished { .. }))));
}

/// Once the cache shows the Job finished, the sync says so (the driver
/// forgets the expectation), whether or not it was pending.
#[test]
fn a_job_read_finished_ends_its_expectation() {
    let done = World::new(job(1, Some(1), 6), vec![pod("a", "Succeeded")]).sync();
    let finished_job = done
        .plan
        .actions()
        .filter_map(|a| match a {
            Action::Own(Write::UpdateStatus { job }) => Some((**job).clone()),
            _ => None,
        })
        .last()
        .expect("a status write");
    for pending in [false, true] {
        let mut world = World::new(finished_job.clone(), vec![released(pod("a", "Succeeded"))]);
        if pending {
            world.finished.expect(JOB_UID);
        }
        let synced = world.sync();
        assert!(synced.plan.is_empty());
        assert!(synced.finished, "pending: {pending}");
    }
}

// === backoffLimitPerIndex, success policy ===

/// Upstream `TestBackoffLimitPerIndex` "single failed index" and
/// "max failed indexes exceeded": a failure beyond the index's limit fails
/// the index; once every index finished with some failed, the Job fails.
#[test]
fn backoff_limit_per_index() {
    let per_index = |max_failed: Option<i32>| {
        let mut j = indexed(job(2, Some(3), 6));
        let spec = j.spec.as_mut().unwrap();
        spec.backoff_limit_per_index = Some(0);
        spec.max_failed_indexes = max_failed;
        j
    };
    let p = |ix: &str, phase: &str| with_index(pod(&format!("p-{ix}"), phase), ix);

    let o = World::new(per_index(None), vec![p("0", "Failed"), p("1", "Succeeded"), p("2", "Failed")]).outcome();
    assert_eq!(o.status.failed_indexes.as_deref(), Some("0,2"));
    assert_eq!(o.status.completed_indexes.as_deref(), Some("1"));
    assert_eq!(o.conditions(), ["FailureTarget=True FailedIndexes", "Failed=True FailedIndexes"]);

    let o = World::new(per_index(Some(0)), vec![p("0", "Failed"), p("1", "Running")]).outcome();
    assert_eq!(o.status.failed_indexes.as_deref(), Some("0"));
    assert_eq!(o.conditions(), ["FailureTarget=True MaxFailedIndexesExceeded"]);
    assert_eq!(o.deletions, 1, "the running pod is deleted");

    // Below the index's limit the failed index is recreated, carrying
    // its failure count.
    let mut j = per_index(None);
    j.spec.as_mut().unwrap().backoff_limit_per_index = Some(1);
    j.spec.as_mut().unwrap().parallelism = Some(3);
    let mut failed = p("0", "Failed");
    failed.status.as_mut().unwrap().conditions = Some(vec![PodCondition {
        type_: "Ready".into(),
        status: "False".into(),
        last_transition_time: Some(Time(ts(NOW - 60))),
        ..Default::default()
    }]);
    let synced = World::new(j, vec![failed, p("1", "Running"), p("2", "Running")]).sync();
    let created: Vec<_> = synced
        .plan
        .actions()
        .filter_map(|a| match a {
            Action::CreatePod { pod, .. } => pod.metadata.annotations.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(created.len(), 1, "{synced:?}");
    assert_eq!(created[0].get("batch.kubernetes.io/job-completion-index").map(String::as_str), Some("0"));
    assert_eq!(created[0].get("batch.kubernetes.io/job-index-failure-count").map(String::as_str), Some("1"));
}

/// Upstream `TestSyncJobWithJobSuccessPolicy` "job with successPolicy
/// with succeededIndexes": the Job meets its success policy and its
/// running pods are deleted.
#[test]
fn success_policy_met() {
    use k8s_openapi::api::batch::v1::{SuccessPolicy, SuccessPolicyRule};
    let mut j = indexed(job(3, Some(3), 6));
    j.spec.as_mut().unwrap().success_policy = Some(SuccessPolicy {
        rules: vec![SuccessPolicyRule { succeeded_indexes: Some("0".into()), succeeded_count: None }],
    });
    let pods = vec![with_index(pod("a", "Succeeded"), "0"), with_index(pod("b", "Running"), "1")];
    let o = World::new(j, pods).outcome();
    let conditions = o.status.conditions.clone().unwrap_or_default();
    assert_eq!(conditions[0].type_, "SuccessCriteriaMet");
    assert_eq!(conditions[0].reason.as_deref(), Some("SuccessPolicy"));
    assert_eq!(conditions[0].message.as_deref(), Some("Matched rules at index 0"));
    assert_eq!(o.deletions, 1);
    assert_eq!(o.creations, 0);
}
