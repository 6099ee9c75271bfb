//! The restart invariant: a Job (NonIndexed or Indexed) of 20
//! completions, 5 at a time, whose pods run to completion in kube-sim's
//! kubelet and some of which fail, finishes with `status.succeeded` and `status.failed` equal to the
//! pods that really ended Succeeded and Failed, each counted once, however
//! often `kcm-rs` is killed with SIGKILL mid-run, its pod creates refused
//! or its watches dropped. A recorder watches every pod and Job state; at
//! every pod event no more than `parallelism` of the Job's pods are active,
//! and at every Job state its counts never run ahead of the pods.
//!
//! A Job's template is the same for every pod, so which pods fail is
//! decided as a workload's own run would decide it: a chaos watch patches
//! `kube-sim.io/exit-code: "1"` onto every third pod the moment it appears,
//! before its container exits (a pod the patch reaches too late simply
//! succeeds; the counts come from what the pods really did).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::TryStreamExt;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, ListParams, Patch, PatchParams};
use kube::runtime::watcher;
use kube_sim::testing::{Patience, kubectl_ok_with_stdin, wait_for};
use serde_json::json;

use crate::common::recorder::{Recorder, Seen};
use crate::common::{Env, PATIENCE, failing_pod_creates, spawn, start};

const NS: &str = "default";
const COMPLETIONS: usize = 20;
const PARALLELISM: usize = 5;
const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";

/// The whole Job: 20 pods of 2 s, a third of them failing (each failure
/// since the last success doubles the 10 s wait before the next creates),
/// on a machine shared with other tests.
const RUN: Patience = Patience { deadline: Duration::from_secs(300), recheck: PATIENCE.recheck };

/// How a pod of the Job ended, if it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Active,
    Succeeded,
    /// Failed, or deleted (marked for deletion) before it succeeded, as
    /// the controller counts it.
    Failed,
}

fn outcome(state: &Seen) -> Outcome {
    let pod: Pod = state.typed();
    match pod.status.as_ref().and_then(|s| s.phase.as_deref()) {
        Some("Succeeded") => Outcome::Succeeded,
        Some("Failed") => Outcome::Failed,
        _ if state.deleted || pod.metadata.deletion_timestamp.is_some() => Outcome::Failed,
        _ => Outcome::Active,
    }
}

fn is_pod_of(state: &Seen, job: &str) -> bool {
    state.object.metadata.labels.as_ref().and_then(|l| l.get(JOB_NAME_LABEL)).map(String::as_str) == Some(job)
}

fn is_job(state: &Seen, job: &str) -> bool {
    state.object.metadata.name.as_deref() == Some(job)
}

/// Every state of the Jobs and of the pods, each from its own watch.
struct Recorders {
    pods: Recorder,
    jobs: Recorder,
}

impl Recorders {
    async fn start(env: &Env) -> Self {
        let pods = Recorder::start(env, &[ApiResource::erase::<Pod>(&())]).await;
        Self { pods, jobs: Recorder::start(env, &[ApiResource::erase::<Job>(&())]).await }
    }
}

/// The pods' outcomes after every state the recorder saw, in resourceVersion
/// order (kube-sim's versions are global), with the Job's states between.
struct Replay {
    /// Each pod's outcome, by uid; a pod once finished stays so.
    pods: BTreeMap<String, Outcome>,
}

impl Replay {
    fn new() -> Self {
        Self { pods: BTreeMap::new() }
    }

    fn apply(&mut self, state: &Seen) {
        let now = outcome(state);
        let entry = self.pods.entry(state.uid().to_owned()).or_insert(Outcome::Active);
        if *entry == Outcome::Active || now == Outcome::Succeeded {
            *entry = now;
        }
    }

    fn count(&self, outcome: Outcome) -> usize {
        self.pods.values().filter(|o| **o == outcome).count()
    }
}

/// Replays every recorded state of `job` and its pods: the largest number
/// of its pods active at once (at any pod event), and any Job state whose
/// counts ran ahead of the pods or went down. Gives the final replay.
fn replay(recorders: &Recorders, job: &str) -> (usize, Vec<String>, Replay) {
    let pods = recorders.pods.all().into_iter().filter(|s| is_pod_of(s, job)).map(|s| (s, false));
    let jobs = recorders.jobs.all().into_iter().filter(|s| is_job(s, job)).map(|s| (s, true));
    let mut states: Vec<(Seen, bool)> = pods.chain(jobs).collect();
    states.sort_by_key(|(s, _)| s.rv);
    let (mut replay, mut most_active, mut wrong) = (Replay::new(), 0, Vec::new());
    let mut last_counts = (0, 0);
    for (state, is_job) in &states {
        if *is_job {
            let status = state.typed::<Job>().status.unwrap_or_default();
            let counts = (count(status.succeeded), count(status.failed));
            let (succeeded, failed) = (replay.count(Outcome::Succeeded), replay.count(Outcome::Failed));
            if counts.0 > succeeded || counts.1 > failed {
                wrong.push(format!("at {}: counted {counts:?}, pods ended ({succeeded}, {failed})", state.rv));
            }
            if counts.0 < last_counts.0 || counts.1 < last_counts.1 {
                wrong.push(format!("at {}: counts went from {last_counts:?} to {counts:?}", state.rv));
            }
            last_counts = counts;
        } else {
            replay.apply(state);
            most_active = most_active.max(replay.count(Outcome::Active));
        }
    }
    (most_active, wrong, replay)
}

fn count(n: Option<i32>) -> usize {
    usize::try_from(n.unwrap_or(0)).expect("a count is not negative")
}

/// Creates the Job with kubectl: pods exit 0 two seconds after they start
/// (`restartPolicy: Never`), a backoff limit the failures stay under, in
/// `completionMode` `mode`.
async fn create_job(env: &Env, name: &str, mode: &str) {
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "completions": COMPLETIONS, "parallelism": PARALLELISM, "backoffLimit": 100,
            "completionMode": mode,
            "template": {
                "metadata": {"annotations": {"kube-sim.io/exit-after": "2s", "kube-sim.io/exit-code": "0"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "work", "image": "busybox"}]},
            },
        },
    });
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &job.to_string()).await;
}

/// The chaos: every third pod of `job`, in the order they appear, gets
/// `kube-sim.io/exit-code: "1"`.
fn fail_every_third_pod(env: &Env, job: &str) -> tokio::task::JoinHandle<()> {
    let api: Api<Pod> = Api::namespaced(env.client.clone(), NS);
    let stream = watcher(api.clone(), watcher::Config::default().labels(&format!("{JOB_NAME_LABEL}={job}")));
    tokio::spawn(async move {
        futures::pin_mut!(stream);
        let mut seen = BTreeSet::new();
        while let Ok(Some(event)) = stream.try_next().await {
            let (watcher::Event::Apply(pod) | watcher::Event::InitApply(pod)) = event else { continue };
            let name = pod.metadata.name.clone().unwrap_or_default();
            if seen.insert(name.clone()) && seen.len() % 3 == 2 {
                let fail = json!({"metadata": {"annotations": {"kube-sim.io/exit-code": "1"}}});
                // A pod already gone or finished keeps what it did.
                let _ = api.patch(&name, &PatchParams::default(), &Patch::Merge(fail)).await;
            }
        }
    })
}

/// Kills `kcm-rs` with SIGKILL and starts a new process, which remembers
/// nothing of the old one.
async fn kill_and_restart(env: &mut Env) {
    env.daemon.kill().await.expect("kcm-rs killed");
    env.daemon = spawn(&env.kubeconfig);
}

/// Waits until at least `finished` of the Job's pods have ended and some
/// are still active.
async fn wait_mid_run(env: &Env, recorders: &Recorders, job: &str, finished: usize) {
    wait_for(&env.cluster, RUN, &format!("{finished} pods of {job} finished, others active"), || async {
        let (_, _, now) = replay(recorders, job);
        let (done, active) = (now.count(Outcome::Succeeded) + now.count(Outcome::Failed), now.count(Outcome::Active));
        if done >= finished && active > 0 { Ok(()) } else { Err(format!("{done} finished, {active} active")) }
    })
    .await;
}

/// Waits until the Job is Complete with nothing left to count and the
/// recorder has seen every pod as it is now; then checks the counts against
/// the pods and the invariants held at every event.
async fn assert_counted_once(env: &Env, recorders: &Recorders, name: &str) {
    let jobs: Api<Job> = Api::namespaced(env.client.clone(), NS);
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), NS);
    let job = wait_for(&env.cluster, RUN, &format!("{name} Complete, every pod counted"), || async {
        let job = jobs.get(name).await.map_err(|e| e.to_string())?;
        let status = job.status.clone().unwrap_or_default();
        let complete = status.conditions.iter().flatten().any(|c| c.type_ == "Complete" && c.status == "True");
        let uncounted = status.uncounted_terminated_pods.clone().unwrap_or_default();
        let pending = uncounted.succeeded.unwrap_or_default().len() + uncounted.failed.unwrap_or_default().len();
        let listed = pods.list(&ListParams::default().labels(&format!("{JOB_NAME_LABEL}={name}"))).await;
        let listed = listed.map_err(|e| e.to_string())?.items;
        let tracked = listed.iter().filter(|p| p.metadata.finalizers.iter().flatten().any(|f| f == TRACKING_FINALIZER));
        let tracked = tracked.count();
        let seen_version = |p: &Pod| {
            let uid = p.metadata.uid.as_deref().unwrap_or_default();
            let rv: u64 = p.metadata.resource_version.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0);
            recorders.pods.states(uid).iter().any(|s| s.rv >= rv)
        };
        let unseen = listed.iter().filter(|p| !seen_version(p)).count();
        let job_rv: u64 = job.metadata.resource_version.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0);
        let job_seen = recorders.jobs.all().iter().any(|s| is_job(s, name) && s.rv >= job_rv);
        if complete && pending == 0 && tracked == 0 && unseen == 0 && job_seen {
            Ok(job)
        } else {
            Err(format!("complete {complete}, {pending} uncounted, {tracked} tracked, {unseen} unseen: {status:?}"))
        }
    })
    .await;

    let (most_active, wrong, pods_ended) = replay(recorders, name);
    assert!(most_active <= PARALLELISM, "{most_active} pods of {name} active at once, parallelism {PARALLELISM}");
    assert!(wrong.is_empty(), "the Job's counts ran ahead of its pods or went down: {wrong:#?}");
    let status = job.status.unwrap_or_default();
    let (succeeded, failed) = (pods_ended.count(Outcome::Succeeded), pods_ended.count(Outcome::Failed));
    assert_eq!(pods_ended.count(Outcome::Active), 0, "pods left active: {:?}", pods_ended.pods);
    assert_eq!((count(status.succeeded), count(status.failed)), (succeeded, failed), "{status:?}");
    assert_eq!(succeeded, COMPLETIONS);
    assert!(failed > 0, "no pod failed: the failures were not exercised");
    assert_eq!(count(status.active), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_killed_mid_run_counts_every_pod_once() {
    let mut env = start().await;
    let recorders = Recorders::start(&env).await;
    let chaos = fail_every_third_pod(&env, "killed");
    create_job(&env, "killed", "NonIndexed").await;
    for finished in [3, 8, 14] {
        wait_mid_run(&env, &recorders, "killed", finished).await;
        kill_and_restart(&mut env).await;
    }
    assert_counted_once(&env, &recorders, "killed").await;
    chaos.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_creates_dropped_watches_and_a_kill_converge_counting_every_pod_once() {
    let mut env = start().await;
    let recorders = Recorders::start(&env).await;
    env.cluster.controls().set_faults(failing_pod_creates(5)).expect("faults set");
    let chaos = fail_every_third_pod(&env, "faulty");
    create_job(&env, "faulty", "NonIndexed").await;
    wait_mid_run(&env, &recorders, "faulty", 3).await;
    env.cluster.controls().drop_watches();
    wait_mid_run(&env, &recorders, "faulty", 8).await;
    kill_and_restart(&mut env).await;
    env.cluster.controls().drop_watches();
    wait_mid_run(&env, &recorders, "faulty", 13).await;
    env.cluster.controls().drop_watches();
    assert_counted_once(&env, &recorders, "faulty").await;
    let refused = env.cluster.controls().stats();
    let refused: u64 =
        refused.iter().filter(|s| s.verb == "create" && s.resource == "pods" && s.code == 500).map(|s| s.count).sum();
    assert!(refused > 0, "no pod create was refused: the faults were not exercised");
    chaos.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_indexed_job_killed_mid_run_counts_every_pod_once() {
    let mut env = start().await;
    let recorders = Recorders::start(&env).await;
    let chaos = fail_every_third_pod(&env, "indexed");
    create_job(&env, "indexed", "Indexed").await;
    for finished in [4, 11] {
        wait_mid_run(&env, &recorders, "indexed", finished).await;
        kill_and_restart(&mut env).await;
    }
    assert_counted_once(&env, &recorders, "indexed").await;
    let completed = jobs_status(&env, "indexed").await.completed_indexes;
    assert_eq!(completed.as_deref(), Some("0-19"));
    chaos.abort();
}

async fn jobs_status(env: &Env, name: &str) -> k8s_openapi::api::batch::v1::JobStatus {
    let jobs: Api<Job> = Api::namespaced(env.client.clone(), NS);
    jobs.get(name).await.expect("Job read").status.unwrap_or_default()
}
