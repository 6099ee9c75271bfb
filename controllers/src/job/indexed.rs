//! An Indexed Job's pods by completion index (upstream
//! `indexed_job_utils.go`): which index a pod runs, which indexes
//! succeeded or failed, which to start next, which duplicate pods to
//! delete, which failed pod to keep until its replacement exists, and the
//! per-index failure counts a replacement carries.
//!
//! A pod's index is its `batch.kubernetes.io/job-completion-index`
//! annotation, a non-negative decimal; a pod without one (or with one that
//! does not parse) has no index and is deleted as a stray. Indexes at or
//! past `spec.completions` are out of range, and their pods are deleted
//! too.
//!
//! What is the Job controller's to judge is passed in: which pods still
//! carry the tracking finalizer (`tracked`), whether a pod counts as failed
//! (upstream `isPodFailed`), and the ActivePods order.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use kcm_objects::Pod;

use super::backoff::{finished_time, remaining_time_for_failures};
use super::intervals::OrderedIntervals;
use super::pod_failure_policy::{PodFailurePolicyAction, match_pod_failure_policy};

/// The annotation (and, since `PodIndexLabel`, the label) holding a pod's
/// completion index (`batch.JobCompletionIndexAnnotation`).
pub const JOB_COMPLETION_INDEX_ANNOTATION: &str = "batch.kubernetes.io/job-completion-index";

/// The failures of the pod's index before it that counted against
/// `backoffLimitPerIndex` (`batch.JobIndexFailureCountAnnotation`).
pub const JOB_INDEX_FAILURE_COUNT_ANNOTATION: &str = "batch.kubernetes.io/job-index-failure-count";

/// The failures of the pod's index before it that an `Ignore` rule let
/// pass (`batch.JobIndexIgnoredFailureCountAnnotation`).
pub const JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION: &str = "batch.kubernetes.io/job-index-ignored-failure-count";

/// `spec.completionMode` of a Job whose pods each run one index.
pub const INDEXED_COMPLETION: &str = "Indexed";

/// Whether the Job is Indexed (upstream `isIndexedJob`).
pub fn is_indexed_job(job: &Job) -> bool {
    job.spec.as_ref().and_then(|s| s.completion_mode.as_deref()) == Some(INDEXED_COMPLETION)
}

/// Whether the Job limits failures per index (upstream
/// `hasBackoffLimitPerIndex`; the feature is GA).
pub fn has_backoff_limit_per_index(job: &Job) -> bool {
    job.spec.as_ref().is_some_and(|s| s.backoff_limit_per_index.is_some())
}

/// `spec.completions`, 0 when unset (an Indexed Job always sets it).
fn completions(job: &Job) -> i32 {
    job.spec.as_ref().and_then(|s| s.completions).unwrap_or(0)
}

/// The pod's completion index, `None` without a valid one (upstream
/// `getCompletionIndex`; an index beyond `i32` is out of every Job's range
/// and counts as none).
pub fn completion_index(pod: &Pod) -> Option<i32> {
    pod.metadata.annotations.get(JOB_COMPLETION_INDEX_ANNOTATION)?.parse().ok().filter(|&ix: &i32| ix >= 0)
}

/// The pod's index, when it is one of the Job's `completions`.
fn index_in_range(pod: &Pod, completions: i32) -> Option<i32> {
    completion_index(pod).filter(|&ix| ix < completions)
}

/// The indexes the pods run (upstream `getIndexes`).
pub fn indexes_of<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> BTreeSet<i32> {
    pods.into_iter().filter_map(completion_index).collect()
}

/// The succeeded indexes: as `status.completedIndexes` had them, and with
/// the succeeded `tracked` pods (not yet counted) added (upstream
/// `calculateSucceededIndexes`).
pub fn calculate_succeeded_indexes(job: &Job, tracked: &[&Pod]) -> (OrderedIntervals, OrderedIntervals) {
    let completions = completions(job);
    let status = job.status.as_ref().and_then(|s| s.completed_indexes.as_deref()).unwrap_or("");
    let previous = OrderedIntervals::parse(status, completions);
    let new: BTreeSet<i32> =
        tracked.iter().filter(|p| p.phase() == "Succeeded").filter_map(|p| index_in_range(p, completions)).collect();
    let all = previous.with_ordered_indexes(&new.into_iter().collect::<Vec<_>>());
    (previous, all)
}

/// The failed indexes: `status.failedIndexes` with the indexes of the
/// `tracked` pods that failed them added (upstream
/// `calculateFailedIndexes`, for a Job with `backoffLimitPerIndex`).
pub fn calculate_failed_indexes(job: &Job, tracked: &[&Pod], is_pod_failed: impl Fn(&Pod) -> bool) -> OrderedIntervals {
    let completions = completions(job);
    let status = job.status.as_ref().and_then(|s| s.failed_indexes.as_deref()).unwrap_or("");
    let previous = OrderedIntervals::parse(status, completions);
    let new: BTreeSet<i32> = tracked
        .iter()
        .filter(|p| is_index_failed(job, p, is_pod_failed(p)))
        .filter_map(|p| index_in_range(p, completions))
        .collect();
    previous.with_ordered_indexes(&new.into_iter().collect::<Vec<_>>())
}

/// Whether the pod's failure fails its index (upstream `isIndexFailed`):
/// a `FailIndex` rule matched, or the failure counts and the index had
/// already failed `backoffLimitPerIndex` times before it.
///
/// Example: `backoffLimitPerIndex: 1`; the index's first pod fails
/// (failure count 0): replaced; the second (failure count 1): the index
/// fails.
pub fn is_index_failed(job: &Job, pod: &Pod, pod_failed: bool) -> bool {
    if !pod_failed {
        return false;
    }
    let spec = job.spec.as_ref();
    let policy = match_pod_failure_policy(spec.and_then(|s| s.pod_failure_policy.as_ref()), pod);
    if policy.action == Some(PodFailurePolicyAction::FailIndex) {
        return true;
    }
    let limit = spec.and_then(|s| s.backoff_limit_per_index).unwrap_or(0);
    policy.count_failed && index_failure_count(pod) >= limit
}

/// The first `count` indexes below `completions` that no pod runs and that
/// neither succeeded nor failed (upstream `firstPendingIndexes`).
/// `terminating` are the terminating pods when the Job replaces only
/// failed pods (their indexes are not free yet), empty otherwise.
pub fn first_pending_indexes(
    active: &[&Pod],
    terminating: &[&Pod],
    succeeded: &OrderedIntervals,
    failed: Option<&OrderedIntervals>,
    count: usize,
    completions: i32,
) -> Vec<i32> {
    let mut result = Vec::with_capacity(count);
    if count == 0 {
        return result;
    }
    let busy = indexes_of(active.iter().chain(terminating).copied());
    let mut taken = succeeded.with_ordered_indexes(&busy.into_iter().collect::<Vec<_>>());
    if let Some(failed) = failed {
        taken = taken.merge(failed);
    }
    let mut candidate = 0;
    for interval in &taken.0 {
        while candidate < completions && result.len() < count && candidate < interval.first {
            result.push(candidate);
            candidate += 1;
        }
        candidate = candidate.max(interval.last.saturating_add(1));
    }
    while candidate < completions && result.len() < count {
        result.push(candidate);
        candidate += 1;
    }
    result
}

/// Splits active `pods` into those to delete and those to keep (upstream
/// `appendDuplicatedIndexPodsForRemoval`): pods without an index or with
/// one out of range go, and of the pods sharing an index only the last in
/// `active_order` (the ActivePods order, most wanted last) stays.
pub fn duplicated_index_pods_for_removal<'a>(
    pods: &[&'a Pod],
    completions: i32,
    active_order: impl Fn(&Pod, &Pod) -> Ordering,
) -> (Vec<&'a Pod>, Vec<&'a Pod>) {
    let (mut remove, mut keep) = (Vec::new(), Vec::new());
    let mut by_index: Vec<(Option<i32>, &'a Pod)> = pods.iter().map(|&p| (completion_index(p), p)).collect();
    by_index.sort_by_key(|&(ix, _)| ix);
    for same in by_index.chunk_by(|a, b| a.0 == b.0) {
        let mut group: Vec<&'a Pod> = same.iter().map(|&(_, p)| p).collect();
        match same[0].0 {
            Some(ix) if ix < completions => {
                group.sort_by(|a, b| active_order(a, b));
                keep.extend(group.pop());
                remove.extend(group);
            }
            _ => remove.extend(group),
        }
    }
    (remove, keep)
}

/// For each index with failed pods and nothing else (no active pod, not
/// succeeded or failed), the failed pod to keep until its replacement is
/// created, so the replacement can carry the index's failure counts on
/// (upstream `getPodsWithDelayedDeletionPerIndex`): the one with the most
/// failures before it, the newest finished among equals. `failed` are the
/// Job's failed pods still tracked and not being released.
pub fn pods_with_delayed_deletion_per_index<'a>(
    job: &Job,
    failed: &[&'a Pod],
    active: &[&Pod],
    succeeded: &OrderedIntervals,
    failed_indexes: &OrderedIntervals,
) -> HashMap<i32, &'a Pod> {
    let completions = completions(job);
    let active = indexes_of(active.iter().copied());
    let mut kept: HashMap<i32, &'a Pod> = HashMap::new();
    for &pod in failed {
        let Some(ix) = index_in_range(pod, completions) else { continue };
        if succeeded.has(ix) || failed_indexes.has(ix) || active.contains(&ix) {
            continue;
        }
        let replace = kept.get(&ix).is_none_or(|last| {
            index_absolute_failure_count(last) <= index_absolute_failure_count(pod)
                && finished_time(pod) >= finished_time(last)
        });
        if replace {
            kept.insert(ix, pod);
        }
    }
    kept
}

/// The failure counts the replacement of `replaced` carries, counted and
/// ignored (upstream `getNewIndexFailureCounts`): the replaced pod's, with
/// its own failure added to the one the pod failure policy puts it in.
/// A first pod has `(0, 0)`.
pub fn new_index_failure_counts(job: &Job, replaced: Option<&Pod>) -> (i32, i32) {
    let Some(pod) = replaced else { return (0, 0) };
    let (counted, ignored) = (index_failure_count(pod), index_ignored_failure_count(pod));
    let policy = job.spec.as_ref().and_then(|s| s.pod_failure_policy.as_ref());
    if match_pod_failure_policy(policy, pod).count_failed {
        (counted.saturating_add(1), ignored)
    } else {
        (counted, ignored.saturating_add(1))
    }
}

/// How long a replacement for the index of `last_failed_pod` still waits
/// at `now` (upstream `getRemainingTimePerIndex`): the backoff after the
/// failures the pod carries plus its own, counted from when it finished;
/// no wait without a failed pod.
pub fn remaining_time_per_index(
    last_failed_pod: Option<&Pod>,
    now: Timestamp,
    default_backoff: Duration,
    max_backoff: Duration,
) -> Duration {
    let Some(pod) = last_failed_pod else { return Duration::ZERO };
    let failures = index_absolute_failure_count(pod).saturating_add(1);
    remaining_time_for_failures(now, default_backoff, max_backoff, failures, Some(finished_time(pod)))
}

/// The pod's `job-index-failure-count` annotation (upstream
/// `getIndexFailureCount`); 0 when absent, not a number, negative or
/// beyond `i32`, as upstream (which logs it) reads it.
pub fn index_failure_count(pod: &Pod) -> i32 {
    annotation_count(pod, JOB_INDEX_FAILURE_COUNT_ANNOTATION)
}

/// The pod's `job-index-ignored-failure-count` annotation, read as
/// [`index_failure_count`] reads its own.
pub fn index_ignored_failure_count(pod: &Pod) -> i32 {
    annotation_count(pod, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)
}

/// Every failure of the pod's index before it, counted or ignored
/// (upstream `getIndexAbsoluteFailureCount`).
pub fn index_absolute_failure_count(pod: &Pod) -> i32 {
    index_failure_count(pod).saturating_add(index_ignored_failure_count(pod))
}

/// A non-negative `i32` annotation, 0 otherwise.
fn annotation_count(pod: &Pod, key: &str) -> i32 {
    pod.metadata.annotations.get(key).and_then(|v| v.parse::<i32>().ok()).filter(|&n| n >= 0).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::batch::v1::{
        JobSpec, JobStatus, PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement,
        PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
    };

    use super::*;
    use crate::job::intervals::Interval;
    use crate::testing::{PodBuilder, ts};

    // === utils ===

    /// Upstream's `noIndex`: a pod without the index annotation.
    const NO_INDEX: &str = "-";

    fn ivs(pairs: &[(i32, i32)]) -> OrderedIntervals {
        OrderedIntervals(pairs.iter().map(|&(first, last)| Interval { first, last }).collect())
    }

    /// Upstream's `hollowPodsWithIndexPhase`, each pod named after its
    /// place in the list.
    fn hollow_pods(descs: &[(&str, &str)]) -> Vec<Pod> {
        descs.iter().enumerate().map(|(i, &(index, phase))| pod(&i.to_string(), index).phase(phase).build()).collect()
    }

    /// A pod with `index` (none for [`NO_INDEX`]).
    fn pod(name: &str, index: &str) -> PodBuilder {
        let pod = PodBuilder::new(name).uid(name);
        if index == NO_INDEX { pod } else { pod.annotation(JOB_COMPLETION_INDEX_ANNOTATION, index) }
    }

    /// Upstream's `buildPod().uid(uid).indexFailureCount(count).phase(phase).index(index)`.
    fn failed_pod(uid: &str, failure_count: &str, phase: &str, index: &str) -> PodBuilder {
        pod(uid, index).annotation(JOB_INDEX_FAILURE_COUNT_ANNOTATION, failure_count).phase(phase)
    }

    /// Upstream's `toIndexPhases`.
    fn index_phases(pods: &[&Pod]) -> Vec<(String, String)> {
        let index =
            |p: &Pod| p.metadata.annotations.get(JOB_COMPLETION_INDEX_ANNOTATION).unwrap_or(NO_INDEX).to_owned();
        pods.iter().map(|p| (index(p), p.phase().to_owned())).collect()
    }

    fn owned(descs: &[(&str, &str)]) -> Vec<(String, String)> {
        descs.iter().map(|&(i, p)| (i.to_owned(), p.to_owned())).collect()
    }

    fn job(completions: i32, backoff_limit_per_index: Option<i32>) -> Job {
        Job {
            spec: Some(JobSpec {
                completions: Some(completions),
                completion_mode: Some(INDEXED_COMPLETION.into()),
                backoff_limit_per_index,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn refs(pods: &[Pod]) -> Vec<&Pod> {
        pods.iter().collect()
    }

    /// Upstream's `isPodFailed` for a Job without a replacement policy.
    fn failed_phase(pod: &Pod) -> bool {
        pod.phase() == "Failed"
    }

    /// A stand-in for the ActivePods order (upstream `controller.ActivePods`):
    /// by phase, Pending before Running, as the table's pods differ only so.
    fn by_phase(a: &Pod, b: &Pod) -> Ordering {
        let rank = |p: &Pod| match p.phase() {
            "Pending" => 0,
            "Unknown" => 1,
            _ => 2,
        };
        rank(a).cmp(&rank(b))
    }

    // === tests ===

    /// Upstream `TestCalculateSucceededIndexes`; its pods all carry the
    /// tracking finalizer, so all are `tracked`.
    #[test]
    fn calculate_succeeded_indexes_table() {
        let s = "Succeeded";
        /// Name, `completedIndexes`, pods (index, phase), completions, wanted
        /// intervals from the status and with the pods.
        type Case =
            (&'static str, &'static str, Vec<(&'static str, &'static str)>, i32, Vec<(i32, i32)>, Vec<(i32, i32)>);
        let cases: Vec<Case> = vec![
            ("one index", "", vec![("1", s)], 2, vec![], vec![(1, 1)]),
            (
                "two separate",
                "",
                vec![("2", "Failed"), ("5", s), ("5", s), ("10", "Failed"), ("10", s)],
                11,
                vec![],
                vec![(5, 5), (10, 10)],
            ),
            (
                "two intervals",
                "",
                vec![("0", "Running"), ("1", "Pending"), ("2", s), ("3", s), ("5", s), ("6", s), ("7", s)],
                8,
                vec![],
                vec![(2, 3), (5, 7)],
            ),
            (
                "one index and one interval",
                "",
                vec![("0", s), ("1", "Failed"), ("2", s), ("3", s), ("4", s), ("5", s), (NO_INDEX, s), ("-2", s)],
                6,
                vec![],
                vec![(0, 0), (2, 5)],
            ),
            (
                "out of range",
                "",
                vec![("0", s), ("1", s), ("2", s), ("3", "Failed"), ("4", s), ("5", s), (NO_INDEX, s), ("-2", s)],
                5,
                vec![],
                vec![(0, 2), (4, 4)],
            ),
            ("prev interval out of range", "0-5,8-10", vec![], 8, vec![(0, 5)], vec![(0, 5)]),
            (
                "prev interval partially out of range",
                "0-5,8-10",
                vec![],
                10,
                vec![(0, 5), (8, 9)],
                vec![(0, 5), (8, 9)],
            ),
            (
                "prev and new separate",
                "0,4,5,10-12",
                vec![("2", s), ("7", s), ("8", s)],
                13,
                vec![(0, 0), (4, 5), (10, 12)],
                vec![(0, 0), (2, 2), (4, 5), (7, 8), (10, 12)],
            ),
            (
                "prev between new",
                "3,4,6",
                vec![("2", s), ("7", s), ("8", s)],
                9,
                vec![(3, 4), (6, 6)],
                vec![(2, 4), (6, 8)],
            ),
            (
                "new between prev",
                "2,7,8",
                vec![("3", s), ("4", s), ("6", s)],
                9,
                vec![(2, 2), (7, 8)],
                vec![(2, 4), (6, 8)],
            ),
            (
                "new within prev",
                "2-7",
                vec![("0", s), ("3", s), ("5", s), ("9", s)],
                10,
                vec![(2, 7)],
                vec![(0, 0), (2, 7), (9, 9)],
            ),
            ("corrupted interval", "0,1-foo,bar", vec![("3", s)], 4, vec![(0, 0)], vec![(0, 0), (3, 3)]),
        ];
        for (name, previous, pods, completions, want_status, want) in cases {
            let mut job = job(completions, None);
            job.status = Some(JobStatus { completed_indexes: Some(previous.into()), ..Default::default() });
            let pods = hollow_pods(&pods);
            let (got_status, got) = calculate_succeeded_indexes(&job, &refs(&pods));
            assert_eq!(got_status, ivs(&want_status), "{name}: from status");
            assert_eq!(got, ivs(&want), "{name}");
        }
    }

    /// Upstream `TestIsIndexFailed`.
    #[test]
    fn is_index_failed_table() {
        let mut fail_index = job(2, Some(1));
        fail_index.spec.as_mut().unwrap().pod_failure_policy = Some(PodFailurePolicy {
            rules: vec![PodFailurePolicyRule {
                action: "FailIndex".into(),
                on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
                    container_name: None,
                    operator: "In".into(),
                    values: vec![3],
                }),
                on_pod_conditions: None,
            }],
        });
        let mut exited_3 = failed_pod("a", "0", "Failed", "0").build();
        exited_3.status.container_statuses = vec![kcm_objects::ContainerStatus {
            terminated: Some(Box::new(kcm_objects::Terminated { exit_code: 3, finished_at: None })),
            ..Default::default()
        }]
        .into();
        let cases = [
            (
                "failed pod exceeding backoffLimitPerIndex, when backoffLimitPerIndex=0",
                job(2, Some(0)),
                failed_pod("a", "0", "Failed", "0").build(),
                true,
            ),
            (
                "failed pod exceeding backoffLimitPerIndex, when backoffLimitPerIndex=1",
                job(2, Some(1)),
                failed_pod("a", "1", "Failed", "1").build(),
                true,
            ),
            ("matching FailIndex pod failure policy", fail_index, exited_3, true),
            (
                "failed pod within backoffLimitPerIndex",
                job(2, Some(1)),
                failed_pod("a", "0", "Failed", "0").build(),
                false,
            ),
        ];
        for (name, job, pod, want) in cases {
            assert_eq!(is_index_failed(&job, &pod, failed_phase(&pod)), want, "{name}");
        }
    }

    /// Upstream `TestCalculateFailedIndexes`. Its "pod without finalizer is
    /// ignored" case is the caller's: such a pod is not `tracked`.
    #[test]
    fn calculate_failed_indexes_table() {
        let with_status = |failed: &str| {
            let mut job = job(2, Some(0));
            job.status = Some(JobStatus { failed_indexes: Some(failed.into()), ..Default::default() });
            job
        };
        let cases = [
            (
                "one new index failed",
                job(2, Some(1)),
                vec![failed_pod("a", "0", "Failed", "0").build(), failed_pod("b", "1", "Failed", "1").build()],
                vec![(1, 1)],
            ),
            (
                "pod outside completions is ignored",
                job(2, Some(0)),
                vec![failed_pod("a", "0", "Failed", "3").build()],
                vec![],
            ),
            (
                "extend the failed indexes",
                with_status("0"),
                vec![failed_pod("a", "0", "Failed", "1").build()],
                vec![(0, 1)],
            ),
            (
                "prev failed indexes empty",
                with_status(""),
                vec![failed_pod("a", "0", "Failed", "1").build()],
                vec![(1, 1)],
            ),
            (
                "prev failed indexes outside the completions",
                with_status("9"),
                vec![failed_pod("a", "0", "Failed", "1").build()],
                vec![(1, 1)],
            ),
        ];
        for (name, job, pods, want) in cases {
            assert_eq!(calculate_failed_indexes(&job, &refs(&pods), failed_phase), ivs(&want), "{name}");
        }
    }

    /// Upstream `TestGetPodsWithDelayedDeletionPerIndex`. Its cases of a
    /// pod without the finalizer or with its removal expected are the
    /// caller's: such pods are not passed as `failed`.
    #[test]
    fn pods_with_delayed_deletion_per_index_table() {
        let at = |secs: i64| ts(1_000 + secs);
        let cases = [
            (
                "failed pods are kept corresponding to non-failed indexes are kept",
                job(3, Some(1)),
                vec![
                    failed_pod("a", "0", "Failed", "0").build(),
                    failed_pod("b", "1", "Failed", "1").build(),
                    failed_pod("c", "0", "Failed", "2").build(),
                ],
                vec!["a", "c"],
            ),
            (
                "failed pod with index outside of completions; the pod's deletion is not delayed",
                job(2, Some(0)),
                vec![failed_pod("a", "0", "Failed", "4").build()],
                vec![],
            ),
            (
                "failed pod for active index; the pod's deletion is not delayed as it is already replaced",
                job(2, Some(1)),
                vec![failed_pod("a1", "0", "Failed", "0").build(), failed_pod("a2", "1", "Running", "0").build()],
                vec![],
            ),
            (
                "failed pod for succeeded index; the pod's deletion is not delayed as it is already replaced",
                job(2, Some(1)),
                vec![failed_pod("a1", "0", "Failed", "0").build(), failed_pod("a2", "1", "Succeeded", "0").build()],
                vec![],
            ),
            (
                "multiple failed pods for index with different failure count; only the pod with highest failure count is kept",
                job(2, Some(4)),
                vec![
                    failed_pod("a1", "0", "Failed", "0").build(),
                    failed_pod("a3", "2", "Failed", "0").build(),
                    failed_pod("a2", "1", "Failed", "0").build(),
                ],
                vec!["a3"],
            ),
            (
                "multiple failed pods for index with different finish times; only the last failed pod is kept",
                job(2, Some(4)),
                vec![
                    failed_pod("a1", "1", "Failed", "0").deleting(at(-1)).build(),
                    failed_pod("a3", "1", "Failed", "0").deleting(at(0)).build(),
                    failed_pod("a2", "1", "Failed", "0").deleting(at(-2)).build(),
                ],
                vec!["a3"],
            ),
        ];
        for (name, job, pods, want) in cases {
            let all = refs(&pods);
            let active: Vec<&Pod> =
                all.iter().copied().filter(|p| !matches!(p.phase(), "Failed" | "Succeeded")).collect();
            let failed: Vec<&Pod> = all.iter().copied().filter(|p| failed_phase(p)).collect();
            let failed_indexes = calculate_failed_indexes(&job, &all, failed_phase);
            let (_, succeeded) = calculate_succeeded_indexes(&job, &all);
            let kept = pods_with_delayed_deletion_per_index(&job, &failed, &active, &succeeded, &failed_indexes);
            let mut got: Vec<String> = kept.values().map(|p| p.metadata.uid.to_string()).collect();
            got.sort();
            assert_eq!(got, want, "{name}");
        }
    }

    /// Upstream `TestGetNewIndexFailureCountValue`.
    #[test]
    fn new_index_failure_counts_table() {
        let mut ignore_disruption = job(4, Some(1));
        ignore_disruption.spec.as_mut().unwrap().pod_failure_policy = Some(PodFailurePolicy {
            rules: vec![PodFailurePolicyRule {
                action: "Ignore".into(),
                on_exit_codes: None,
                on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
                    type_: "DisruptionTarget".into(),
                    status: Some("True".into()),
                }]),
            }],
        });
        let mut disrupted = failed_pod("a", "3", "Failed", "3").build();
        disrupted.status.conditions = vec![kcm_objects::PodCondition::new("DisruptionTarget", "True", None)].into();
        let cases = [
            ("first pod created", Job::default(), None, (0, 0)),
            (
                "failed pod being replaced with 0 index failure count",
                Job::default(),
                Some(failed_pod("a", "0", "Failed", "0").build()),
                (1, 0),
            ),
            (
                "failed pod being replaced with >0 index failure count",
                Job::default(),
                Some(failed_pod("a", "3", "Failed", "0").build()),
                (4, 0),
            ),
            ("failed pod being replaced, matching the ignore rule", ignore_disruption, Some(disrupted), (3, 1)),
        ];
        for (name, job, pod, want) in cases {
            assert_eq!(new_index_failure_counts(&job, pod.as_ref()), want, "{name}");
        }
    }

    /// Upstream `TestFirstPendingIndexes`.
    #[test]
    fn first_pending_indexes_table() {
        /// Name, active pods (index, phase), succeeded and failed indexes,
        /// count, completions, wanted indexes.
        type Case = (
            &'static str,
            Vec<(&'static str, &'static str)>,
            Vec<(i32, i32)>,
            Option<Vec<(i32, i32)>>,
            usize,
            i32,
            Vec<i32>,
        );
        let cases: Vec<Case> = vec![
            ("cnt greater than completions", vec![], vec![], None, 5, 3, vec![0, 1, 2]),
            ("cnt less than completions", vec![], vec![], None, 2, 5, vec![0, 1]),
            ("first pods active", vec![("0", "Running"), ("1", "Pending")], vec![], None, 3, 10, vec![2, 3, 4]),
            ("last pods active or succeeded", vec![("6", "Pending")], vec![(4, 5)], None, 6, 6, vec![0, 1, 2, 3]),
            (
                "mixed",
                vec![("3", "Pending"), ("5", "Running"), ("8", "Pending"), (NO_INDEX, "Running"), ("-3", "Running")],
                vec![(2, 4), (9, 9)],
                None,
                5,
                20,
                vec![0, 1, 6, 7, 10],
            ),
            (
                "with failed indexes",
                vec![("3", "Pending"), ("9", "Pending")],
                vec![(1, 1), (5, 5), (9, 9)],
                Some(vec![(2, 2), (6, 7)]),
                5,
                20,
                vec![0, 4, 8, 10, 11],
            ),
        ];
        for (name, active, succeeded, failed, count, completions, want) in cases {
            let active = hollow_pods(&active);
            let failed = failed.map(|f| ivs(&f));
            let got = first_pending_indexes(&refs(&active), &[], &ivs(&succeeded), failed.as_ref(), count, completions);
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn terminating_pods_hold_their_index_when_only_failed_pods_are_replaced() {
        let terminating = hollow_pods(&[("0", "Running")]);
        let got = first_pending_indexes(&[], &refs(&terminating), &OrderedIntervals::default(), None, 2, 3);
        assert_eq!(got, [1, 2]);
    }

    /// Upstream `TestAppendDuplicatedIndexPodsForRemoval`.
    #[test]
    fn duplicated_index_pods_for_removal_table() {
        let (p, r) = ("Pending", "Running");
        let cases = [
            (
                "all unique",
                vec![(NO_INDEX, p), ("2", p), ("5", r), ("6", r)],
                vec![(NO_INDEX, p), ("6", r)],
                vec![("2", p), ("5", r)],
            ),
            (
                "all with index",
                vec![("5", p), ("0", r), ("3", p), ("0", r), ("3", r), ("0", p), ("6", r), ("6", p)],
                vec![("0", p), ("0", r), ("3", p), ("6", r), ("6", p)],
                vec![("0", r), ("3", r), ("5", p)],
            ),
            (
                "mixed",
                vec![(NO_INDEX, p), ("invalid", r), ("-2", r), ("0", p), ("1", p), ("1", p), ("1", r)],
                vec![(NO_INDEX, p), ("invalid", r), ("-2", r), ("1", p), ("1", p)],
                vec![("0", p), ("1", r)],
            ),
        ];
        for (name, pods, want_remove, want_keep) in cases {
            let pods = hollow_pods(&pods);
            let (remove, keep) = duplicated_index_pods_for_removal(&refs(&pods), 6, by_phase);
            assert_eq!(index_phases(&remove), owned(&want_remove), "{name}: removed");
            assert_eq!(index_phases(&keep), owned(&want_keep), "{name}: kept");
        }
    }

    /// Upstream `TestGetIndexFailureCount`.
    #[test]
    fn index_failure_count_table() {
        let cases = [
            ("no annotation", None, 0),
            ("valid value", Some("2"), 2),
            ("valid maxint32 value", Some("2147483647"), i32::MAX),
            ("too large value", Some("2147483648"), 0),
            ("negative value", Some("-1"), 0),
            ("invalid int value", Some("xyz"), 0),
        ];
        for (name, value, want) in cases {
            let pod = match value {
                Some(v) => PodBuilder::new("p").annotation(JOB_INDEX_FAILURE_COUNT_ANNOTATION, v),
                None => PodBuilder::new("p"),
            };
            assert_eq!(index_failure_count(&pod.build()), want, "{name}");
        }
    }

    #[test]
    fn reads_the_completion_index_annotation() {
        let index = |v: &str| completion_index(&pod("p", v).build());
        assert_eq!(index("3"), Some(3));
        assert_eq!(index(NO_INDEX), None);
        assert_eq!(index("-2"), None);
        assert_eq!(index("x"), None);
        assert_eq!(index("99999999999"), None);
    }

    /// Upstream `TestGetRemainingBackoffTimePerIndex` (5 s doubling to
    /// 700 s; the failed pods' end is their deletion time).
    #[test]
    fn remaining_backoff_time_per_index_table() {
        let now = ts(1_000);
        let secs = Duration::from_secs;
        let cases = [
            ("no failures", None, 0),
            (
                "two prev failures; current time and failure time are same",
                Some(failed_pod("a", "2", "Failed", "0").deleting(now).build()),
                20,
            ),
            (
                "one prev failure counted and one ignored; current time and failure time are same",
                Some(
                    failed_pod("a", "1", "Failed", "0")
                        .annotation(JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION, "1")
                        .deleting(now)
                        .build(),
                ),
                20,
            ),
        ];
        for (name, pod, want) in cases {
            assert_eq!(remaining_time_per_index(pod.as_ref(), now, secs(5), secs(700)), secs(want), "{name}");
        }
    }
}
