//! kcm-rs's Job cache lagging behind its pod cache: kube-sim holds back
//! the Job watch (as a Job watch that relisted later than the pods' does)
//! while the Job's pods end. kcm-rs counts them, removes their tracking
//! finalizers and writes the Job finished; the pods' next sync then reads
//! the Job as it was before, beside pods that no finalizer keeps counted.
//! Upstream's `TestDelayedJobUpdateEvent` (kubernetes#130103): the Job
//! must get no new pod, whether it completed or failed.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use kube_sim::testing::wait_for;
use serde_json::{Value, json};

use super::{apply, job, manifest, pods, wait_condition};
use crate::common::{Env, PATIENCE, default_service_account, start};

// === utils ===

/// The sum of the samples of `metric` whose labels contain `labels`.
fn sum(metrics: &str, metric: &str, labels: &str) -> f64 {
    metrics
        .lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")) && l.contains(labels))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The Job syncs that decided nothing: the `job` queue counts every key
/// it handed out and got back (`workqueue_work_duration_seconds`), the Job
/// controller only the syncs it did not skip
/// (`job_controller_job_syncs_total`, as upstream's).
async fn skipped_syncs(env: &Env) -> f64 {
    let (_, metrics) = env.scrape("/metrics").await;
    sum(&metrics, "workqueue_work_duration_seconds_count", "name=\"job\"")
        - sum(&metrics, "job_controller_job_syncs_total", "")
}

/// Waits until the Job has `active` pods, all Ready, in its status.
async fn wait_running(env: &Env, name: &str, active: i32) {
    wait_for(&env.cluster, PATIENCE, &format!("{name} running {active} Ready pods"), || async move {
        let status = job(env, name).await.status.unwrap_or_default();
        let running = status.active == Some(active) && status.ready == Some(active);
        if running { Ok(()) } else { Err(format!("{status:?}")) }
    })
    .await;
}

/// Ends every pod of the Job in `phase`; the pods' watch is held
/// meanwhile, so that kcm-rs sees them all end at once.
async fn end_pods(env: &Env, name: &str, phase: &str) {
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    env.cluster.controls().hold_watches("pods");
    for pod in pods(env, name).await {
        let status = json!({"status": {"phase": phase}});
        let name = pod.metadata.name.unwrap_or_default();
        api.patch_status(&name, &PatchParams::default(), &Patch::Merge(status)).await.expect("pod ended");
    }
    env.cluster.controls().release_watches("pods");
}

/// Runs the Job `name` (`spec`, `running` pods) until kcm-rs holds it
/// running, holds the Job watch back, ends the pods in `phase` and waits
/// for the Job's `terminal` condition; then, until the pods' next sync has
/// come and gone (skipped, or a new pod created), and again once the Job
/// watch is released, the Job has its first pods only.
async fn ends_with_its_first_pods(name: &str, spec: Value, running: i32, phase: &str, terminal: &str) {
    let env = start().await;
    default_service_account(&env.cluster, &env.client, &env.ns).await;
    apply(&env, &manifest(name, "1h", 0, spec)).await;
    wait_running(&env, name, running).await;
    let first = pods(&env, name).await.len();

    env.cluster.controls().hold_watches("jobs");
    end_pods(&env, name, phase).await;
    wait_condition(&env, name, terminal).await;
    let env = &env;
    wait_for(&env.cluster, PATIENCE, "the pods' sync beside the stale Job", || async move {
        let (skipped, now) = (skipped_syncs(env).await, pods(env, name).await.len());
        if skipped >= 1.0 || now > first { Ok(()) } else { Err(format!("{skipped} skipped, {now} pods")) }
    })
    .await;
    assert_eq!(pods(env, name).await.len(), first, "{name}: a pod started after the Job was written {terminal}");

    let before = skipped_syncs(env).await;
    env.cluster.controls().release_watches("jobs");
    wait_for(&env.cluster, PATIENCE, "the finished Job's sync", || async move {
        let skipped = skipped_syncs(env).await;
        if skipped > before { Ok(()) } else { Err(format!("{skipped} skipped")) }
    })
    .await;
    assert_eq!(pods(env, name).await.len(), first, "{name}: a pod started once the Job was seen {terminal}");
    let status = job(env, name).await.status.unwrap_or_default();
    let ended = i32::try_from(first).expect("few pods");
    let counts = if phase == "Succeeded" { (ended, 0) } else { (0, ended) };
    assert_eq!((status.succeeded.unwrap_or(0), status.failed.unwrap_or(0)), counts, "{status:?}");
}

// === tests ===

/// Upstream "job succeeded event delayed": one pod, succeeded.
#[tokio::test]
async fn a_complete_job_starts_no_pod_while_its_cache_lags() {
    ends_with_its_first_pods("delayed-complete", json!({}), 1, "Succeeded", "Complete").await;
}

/// Upstream "job failed event delayed", as the issue saw it: an Indexed
/// Job whose two pods failed with `backoffLimit: 0`.
#[tokio::test]
async fn a_failed_indexed_job_starts_no_pod_while_its_cache_lags() {
    let spec = json!({"completionMode": "Indexed", "completions": 2, "parallelism": 2, "backoffLimit": 0});
    ends_with_its_first_pods("delayed-failed", spec, 2, "Failed", "Failed").await;
}
