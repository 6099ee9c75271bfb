//! The TTL-after-finished controller end to end: the real `kcm-rs` binary
//! against kube-sim and against the testbed, Jobs created with kubectl (upstream's
//! `test/e2e/apps/ttl_after_finished.go`, and the cases around it: a
//! Job's TTL changed after it finished, a Job not finished, a finished Job
//! without a TTL, a TTL of 0, a failed Job).
//!
//! kcm-rs runs only `ttl-after-finished-controller` and the garbage
//! collector (which finishes the foreground deletions the controller
//! starts), not the job-controller: the test plays the job controller's
//! part and marks each Job finished through the status subresource
//! (`kubectl patch --subresource=status`), with the conditions, times and
//! counts kube-controller-manager's job controller writes (`SuccessCriteriaMet`
//! then `Complete`, or `FailureTarget` then `Failed`, each with its
//! `lastTransitionTime`; `startTime`, and `completionTime` for a
//! completed Job). TTLs are a few seconds, so the real waiting is short;
//! the test waits on conditions and orders events by what it observed,
//! never on timings.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{ApiResource, PostParams};
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};
use serde_json::json;

use crate::common::collector::{self, Feed};
use crate::common::recorder::{Recorder, assert_foreground};
use crate::common::{Env, PATIENCE, on_both, start_provisioned};

/// Upstream's `dummyFinalizer`: holds a Job the controller deleted, so the
/// test can read its deletionTimestamp.
const DUMMY_FINALIZER: &str = "k8s.io/dummy-finalizer";

// === utils ===

/// The cluster and a kcm-rs running the TTL-after-finished controller and
/// the garbage collector only, the test namespace provisioned (its
/// `default` ServiceAccount, for the Jobs' pods) as the controller manager
/// that ran before would have.
async fn env() -> Env {
    let controllers = "--controllers=ttl-after-finished-controller,garbage-collector-controller";
    start_provisioned(&[controllers]).await
}

fn jobs(env: &Env) -> Api<Job> {
    Api::namespaced(env.client.clone(), &env.ns)
}

/// `kubectl apply`s Job `name` (one pod that would run to completion),
/// with `ttlSecondsAfterFinished: ttl` when given and upstream's dummy
/// finalizer when asked; returns its uid.
async fn create_job(env: &Env, name: &str, ttl: Option<i32>, finalizer: bool) -> String {
    let mut job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name},
        "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 0,
            "template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}},
    });
    if let Some(ttl) = ttl {
        job["spec"]["ttlSecondsAfterFinished"] = json!(ttl);
    }
    if finalizer {
        job["metadata"]["finalizers"] = json!([DUMMY_FINALIZER]);
    }
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-n", &env.ns, "-f", "-"], &job.to_string()).await;
    jobs(env).get(name).await.expect("the Job").metadata.uid.expect("a uid")
}

/// Now, to the second (the precision of the API's times).
fn now() -> jiff::Timestamp {
    jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).expect("a time")
}

/// Marks Job `name` finished as the job controller would, through the
/// status subresource: complete (its one pod succeeded) or failed (its one
/// pod failed, past `backoffLimit: 0`). Returns the finish time written.
async fn finish(env: &Env, name: &str, complete: bool) -> jiff::Timestamp {
    let at = now();
    let condition = |type_: &str, reason: &str, message: &str| {
        json!({"type": type_, "status": "True", "reason": reason, "message": message,
            "lastProbeTime": at.to_string(), "lastTransitionTime": at.to_string()})
    };
    let status = if complete {
        let message = "Reached expected number of succeeded pods";
        json!({"startTime": at.to_string(), "completionTime": at.to_string(), "succeeded": 1, "active": 0,
            "ready": 0, "conditions": [
                condition("SuccessCriteriaMet", "CompletionsReached", message),
                condition("Complete", "CompletionsReached", message)]})
    } else {
        let message = "Job has reached the specified backoff limit";
        json!({"startTime": at.to_string(), "failed": 1, "active": 0, "ready": 0, "conditions": [
            condition("FailureTarget", "BackoffLimitExceeded", message),
            condition("Failed", "BackoffLimitExceeded", message)]})
    };
    let patch = json!({"status": status}).to_string();
    kubectl_ok(
        &env.kubeconfig,
        &["patch", "job", name, "-n", &env.ns, "--subresource=status", "--type=merge", "-p", &patch],
    )
    .await;
    at
}

/// Waits until Job `name` no longer exists.
async fn gone(env: &Env, name: &str) {
    wait_for(&env.cluster, PATIENCE, &format!("Job {name} deleted"), || async {
        match jobs(env).get_opt(name).await.map_err(|e| e.to_string())? {
            None => Ok(()),
            Some(job) => {
                Err(format!("still there: {:?}, {:?}", job.metadata.deletion_timestamp, job.metadata.finalizers))
            }
        }
    })
    .await;
}

/// Asserts that Job `name` is there and not being deleted.
async fn kept(env: &Env, name: &str) {
    let job = jobs(env).get_opt(name).await.expect("read").unwrap_or_else(|| panic!("Job {name} was deleted"));
    assert_eq!(job.metadata.deletion_timestamp, None, "Job {name} is being deleted");
}

/// `kubectl patch`es Job `name`'s `ttlSecondsAfterFinished`.
async fn set_ttl(env: &Env, name: &str, ttl: i32) {
    let patch = json!({"spec": {"ttlSecondsAfterFinished": ttl}}).to_string();
    kubectl_ok(&env.kubeconfig, &["patch", "job", name, "-n", &env.ns, "--type=merge", "-p", &patch]).await;
}

/// A pod of Job `name` as the job controller creates it (controlled by
/// the Job, blocking its deletion); returns its uid.
async fn job_pod(env: &Env, name: &str, job_uid: &str) -> String {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": format!("{name}-pod"),
            "labels": {"batch.kubernetes.io/job-name": name, "job-name": name},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": job_uid,
                "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]},
    }))
    .expect("a valid pod");
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    api.create(&PostParams::default(), &pod).await.expect("the pod").metadata.uid.expect("a uid")
}

/// Upstream `updateJobWithRetries` removing the dummy finalizer: a read,
/// then an update guarded by its resourceVersion, again on a conflict.
async fn remove_dummy_finalizer(env: &Env, name: &str) {
    let api = jobs(env);
    wait_for(&env.cluster, PATIENCE, "the dummy finalizer removed", || async {
        let mut job = api.get(name).await.map_err(|e| e.to_string())?;
        job.metadata.finalizers.get_or_insert_default().retain(|f| f != DUMMY_FINALIZER);
        api.replace(name, &PostParams::default(), &job).await.map(drop).map_err(|e| e.to_string())
    })
    .await;
}

/// The value of the series `series` (name and labels) in `/metrics`.
fn sample(body: &str, series: &str) -> Option<f64> {
    body.lines().find_map(|l| l.strip_prefix(series)).and_then(|v| v.trim().parse().ok())
}

// === upstream's ttl_after_finished.go ===

on_both!(
    a_finished_job_is_deleted_once_its_ttl_has_run_out,
    a_zero_ttl_deletes_at_once_and_unfinished_or_ttl_less_jobs_are_kept,
    a_ttl_changed_after_the_job_finished_is_the_one_that_counts,
);

/// Upstream "job should be deleted once it finishes after TTL seconds":
/// the Job, held by a finalizer of its own, is marked for deletion no
/// earlier than its finish time plus its TTL; the deletion is in the
/// foreground (held by `foregroundDeletion` until its pod is gone); with
/// the finalizer removed, the Job and its pod are gone.
async fn a_finished_job_is_deleted_once_its_ttl_has_run_out() {
    let env = env().await;
    let watched = [ApiResource::erase::<Job>(&()), ApiResource::erase::<Pod>(&())];
    let recorder =
        Recorder::watch(watched.iter().map(|r| Api::namespaced_with(env.client.clone(), &env.ns, r)).collect()).await;
    let ttl = 2;
    let uid = create_job(&env, "rand-non-local", Some(ttl), true).await;
    let pod = job_pod(&env, "rand-non-local", &uid).await;
    collector::observed(&env, Feed::Pods).await;
    let finished = finish(&env, "rand-non-local", true).await;

    let deleting = wait_for(&env.cluster, PATIENCE, "the Job marked for deletion", || async {
        let job = jobs(&env).get("rand-non-local").await.map_err(|e| e.to_string())?;
        job.metadata.deletion_timestamp.ok_or_else(|| format!("not yet: {:?}", job.status))
    })
    .await;
    let expired = finished + jiff::SignedDuration::from_secs(i64::from(ttl));
    assert!(deleting.0 >= expired, "deleted at {} before its TTL ran out at {expired}", deleting.0);

    remove_dummy_finalizer(&env, "rand-non-local").await;
    gone(&env, "rand-non-local").await;
    recorder.deletions(&env, &[uid.clone(), pod.clone()]).await;
    assert_foreground(&recorder, &uid, &[pod]);
}

// === around it ===

/// A TTL of 0 deletes a Job as soon as it finishes, and a failed Job goes
/// as a complete one does; a Job that has not finished, and a finished
/// one without a TTL, are kept: when the TTL-0 Job is gone, the
/// controller has seen the others finish (or not) before it.
async fn a_zero_ttl_deletes_at_once_and_unfinished_or_ttl_less_jobs_are_kept() {
    let env = env().await;
    create_job(&env, "running", Some(0), false).await;
    create_job(&env, "no-ttl", None, false).await;
    finish(&env, "no-ttl", true).await;
    create_job(&env, "failed", Some(1), false).await;
    finish(&env, "failed", false).await;
    create_job(&env, "zero", Some(0), false).await;
    finish(&env, "zero", true).await;

    gone(&env, "zero").await;
    gone(&env, "failed").await;
    kept(&env, "running").await;
    kept(&env, "no-ttl").await;

    wait_for(&env.cluster, PATIENCE, "the deletions in /metrics", || async {
        let (code, body) = env.scrape("/metrics").await;
        let deletions = sample(&body, "ttl_after_finished_controller_job_deletion_duration_seconds_count");
        let adds = sample(&body, r#"workqueue_adds_total{name="ttl_jobs_to_delete"}"#);
        let buckets = body
            .lines()
            .filter(|l| l.starts_with("ttl_after_finished_controller_job_deletion_duration_seconds_bucket"))
            .count();
        // Upstream's 14 buckets, and +Inf.
        if code == 200 && deletions == Some(2.0) && adds.is_some_and(|a| a >= 2.0) && buckets == 15 {
            Ok(())
        } else {
            Err(format!("code {code}, deletions {deletions:?}, adds {adds:?}, {buckets} buckets"))
        }
    })
    .await;
}

/// A Job's TTL changed after it finished is the one that counts: an hour
/// shortened to a second deletes it; five seconds lengthened to an hour
/// keep it past its first expiry (a sentinel with a longer TTL, finished
/// after it, is deleted first).
async fn a_ttl_changed_after_the_job_finished_is_the_one_that_counts() {
    let env = env().await;
    create_job(&env, "shortened", Some(3600), false).await;
    finish(&env, "shortened", true).await;
    create_job(&env, "extended", Some(5), false).await;
    finish(&env, "extended", true).await;
    set_ttl(&env, "extended", 3600).await;
    create_job(&env, "sentinel", Some(6), false).await;
    finish(&env, "sentinel", true).await;

    gone(&env, "sentinel").await;
    kept(&env, "extended").await;
    kept(&env, "shortened").await;

    set_ttl(&env, "shortened", 1).await;
    gone(&env, "shortened").await;
    kept(&env, "extended").await;
}
