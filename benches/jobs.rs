//! Short Jobs at scale (`cargo bench --bench jobs`): the release `kcm-rs`
//! binary with its default controllers and no client-side QPS limit,
//! against an in-process kube-sim whose kubelet runs each Job's one
//! container to completion a second after it starts
//! (`kube-sim.io/exit-after: 1s`).
//!
//! 10,000 Jobs (one completion each) are created 32 at a time; it prints
//! the time from the first create until every Job has its `Complete`
//! condition and `status.succeeded: 1` (as `kubectl wait
//! --for=condition=Complete` reads it), the writes the job controller's
//! own client made per Job (kube-sim's request counts by user agent), and
//! kcm-rs's resident memory. `KCM_SCALE` scales the Jobs (0.1 for a quick
//! look). The figures go into docs/benchmarks.md.

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, ListParams, PostParams};
use kube_sim::{Sim, SimConfig};
use serde_json::json;

mod common;

/// Jobs at `KCM_SCALE=1`.
const JOBS: usize = 10_000;
/// Nodes the Jobs' pods run on.
const NODES: usize = 100;
/// Give up after this long.
const LIMIT: Duration = Duration::from_secs(1_800);
/// Requests the benchmark keeps in flight while creating.
const CONCURRENCY: usize = 32;
/// The namespace everything lives in.
const NAMESPACE: &str = "default";
/// Verbs that write.
const WRITES: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];
/// The user-agent suffix of the job controller's client.
const JOB_CLIENT: &str = "job-controller";

/// Writes made so far by the client whose user agent ends in `client`.
fn writes_by(sim: &Sim, client: &str) -> u64 {
    let stats = sim.controls().stats();
    let mine = stats.iter().filter(|l| l.user_agent.ends_with(client) && WRITES.contains(&l.verb.as_str()));
    mine.map(|l| l.count).sum()
}

fn job(i: usize) -> Job {
    serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": format!("short-{i:05}"), "namespace": NAMESPACE},
        "spec": {
            "template": {
                "metadata": {"annotations": {"kube-sim.io/exit-after": "1s"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "work", "image": "registry.example.com/work:1.0"}],
                },
            },
        },
    }))
    .expect("a valid Job")
}

/// How many Jobs are complete: the `Complete` condition true and one pod
/// succeeded.
async fn complete(jobs: &Api<Job>) -> usize {
    let list = jobs.list(&ListParams::default()).await.expect("Jobs listed").items;
    list.iter()
        .filter(|j| {
            let status = j.status.clone().unwrap_or_default();
            let done =
                status.conditions.unwrap_or_default().iter().any(|c| c.type_ == "Complete" && c.status == "True");
            done && status.succeeded == Some(1)
        })
        .count()
}

#[tokio::main]
async fn main() {
    let count = common::scaled(JOBS);
    let sim = Sim::start(SimConfig { nodes: NODES, history: 400_000, ..SimConfig::default() })
        .await
        .expect("kube-sim starts");
    let (_dir, kubeconfig) = common::kubeconfig(&sim);
    let mut daemon = common::kcm_rs(&kubeconfig, &["--kube-api-qps=0"]);
    let pid = daemon.id().expect("running");
    let jobs: Api<Job> = Api::namespaced(sim.client().expect("client"), NAMESPACE);

    let before = writes_by(&sim, JOB_CLIENT);
    let start = Instant::now();
    futures::stream::iter(0..count)
        .map(|i| {
            let api = jobs.clone();
            async move { api.create(&PostParams::default(), &job(i)).await.expect("Job created") }
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<_>>()
        .await;
    let created = start.elapsed();
    let mut peak = 0.0f64;
    let mut next_report = Duration::from_secs(30);
    loop {
        peak = peak.max(common::resident_mib(pid));
        let done = complete(&jobs).await;
        if done == count {
            break;
        }
        if start.elapsed() >= next_report {
            next_report += Duration::from_secs(30);
            println!("  {:.0} s: {done} of {count} Jobs complete", start.elapsed().as_secs_f64());
        }
        assert!(start.elapsed() < LIMIT, "{done} of {count} Jobs complete after {LIMIT:?}");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let took = start.elapsed();
    let writes = writes_by(&sim, JOB_CLIENT) - before;
    println!(
        "jobs, {count} short Jobs: created in {:.1} s, all complete after {:.1} s; job controller writes per Job {:.2}; kcm-rs resident {:.0} MiB (peak {:.0} MiB)",
        created.as_secs_f64(),
        took.as_secs_f64(),
        writes as f64 / count as f64,
        common::resident_mib(pid),
        peak,
    );
    let _ = daemon.kill().await;
}
