//! The pod-recreation backoff and the Job's status (kubernetes#139428,
//! fixed by #139457): while a failed pod's replacement waits for its
//! backoff, the pod still running stays active in the status. kube-sim,
//! as the API server, refuses a Job status with more ready pods than
//! active (422 `cannot set more ready pods than active`); such a refusal
//! would also hold back the counting of the failed pod.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use kube_sim::testing::wait_for;
use serde_json::json;

use super::{apply, job, manifest, pods};
use crate::common::{Env, PATIENCE, default_service_account, start};

/// The Job status writes kube-sim refused as invalid.
fn refused_status_writes(env: &Env) -> u64 {
    let stats = env.cluster.controls().stats();
    stats.iter().filter(|l| l.resource == "jobs/status" && l.code == 422).map(|l| l.count).sum()
}

/// Two Ready pods of three completions; one fails: its replacement waits
/// the 10 s backoff, and every status write meanwhile is accepted.
#[tokio::test]
async fn no_status_write_is_refused_while_a_replacement_waits_for_its_backoff() {
    let env = start().await;
    default_service_account(&env.cluster, &env.client, &env.ns).await;
    apply(&env, &manifest("backoff-ready", "1h", 0, json!({"completions": 3, "parallelism": 2}))).await;
    let env = &env;
    wait_for(&env.cluster, PATIENCE, "two Ready pods", || async move {
        let status = job(env, "backoff-ready").await.status.unwrap_or_default();
        if (status.active, status.ready) == (Some(2), Some(2)) { Ok(()) } else { Err(format!("{status:?}")) }
    })
    .await;

    let first = pods(env, "backoff-ready").await;
    let victim = first[0].metadata.name.clone().unwrap_or_default();
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let failed = json!({"status": {"phase": "Failed"}});
    api.patch_status(&victim, &PatchParams::default(), &Patch::Merge(failed)).await.expect("pod failed");

    wait_for(&env.cluster, PATIENCE, "the replacement, after the backoff", || async move {
        let status = job(env, "backoff-ready").await.status.unwrap_or_default();
        let now = pods(env, "backoff-ready").await.len();
        let replaced = now == 3 && status.active == Some(2) && status.failed == Some(1);
        if replaced { Ok(()) } else { Err(format!("{now} pods, {status:?}")) }
    })
    .await;
    assert_eq!(refused_status_writes(env), 0, "status writes refused during the backoff");
}
