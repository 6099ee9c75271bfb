//! More of upstream's `test/e2e/apps/job.go`, against the real `kcm-rs`
//! binary on kube-sim and on the testbed, Jobs driven with kubectl: completion when tasks
//! fail and are restarted in place (OnFailure), the pod failure policy on
//! exit codes (FailJob, Ignore, Count) and on the `DisruptionTarget`
//! condition, suspend and resume, `backoffLimitPerIndex` with and without
//! `maxFailedIndexes`, `podReplacementPolicy: Failed`, adopting orphans and
//! releasing pods whose labels no longer match, and the status endpoints.
//!
//! Every test runs under an [`Invariants`] checker fed by a watch of the
//! pods: at every pod event no more than `parallelism` pods are
//! active, and once the Job is done its `succeeded` and `failed` equal the
//! pods that really ended so (each counted once). kube-sim's kubelet (and
//! the testbed's kwok stages) run a pod's containers to completion after
//! `kube-sim.io/exit-after` with `kube-sim.io/exit-code`; a container that must fail once and then
//! succeed gets its pod's exit code annotated to 0 after its first restart.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, ListParams};
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, kubectl_with_stdin, wait_for};
use serde_json::{Value, json};

use crate::common::recorder::Recorder;
use crate::common::{Env, PATIENCE, default_service_account, on_both, start};

const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";

// === utils ===

/// The cluster and a kcm-rs running every controller, with the test
/// namespace's `default` ServiceAccount in place for the Jobs' pods.
async fn env() -> Env {
    let env = start().await;
    default_service_account(&env.cluster, &env.client, &env.ns).await;
    env
}

/// `kubectl apply`s Job `name`: pods that exit with `exit_code` after
/// `exit_after` under `restart_policy`, `spec` merged over the defaults.
async fn create(env: &Env, name: &str, restart_policy: &str, exit_after: &str, exit_code: i32, spec: Value) {
    let mut job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": {
            "metadata": {"annotations": {"kube-sim.io/exit-after": exit_after,
                "kube-sim.io/exit-code": exit_code.to_string()}},
            "spec": {"restartPolicy": restart_policy, "containers": [{"name": "c", "image": "busybox"}]}}},
    });
    if let (Some(base), Some(extra)) = (job["spec"].as_object_mut(), spec.as_object()) {
        base.extend(extra.clone());
    }
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-n", &env.ns, "-f", "-"], &job.to_string()).await;
}

fn jobs(env: &Env) -> Api<Job> {
    Api::namespaced(env.client.clone(), &env.ns)
}

fn pod_api(env: &Env) -> Api<Pod> {
    Api::namespaced(env.client.clone(), &env.ns)
}

/// The Job's pods, by the label the API server gives them.
async fn pods(env: &Env, name: &str) -> Vec<Pod> {
    pod_api(env).list(&ListParams::default().labels(&format!("{JOB_NAME_LABEL}={name}"))).await.expect("pods").items
}

fn phase(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default()
}

fn is_active(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none() && !matches!(phase(pod), "Succeeded" | "Failed")
}

fn condition<'a>(job: &'a Job, type_: &str) -> Option<&'a k8s_openapi::api::batch::v1::JobCondition> {
    job.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_ && c.status == "True")
}

/// Waits until the Job has condition `type_` True; gives the Job.
async fn wait_condition(env: &Env, name: &str, type_: &str) -> Job {
    wait_for(&env.cluster, PATIENCE, &format!("{name} {type_}"), || async {
        let job = jobs(env).get(name).await.map_err(|e| e.to_string())?;
        if condition(&job, type_).is_some() { Ok(job) } else { Err(format!("{:?}", job.status)) }
    })
    .await
}

/// Waits until `probe` holds of the Job's pods; gives them.
async fn wait_pods(env: &Env, name: &str, what: &str, probe: impl Fn(&[Pod]) -> bool) -> Vec<Pod> {
    wait_for(&env.cluster, PATIENCE, what, || async {
        let pods = pods(env, name).await;
        if probe(&pods) {
            Ok(pods)
        } else {
            Err(pods.iter().map(|p| format!("{} {}", p.metadata.name.as_deref().unwrap_or(""), phase(p))).collect())
        }
    })
    .await
}

fn status_counts(job: &Job) -> (i32, i32, i32) {
    let s = job.status.clone().unwrap_or_default();
    (s.active.unwrap_or(0), s.succeeded.unwrap_or(0), s.failed.unwrap_or(0))
}

fn reason(job: &Job, type_: &str) -> Option<String> {
    condition(job, type_).and_then(|c| c.reason.clone())
}

/// `kubectl patch job <name> --type=merge -p <patch>`.
async fn patch_job(env: &Env, name: &str, patch: Value) {
    kubectl_ok(&env.kubeconfig, &["patch", "job", name, "-n", &env.ns, "--type=merge", "-p", &patch.to_string()]).await;
}

// === invariants ===

/// Every state of the pods, from a watch started before the Job, checked
/// after the fact in the watch's order.
struct Invariants {
    recorder: Recorder,
}

impl Invariants {
    async fn start(env: &Env) -> Self {
        let pods = Api::namespaced_with(env.client.clone(), &env.ns, &ApiResource::erase::<Pod>(&()));
        Self { recorder: Recorder::watch(vec![pods]).await }
    }

    /// The states of the pods Job `name` controlled when seen (an orphan
    /// or a released pod is not its), by uid, in the order seen.
    fn pod_states(&self, name: &str) -> Vec<(String, bool, Pod)> {
        let states = self.all_pod_states(name).into_iter();
        states.filter(|(_, _, controlled, _)| *controlled).map(|(uid, deleted, _, pod)| (uid, deleted, pod)).collect()
    }

    /// Every state of every pod, by uid, in the order seen, with whether
    /// Job `name` controlled it then.
    fn all_pod_states(&self, name: &str) -> Vec<(String, bool, bool, Pod)> {
        let controlled = |p: &Pod| {
            let mut owners = p.metadata.owner_references.iter().flatten();
            owners.any(|o| o.kind == "Job" && o.name == name && o.controller == Some(true))
        };
        let states = self.recorder.all().into_iter().map(|s| (s.uid().to_owned(), s.deleted, s.typed::<Pod>()));
        states.map(|(uid, deleted, pod)| (uid, deleted, controlled(&pod), pod)).collect()
    }

    /// At every pod event, no more than `parallelism` of Job `name`'s pods
    /// are active (a pod it releases stops counting, one it adopts starts).
    fn assert_parallelism(&self, name: &str, parallelism: usize) {
        let mut current: BTreeMap<String, Pod> = BTreeMap::new();
        for (uid, deleted, controlled, pod) in self.all_pod_states(name) {
            if deleted || !controlled {
                current.remove(&uid);
            } else {
                current.insert(uid, pod);
            }
            let active: Vec<&String> = current.iter().filter(|(_, p)| is_active(p)).map(|(u, _)| u).collect();
            assert!(active.len() <= parallelism, "{name}: {} pods active at once: {active:?}", active.len());
        }
    }

    /// Job `name`'s `succeeded` and `failed` equal its pods that ended so,
    /// less the `ignored` failures, each counted once.
    fn assert_counted_once(&self, job: &Job, ignored: usize) {
        let name = job.metadata.name.as_deref().unwrap_or_default();
        let mut ended: BTreeMap<String, String> = BTreeMap::new();
        for (uid, _, pod) in self.pod_states(name) {
            if matches!(phase(&pod), "Succeeded" | "Failed") {
                ended.insert(uid, phase(&pod).to_owned());
            }
        }
        let count = |p: &str| i32::try_from(ended.values().filter(|v| *v == p).count()).unwrap_or(i32::MAX);
        let (_, succeeded, failed) = status_counts(job);
        let ignored = i32::try_from(ignored).unwrap_or(i32::MAX);
        assert_eq!((succeeded, failed), (count("Succeeded"), count("Failed") - ignored), "{name}: {:?}", job.status);
    }
}

on_both!(
    a_job_completes_when_tasks_fail_once_and_are_restarted_in_place,
    pod_failure_policy_fail_job_on_an_exit_code,
    pod_failure_policy_ignore_on_an_exit_code,
    pod_failure_policy_count_on_an_exit_code,
    pod_failure_policy_ignores_a_disruption,
    a_job_created_suspended_runs_once_resumed,
    suspending_a_job_deletes_its_pods,
    backoff_limit_per_index_fails_every_index,
    max_failed_indexes_fails_the_job_early,
    pod_replacement_policy_failed_waits_for_the_old_pod,
    orphans_are_adopted_and_non_matching_pods_released,
    the_status_endpoints_read_patch_and_replace,
);

// === completion when tasks fail and are restarted ===

/// Upstream "should run a job to completion when tasks sometimes fail and
/// are locally restarted": under OnFailure each pod's container fails
/// once, is restarted in place, then succeeds; the Job completes with no
/// failed pod.
async fn a_job_completes_when_tasks_fail_once_and_are_restarted_in_place() {
    let env = env().await;
    let invariants = Invariants::start(&env).await;
    create(&env, "fail-once-local", "OnFailure", "1s", 1, json!({"parallelism": 2, "completions": 4})).await;
    let job = wait_for(&env.cluster, PATIENCE, "fail-once-local Complete", || async {
        // The container's second run succeeds: its exit code becomes 0
        // once it has restarted.
        for pod in pods(&env, "fail-once-local").await {
            let restarted =
                pod.status.iter().flat_map(|s| s.container_statuses.iter().flatten()).any(|c| c.restart_count > 0);
            let failing =
                pod.metadata.annotations.as_ref().and_then(|a| a.get("kube-sim.io/exit-code")).map(String::as_str)
                    != Some("0");
            if restarted && failing {
                let name = pod.metadata.name.unwrap_or_default();
                kubectl_ok(
                    &env.kubeconfig,
                    &["annotate", "pod", &name, "-n", &env.ns, "--overwrite", "kube-sim.io/exit-code=0"],
                )
                .await;
            }
        }
        let job = jobs(&env).get("fail-once-local").await.map_err(|e| e.to_string())?;
        if condition(&job, "Complete").is_some() { Ok(job) } else { Err(format!("{:?}", job.status)) }
    })
    .await;
    assert_eq!(status_counts(&job), (0, 4, 0));
    let restarted = pods(&env, "fail-once-local")
        .await
        .iter()
        .filter(|p| p.status.iter().flat_map(|s| s.container_statuses.iter().flatten()).any(|c| c.restart_count > 0))
        .count();
    assert_eq!(restarted, 4, "every pod failed once and was restarted in place");
    invariants.assert_parallelism("fail-once-local", 2);
    invariants.assert_counted_once(&job, 0);
}

// === pod failure policy ===

/// Upstream "should allow to use the pod failure policy on exit code to
/// fail the job early": a pod exiting 42 matches a FailJob rule, so the
/// Job fails at once (reason PodFailurePolicy) despite its backoffLimit.
async fn pod_failure_policy_fail_job_on_an_exit_code() {
    let env = env().await;
    let invariants = Invariants::start(&env).await;
    let policy = json!({"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]});
    let spec = json!({"parallelism": 1, "completions": 1, "backoffLimit": 6, "podFailurePolicy": policy});
    create(&env, "fail-job", "Never", "300ms", 42, spec).await;
    let job = wait_condition(&env, "fail-job", "Failed").await;
    assert_eq!(reason(&job, "Failed").as_deref(), Some("PodFailurePolicy"));
    assert_eq!(reason(&job, "FailureTarget").as_deref(), Some("PodFailurePolicy"));
    assert_eq!(status_counts(&job), (0, 0, 1), "one failure, no retry");
    invariants.assert_parallelism("fail-job", 1);
    invariants.assert_counted_once(&job, 0);
}

/// Upstream's pod failure policy Ignore on an exit code: with
/// backoffLimit 0, failures exiting 3 are not counted and the failed pods
/// are replaced; the Job neither fails nor counts them.
async fn pod_failure_policy_ignore_on_an_exit_code() {
    let env = env().await;
    let invariants = Invariants::start(&env).await;
    let policy = json!({"rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}}]});
    let spec = json!({"parallelism": 1, "completions": 1, "backoffLimit": 0, "podFailurePolicy": policy});
    create(&env, "ignore", "Never", "300ms", 3, spec).await;
    wait_pods(&env, "ignore", "two ignored failures and a replacement", |pods| {
        pods.iter().filter(|p| phase(p) == "Failed").count() >= 2
    })
    .await;
    let job = jobs(&env).get("ignore").await.expect("the Job");
    assert!(condition(&job, "Failed").is_none() && condition(&job, "FailureTarget").is_none(), "{:?}", job.status);
    assert_eq!(status_counts(&job).2, 0, "ignored failures are not counted: {:?}", job.status);
    invariants.assert_parallelism("ignore", 1);
}

/// The Count action, as without a policy: failures exiting 1 count toward
/// backoffLimit 0, so the first fails the Job (BackoffLimitExceeded).
async fn pod_failure_policy_count_on_an_exit_code() {
    let env = env().await;
    let invariants = Invariants::start(&env).await;
    let policy = json!({"rules": [
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}},
        {"action": "Count", "onExitCodes": {"operator": "In", "values": [1]}}]});
    let spec = json!({"parallelism": 1, "completions": 1, "backoffLimit": 0, "podFailurePolicy": policy});
    create(&env, "count", "Never", "300ms", 1, spec).await;
    let job = wait_condition(&env, "count", "Failed").await;
    assert_eq!(reason(&job, "Failed").as_deref(), Some("BackoffLimitExceeded"));
    assert_eq!(status_counts(&job), (0, 0, 1));
    invariants.assert_parallelism("count", 1);
    invariants.assert_counted_once(&job, 0);
}

/// Upstream "should allow to use a pod failure policy to ignore failure
/// for an evicted pod; matching on the DisruptionTarget condition": the
/// first pod is disrupted (the test adds `DisruptionTarget` to its status,
/// as the scheduler's preemption or the taint manager does before the pod
/// is stopped) and then fails; its failure is ignored despite
/// backoffLimit 0, while its replacement's undisrupted failure is counted
/// and fails the Job.
async fn pod_failure_policy_ignores_a_disruption() {
    let env = env().await;
    let invariants = Invariants::start(&env).await;
    let policy = json!({"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]});
    let spec = json!({"parallelism": 1, "completions": 1, "backoffLimit": 0, "podFailurePolicy": policy});
    create(&env, "disrupted", "Never", "3s", 1, spec).await;
    let running =
        wait_pods(&env, "disrupted", "a running pod", |pods| pods.iter().any(|p| phase(p) == "Running")).await;
    let first = running[0].metadata.name.clone().unwrap_or_default();
    let disruption = json!([{"op": "add", "path": "/status/conditions/-", "value": {"type": "DisruptionTarget",
        "status": "True", "reason": "PreemptionByScheduler", "message": "preempted for the test",
        "lastTransitionTime": jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).expect("now").to_string()}}]);
    kubectl_ok(
        &env.kubeconfig,
        &["patch", "pod", &first, "-n", &env.ns, "--subresource=status", "--type=json", "-p", &disruption.to_string()],
    )
    .await;
    let job = wait_condition(&env, "disrupted", "Failed").await;
    assert_eq!(reason(&job, "Failed").as_deref(), Some("BackoffLimitExceeded"));
    assert_eq!(status_counts(&job), (0, 0, 1), "the disrupted pod's failure is not counted");
    let failed = pods(&env, "disrupted").await.iter().filter(|p| phase(p) == "Failed").count();
    assert_eq!(failed, 2, "the disrupted pod and its replacement failed");
    invariants.assert_parallelism("disrupted", 1);
    invariants.assert_counted_once(&job, 1);
}

// === suspend ===

/// Upstream "should not create pods when created in suspend state": the
/// suspended Job gets the Suspended condition and no pod; resumed, it
/// completes.
async fn a_job_created_suspended_runs_once_resumed() {
    let env = env().await;
    let invariants = Invariants::start(&env).await;
    create(
        &env,
        "suspend-true-to-false",
        "Never",
        "300ms",
        0,
        json!({"parallelism": 2, "completions": 4, "suspend": true}),
    )
    .await;
    let job = wait_condition(&env, "suspend-true-to-false", "Suspended").await;
    assert_eq!(reason(&job, "Suspended").as_deref(), Some("JobSuspended"));
    assert!(pods(&env, "suspend-true-to-false").await.is_empty(), "no pod while suspended");
    patch_job(&env, "suspend-true-to-false", json!({"spec": {"suspend": false}})).await;
    let job = wait_condition(&env, "suspend-true-to-false", "Complete").await;
    assert_eq!(status_counts(&job), (0, 4, 0));
    let resumed = job.status.iter().flat_map(|s| s.conditions.iter().flatten()).find(|c| c.type_ == "Suspended");
    assert_eq!(resumed.map(|c| (c.status.as_str(), c.reason.as_deref())), Some(("False", Some("JobResumed"))));
    invariants.assert_parallelism("suspend-true-to-false", 2);
    invariants.assert_counted_once(&job, 0);
}

/// Upstream "should delete pods when suspended": the running Job's pods
/// are deleted once it is suspended, and it says so.
async fn suspending_a_job_deletes_its_pods() {
    let env = env().await;
    let invariants = Invariants::start(&env).await;
    create(&env, "suspend-false-to-true", "Never", "1h", 0, json!({"parallelism": 2, "completions": 4})).await;
    wait_pods(&env, "suspend-false-to-true", "two running pods", |pods| {
        pods.iter().filter(|p| phase(p) == "Running").count() == 2
    })
    .await;
    patch_job(&env, "suspend-false-to-true", json!({"spec": {"suspend": true}})).await;
    wait_pods(&env, "suspend-false-to-true", "every pod gone", <[Pod]>::is_empty).await;
    let job = wait_condition(&env, "suspend-false-to-true", "Suspended").await;
    assert_eq!(status_counts(&job).0, 0, "{:?}", job.status);
    invariants.assert_parallelism("suspend-false-to-true", 2);
}

// === backoffLimitPerIndex ===

/// Upstream "should fail to exceed backoffLimit per index": every index
/// fails twice (backoffLimitPerIndex 1), each failure counted once; the
/// Job fails with FailedIndexes once every index has failed.
async fn backoff_limit_per_index_fails_every_index() {
    let env = env().await;
    let invariants = Invariants::start(&env).await;
    let spec = json!({"parallelism": 2, "completions": 2, "completionMode": "Indexed", "backoffLimitPerIndex": 1});
    create(&env, "per-index", "Never", "300ms", 1, spec).await;
    let job = wait_condition(&env, "per-index", "Failed").await;
    assert_eq!(reason(&job, "Failed").as_deref(), Some("FailedIndexes"));
    let status = job.status.clone().unwrap_or_default();
    assert_eq!(status.failed_indexes.as_deref(), Some("0,1"));
    assert_eq!(status_counts(&job), (0, 0, 4));
    invariants.assert_parallelism("per-index", 2);
    invariants.assert_counted_once(&job, 0);
}

/// With maxFailedIndexes 0, the first index past its per-index limit
/// fails the Job (MaxFailedIndexesExceeded).
async fn max_failed_indexes_fails_the_job_early() {
    let env = env().await;
    let invariants = Invariants::start(&env).await;
    let spec = json!({"parallelism": 1, "completions": 3, "completionMode": "Indexed", "backoffLimitPerIndex": 0,
        "maxFailedIndexes": 0});
    create(&env, "max-failed", "Never", "300ms", 1, spec).await;
    let job = wait_condition(&env, "max-failed", "Failed").await;
    assert_eq!(reason(&job, "Failed").as_deref(), Some("MaxFailedIndexesExceeded"));
    assert_eq!(job.status.clone().unwrap_or_default().failed_indexes.as_deref(), Some("0"));
    assert_eq!(status_counts(&job), (0, 0, 1));
    invariants.assert_parallelism("max-failed", 1);
    invariants.assert_counted_once(&job, 0);
}

// === podReplacementPolicy ===

/// Upstream "should recreate pods only after they have failed if pod
/// replacement policy is set to Failed": a deleted running pod is
/// replaced only once it is gone, so the Job never has a terminating pod
/// beside a new one (the checker counts terminating pods as active here).
async fn pod_replacement_policy_failed_waits_for_the_old_pod() {
    let env = env().await;
    let invariants = Invariants::start(&env).await;
    let spec = json!({"parallelism": 1, "completions": 1, "podReplacementPolicy": "Failed"});
    create(&env, "replace-failed", "Never", "1h", 0, spec).await;
    let first =
        wait_pods(&env, "replace-failed", "a running pod", |pods| pods.iter().any(|p| phase(p) == "Running")).await;
    let name = first[0].metadata.name.clone().unwrap_or_default();
    kubectl_ok(&env.kubeconfig, &["delete", "pod", &name, "-n", &env.ns, "--wait=false"]).await;
    wait_pods(&env, "replace-failed", "a replacement", |pods| {
        pods.iter().any(|p| p.metadata.name.as_deref() != Some(&name) && is_active(p))
    })
    .await;
    let mut current: BTreeMap<String, Pod> = BTreeMap::new();
    for (uid, deleted, pod) in invariants.pod_states("replace-failed") {
        if deleted {
            current.remove(&uid);
        } else {
            current.insert(uid, pod);
        }
        let present = current.values().filter(|p| !matches!(phase(p), "Succeeded" | "Failed")).count();
        assert!(present <= 1, "a replacement beside a terminating pod: {:?}", current.keys());
    }
}

// === adopt and release ===

/// Upstream "should adopt matching orphans and release non-matching
/// pods": a pod stripped of its owner reference is adopted back; a pod
/// whose labels no longer match the selector is released.
async fn orphans_are_adopted_and_non_matching_pods_released() {
    let env = env().await;
    let invariants = Invariants::start(&env).await;
    create(&env, "adopt-release", "Never", "1h", 0, json!({"parallelism": 2, "completions": 4})).await;
    let running = wait_pods(&env, "adopt-release", "two running pods", |pods| {
        pods.iter().filter(|p| phase(p) == "Running").count() == 2
    })
    .await;
    let uid = jobs(&env).get("adopt-release").await.expect("Job").metadata.uid.expect("uid");
    let owned_by_job =
        |p: &Pod| p.metadata.owner_references.iter().flatten().any(|o| o.uid == uid && o.controller == Some(true));

    let orphan = running[0].metadata.name.clone().unwrap_or_default();
    let patch = json!([{"op": "remove", "path": "/metadata/ownerReferences"}]).to_string();
    kubectl_ok(&env.kubeconfig, &["patch", "pod", &orphan, "-n", &env.ns, "--type=json", "-p", &patch]).await;
    wait_for(&env.cluster, PATIENCE, "the orphan adopted", || async {
        let pod = pod_api(&env).get(&orphan).await.map_err(|e| e.to_string())?;
        if owned_by_job(&pod) { Ok(()) } else { Err(format!("{:?}", pod.metadata.owner_references)) }
    })
    .await;

    let released = running[1].metadata.name.clone().unwrap_or_default();
    kubectl_ok(
        &env.kubeconfig,
        &[
            "label",
            "pod",
            &released,
            "-n",
            &env.ns,
            "--overwrite",
            "batch.kubernetes.io/controller-uid=other",
            "controller-uid=other",
        ],
    )
    .await;
    wait_for(&env.cluster, PATIENCE, "the relabelled pod released", || async {
        let pod = pod_api(&env).get(&released).await.map_err(|e| e.to_string())?;
        if owned_by_job(&pod) { Err(format!("{:?}", pod.metadata.owner_references)) } else { Ok(()) }
    })
    .await;
    invariants.assert_parallelism("adopt-release", 2);
    // Released as upstream releases: the reference and the tracking
    // finalizer go in one patch, so no state of the pod shows it released
    // yet still held back from deletion by the Job's finalizer.
    let released_uid = running[1].metadata.uid.clone().unwrap_or_default();
    let states = || invariants.all_pod_states("adopt-release").into_iter().filter(|(uid, ..)| *uid == released_uid);
    wait_for(&env.cluster, PATIENCE, "the release seen by the watch", || async {
        if states().any(|(_, _, controlled, _)| !controlled) { Ok(()) } else { Err("still controlled".to_owned()) }
    })
    .await;
    let tracked = |p: &Pod| p.metadata.finalizers.iter().flatten().any(|f| f == "batch.kubernetes.io/job-tracking");
    let held: Vec<Pod> = states().filter(|(_, _, controlled, pod)| !controlled && tracked(pod)).map(|s| s.3).collect();
    assert!(held.is_empty(), "released with the tracking finalizer still on: {:?}", held[0].metadata);
}

// === status endpoints ===

/// Upstream "should apply changes to a job status": the status
/// subresource read, patched and replaced with kubectl, leaving the spec
/// alone.
async fn the_status_endpoints_read_patch_and_replace() {
    let env = env().await;
    create(&env, "status", "Never", "1h", 0, json!({"parallelism": 1, "completions": 1})).await;
    wait_pods(&env, "status", "a running pod", |pods| pods.iter().any(|p| phase(p) == "Running")).await;
    let read =
        kubectl_ok(&env.kubeconfig, &["get", "job", "status", "-n", &env.ns, "--subresource=status", "-o", "json"])
            .await;
    let read: Job = serde_json::from_str(&read).expect("a Job");
    assert!(read.status.as_ref().and_then(|s| s.start_time.as_ref()).is_some(), "{:?}", read.status);

    let patch = json!({"metadata": {"annotations": {"patchedstatus": "true"}}});
    kubectl_ok(
        &env.kubeconfig,
        &["patch", "job", "status", "-n", &env.ns, "--subresource=status", "--type=merge", "-p", &patch.to_string()],
    )
    .await;
    let job = jobs(&env).get("status").await.expect("the Job");
    assert_eq!(job.metadata.annotations.unwrap_or_default().get("patchedstatus").map(String::as_str), Some("true"));

    // Upstream's RetryOnConflict: the job-controller may write the status
    // (its pod's readiness, a moment after the pod runs) between the read
    // and the replace, which is then refused as stale.
    wait_for(&env.cluster, PATIENCE, "the status replaced", || async {
        let mut replaced = jobs(&env).get_status("status").await.map_err(|e| e.to_string())?;
        replaced.metadata.annotations.get_or_insert_default().insert("updatedstatus".into(), "true".into());
        let body = serde_json::to_string(&replaced).expect("json");
        let out =
            kubectl_with_stdin(&env.kubeconfig, &["replace", "--subresource=status", "-f", "-"], Some(&body)).await;
        match out {
            out if out.ok => Ok(()),
            out if out.stderr.contains("(Conflict)") => Err(out.stderr),
            out => panic!("kubectl replace --subresource=status failed: {}", out.stderr),
        }
    })
    .await;
    let job = jobs(&env).get("status").await.expect("the Job");
    assert_eq!(job.metadata.annotations.unwrap_or_default().get("updatedstatus").map(String::as_str), Some("true"));
    assert_eq!(job.spec.and_then(|s| s.completions), Some(1), "the spec is left alone");
}
