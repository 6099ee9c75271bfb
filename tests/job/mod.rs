//! The Job controller end to end, ported from upstream's
//! `test/e2e/apps/job.go`: the real `kcm-rs` binary against kube-sim,
//! whose kubelet runs a pod's containers to completion after
//! `kube-sim.io/exit-after` with `kube-sim.io/exit-code`, and (but for the
//! tests that disturb kcm-rs with kube-sim's controls) against the
//! testbed, whose kwok stages do the same. Jobs are created
//! with `kubectl apply`; every test watches the Job's pods and checks, at
//! every event, that no more than `parallelism` of them are active at once.

/// The pod-recreation backoff: no status write refused while a replacement waits.
mod backoff;
/// More of upstream's `job.go` scenarios, under invariants on every pod event.
mod e2e;
/// The restart invariant: kcm-rs killed mid-run, creates refused, watches
/// dropped; every pod that ended is counted once.
mod restart;
/// A Job cache lagging behind the pod cache: a Job written finished gets no new pod.
mod stale;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::TryStreamExt;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use kube::runtime::watcher;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};
use serde_json::{Value, json};

use crate::common::{Env, PATIENCE, disturb, events, on_both, start};

const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";

// === utils ===

/// Job `name` whose pods exit `exit_code` after `exit_after`, restart
/// policy Never, with `spec` merged over it.
fn manifest(name: &str, exit_after: &str, exit_code: i32, spec: Value) -> String {
    let mut job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"annotations": {
                    "kube-sim.io/exit-after": exit_after,
                    "kube-sim.io/exit-code": exit_code.to_string(),
                }},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    });
    if let (Some(base), Some(extra)) = (job["spec"].as_object_mut(), spec.as_object()) {
        base.extend(extra.clone());
    }
    job.to_string()
}

async fn apply(env: &Env, manifest: &str) {
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-n", &env.ns, "-f", "-"], manifest).await;
}

async fn job(env: &Env, name: &str) -> Job {
    Api::<Job>::namespaced(env.client.clone(), &env.ns).get(name).await.expect("Job read")
}

/// Waits until the Job has condition `type_` True, and gives the Job.
async fn wait_condition(env: &Env, name: &str, type_: &str) -> Job {
    wait_for(&env.cluster, PATIENCE, &format!("{name} to be {type_}"), || async move {
        let job = job(env, name).await;
        let status = job.status.clone().unwrap_or_default();
        let met = status.conditions.iter().flatten().any(|c| c.type_ == type_ && c.status == "True");
        if met { Ok(job) } else { Err(format!("{status:?}")) }
    })
    .await
}

/// The Job's pods (by the `job-name` label the API server sets).
async fn pods(env: &Env, name: &str) -> Vec<Pod> {
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    api.list(&ListParams::default().labels(&format!("batch.kubernetes.io/job-name={name}"))).await.expect("pods").items
}

fn is_active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("");
    pod.metadata.deletion_timestamp.is_none() && phase != "Succeeded" && phase != "Failed"
}

/// Watches the Job's pods and records every moment more than
/// `parallelism` were active.
struct Checker {
    violations: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Checker {
    fn start(env: &Env, name: &str, parallelism: usize) -> Self {
        let violations = Arc::new(Mutex::new(Vec::new()));
        let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
        let stream = watcher(api, watcher::Config::default().labels(&format!("batch.kubernetes.io/job-name={name}")));
        let seen = violations.clone();
        let task = tokio::spawn(async move {
            let mut pods: BTreeMap<String, Pod> = BTreeMap::new();
            futures::pin_mut!(stream);
            while let Ok(Some(event)) = stream.try_next().await {
                match event {
                    watcher::Event::InitApply(p) | watcher::Event::Apply(p) => {
                        pods.insert(p.metadata.name.clone().unwrap_or_default(), p);
                    }
                    watcher::Event::Delete(p) => {
                        pods.remove(&p.metadata.name.clone().unwrap_or_default());
                    }
                    watcher::Event::Init | watcher::Event::InitDone => {}
                }
                let active: Vec<&String> = pods.iter().filter(|(_, p)| is_active(p)).map(|(n, _)| n).collect();
                if active.len() > parallelism {
                    seen.lock().expect("lock").push(format!("{} active: {active:?}", active.len()));
                }
            }
        });
        Self { violations, task }
    }

    fn finish(self) {
        self.task.abort();
        let violations = self.violations.lock().expect("lock").clone();
        assert!(violations.is_empty(), "more than parallelism active: {violations:#?}");
    }
}

/// Every pod of the Job was counted: none keeps the tracking finalizer.
async fn wait_finalizers_removed(env: &Env, name: &str) {
    wait_for(&env.cluster, PATIENCE, &format!("{name}'s pods without the tracking finalizer"), || async move {
        let tracked: Vec<String> = pods(env, name)
            .await
            .into_iter()
            .filter(|p| p.metadata.finalizers.iter().flatten().any(|f| f == TRACKING_FINALIZER))
            .map(|p| p.metadata.name.unwrap_or_default())
            .collect();
        if tracked.is_empty() { Ok(()) } else { Err(format!("{tracked:?}")) }
    })
    .await;
}

/// Waits until `count` events of `reason` were recorded on the Job.
async fn wait_events(env: &Env, name: &str, reason: &str, count: usize) {
    wait_for(&env.cluster, PATIENCE, &format!("{count} {reason} events on {name}"), || async move {
        let seen = events(env, &env.ns, name, reason).await.len();
        if seen == count { Ok(()) } else { Err(format!("{seen}")) }
    })
    .await;
}

// === tests ===

on_both!(
    a_job_runs_to_completion_when_tasks_succeed,
    an_indexed_job_completes_every_index,
    a_job_fails_once_it_exceeds_its_backoff_limit,
);

/// Upstream "should run a job to completion when tasks succeed".
async fn a_job_runs_to_completion_when_tasks_succeed() {
    let env = start().await;
    let checker = Checker::start(&env, "all-succeed", 2);
    apply(&env, &manifest("all-succeed", "500ms", 0, json!({"completions": 4, "parallelism": 2}))).await;
    let done = wait_condition(&env, "all-succeed", "Complete").await;
    let status = done.status.clone().unwrap_or_default();
    assert_eq!((status.succeeded, status.failed.unwrap_or(0)), (Some(4), 0), "{status:?}");
    assert_eq!(status.active.unwrap_or(0), 0);
    assert!(status.completion_time.is_some() && status.start_time.is_some());
    let conditions: Vec<(String, Option<String>)> =
        status.conditions.iter().flatten().map(|c| (c.type_.clone(), c.reason.clone())).collect();
    assert_eq!(
        conditions,
        [
            ("SuccessCriteriaMet".to_owned(), Some("CompletionsReached".to_owned())),
            ("Complete".to_owned(), Some("CompletionsReached".to_owned())),
        ]
    );
    wait_finalizers_removed(&env, "all-succeed").await;
    assert_eq!(pods(&env, "all-succeed").await.len(), 4, "one pod per completion");
    wait_events(&env, "all-succeed", "Completed", 1).await;
    wait_events(&env, "all-succeed", "SuccessfulCreate", 4).await;
    let out = kubectl_ok(&env.kubeconfig, &["get", "job", "all-succeed", "-n", &env.ns]).await;
    assert!(out.contains("Complete") && out.contains("4/4"), "{out}");
    checker.finish();
}

/// Upstream "should create pods for an Indexed job with completion
/// indexes and specified hostname".
async fn an_indexed_job_completes_every_index() {
    let env = start().await;
    let checker = Checker::start(&env, "indexed", 3);
    let spec = json!({"completions": 3, "parallelism": 3, "completionMode": "Indexed"});
    apply(&env, &manifest("indexed", "500ms", 0, spec)).await;
    let done = wait_condition(&env, "indexed", "Complete").await;
    let status = done.status.unwrap_or_default();
    assert_eq!(status.completed_indexes.as_deref(), Some("0-2"));
    assert_eq!(status.succeeded, Some(3));
    let mut seen: Vec<(String, String, String)> = pods(&env, "indexed")
        .await
        .iter()
        .map(|p| {
            let annotations = p.metadata.annotations.clone().unwrap_or_default();
            let index = annotations.get("batch.kubernetes.io/job-completion-index").cloned().unwrap_or_default();
            let label = p.metadata.labels.clone().unwrap_or_default();
            let labelled = label.get("batch.kubernetes.io/job-completion-index").cloned().unwrap_or_default();
            let hostname = p.spec.as_ref().and_then(|s| s.hostname.clone()).unwrap_or_default();
            assert_eq!(index, labelled);
            assert!(p.metadata.name.as_deref().unwrap_or("").starts_with(&format!("indexed-{index}-")));
            (index, hostname, labelled)
        })
        .collect();
    seen.sort();
    let want: Vec<(String, String, String)> =
        (0..3).map(|i| (i.to_string(), format!("indexed-{i}"), i.to_string())).collect();
    assert_eq!(seen, want);
    checker.finish();
}

/// Upstream "should fail to exceed backoffLimit": every pod fails; the
/// Job is recreated once after the 10 s backoff, then fails.
async fn a_job_fails_once_it_exceeds_its_backoff_limit() {
    let env = start().await;
    let checker = Checker::start(&env, "backoff", 1);
    apply(&env, &manifest("backoff", "200ms", 1, json!({"backoffLimit": 1}))).await;
    let failed = wait_condition(&env, "backoff", "Failed").await;
    let status = failed.status.unwrap_or_default();
    let condition = status.conditions.iter().flatten().find(|c| c.type_ == "Failed").cloned().expect("Failed");
    assert_eq!(condition.reason.as_deref(), Some("BackoffLimitExceeded"));
    assert_eq!(condition.message.as_deref(), Some("Job has reached the specified backoff limit"));
    assert_eq!(status.failed, Some(2), "{status:?}");
    assert_eq!(status.succeeded.unwrap_or(0), 0);
    assert!(status.completion_time.is_none());
    wait_finalizers_removed(&env, "backoff").await;
    assert_eq!(pods(&env, "backoff").await.len(), 2);
    wait_events(&env, "backoff", "BackoffLimitExceeded", 1).await;
    checker.finish();
}

/// The invariant across restarts: kcm-rs is disturbed mid-run
/// (watches dropped, history compacted, the process killed and started
/// anew) and the Job's counts still equal the pods that really ended so.
#[tokio::test]
async fn counts_survive_a_restart_mid_run() {
    let mut env = start().await;
    let checker = Checker::start(&env, "restarted", 3);
    apply(&env, &manifest("restarted", "1s", 0, json!({"completions": 6, "parallelism": 3}))).await;
    wait_for(&env.cluster, PATIENCE, "a first pod to succeed", || async {
        let done = pods(&env, "restarted").await.iter().filter(|p| !is_active(p)).count();
        if done > 0 { Ok(()) } else { Err("none yet".to_owned()) }
    })
    .await;
    disturb(&mut env).await;
    let done = wait_condition(&env, "restarted", "Complete").await;
    let status = done.status.unwrap_or_default();
    wait_finalizers_removed(&env, "restarted").await;
    let succeeded = pods(&env, "restarted")
        .await
        .iter()
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Succeeded"))
        .count();
    assert_eq!(status.succeeded, Some(i32::try_from(succeeded).expect("few pods")), "{status:?}");
    assert_eq!(status.succeeded, Some(6));
    assert_eq!(status.failed.unwrap_or(0), 0);
    checker.finish();
}
