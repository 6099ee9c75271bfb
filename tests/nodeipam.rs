//! The node IPAM controller end to end: the real `kcm-rs` binary (only
//! `nodeipam` selected) with `--allocate-node-cidrs`, against kube-sim and
//! the testbed, nodes registered through the API as a kubelet registers
//! them.
//!
//! `--cluster-cidr=10.244.0.0/16` cut into `/18`s gives four node CIDRs;
//! `--service-cluster-ip-range=10.244.0.0/18` takes the first (as would
//! the seeded nodes, whose `10.244.<i>.0/24` lie in it), so three are
//! free. Three new nodes get `10.244.64.0/18`, `10.244.128.0/18` and
//! `10.244.192.0/18` in turn; a fourth gets none and the
//! `CIDRNotAvailable` event; the first deleted, the fourth (touched, to be
//! synced at once rather than after its backoff) gets its CIDR. The
//! cidrset metrics say so. Cluster CIDRs upstream refuses end the process
//! with upstream's message. Every wait is on a condition.

use std::process::Stdio;

use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube_sim::SimConfig;
use kube_sim::testing::wait_for;
use serde_json::json;
use tokio::process::Command;

use crate::common::{
    Backend, Env, PATIENCE, backend, events, free_port, on_both, sim_with_kubeconfig, start_on_testbed,
    start_with_flags,
};

const FLAGS: &[&str] = &[
    "--controllers=nodeipam",
    "--allocate-node-cidrs",
    "--cluster-cidr=10.244.0.0/16",
    "--node-cidr-mask-size=18",
    "--service-cluster-ip-range=10.244.0.0/18",
];

/// The nodes this test registers, deleted when it ends (the testbed is
/// shared).
struct Nodes {
    api: Api<Node>,
    names: Vec<String>,
}

impl Nodes {
    /// Registers a node with no pod CIDR, as a kubelet does.
    async fn register(&mut self, name: &str) {
        let node: Node = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        }))
        .expect("a node");
        self.api.create(&PostParams::default(), &node).await.expect("node registered");
        self.names.push(name.to_owned());
    }

    async fn delete(&self, name: &str) {
        self.api.delete(name, &DeleteParams::default()).await.expect("node deleted");
    }

    async fn delete_all(&self) {
        for name in &self.names {
            let _ = self.api.delete(name, &DeleteParams::default()).await;
        }
    }
}

/// Waits until `name` has exactly `want` as `podCIDR` and `podCIDRs`.
async fn wait_for_pod_cidr(env: &Env, api: &Api<Node>, name: &str, want: &str) {
    wait_for(&env.cluster, PATIENCE, &format!("{name} given {want}"), || async {
        let node = api.get(name).await.map_err(|e| e.to_string())?;
        let spec = node.spec.unwrap_or_default();
        let seen = (spec.pod_cidr.clone(), spec.pod_cidrs.clone().unwrap_or_default());
        if seen == (Some(want.to_owned()), vec![want.to_owned()]) { Ok(()) } else { Err(format!("{seen:?}")) }
    })
    .await;
}

async fn allocates_reuses_and_runs_out() {
    let env = match backend() {
        Backend::Sim => start_with_flags(FLAGS).await,
        Backend::Testbed => start_on_testbed(FLAGS).await,
    };
    let api: Api<Node> = Api::all(env.client.clone());
    let mut nodes = Nodes { api: api.clone(), names: Vec::new() };
    let name = |n: &str| format!("ipam-{}-{n}", env.ns);
    let (a, b, c, d) = (name("a"), name("b"), name("c"), name("d"));

    nodes.register(&a).await;
    wait_for_pod_cidr(&env, &api, &a, "10.244.64.0/18").await;
    nodes.register(&b).await;
    wait_for_pod_cidr(&env, &api, &b, "10.244.128.0/18").await;
    nodes.register(&c).await;
    wait_for_pod_cidr(&env, &api, &c, "10.244.192.0/18").await;

    nodes.register(&d).await;
    let message = format!("Node {d} status is now: CIDRNotAvailable");
    let seen = wait_for(&env.cluster, PATIENCE, &format!("CIDRNotAvailable on {d}"), || async {
        let found = events(&env, "default", &d, "CIDRNotAvailable").await;
        found.into_iter().next().ok_or_else(|| "no event yet".to_owned())
    })
    .await;
    assert_eq!(seen.message.as_deref(), Some(message.as_str()));
    assert_eq!(seen.type_.as_deref(), Some("Normal"));
    assert_eq!(seen.source.and_then(|s| s.component).as_deref(), Some("cidrAllocator"));
    let spec = api.get(&d).await.expect("d").spec.unwrap_or_default();
    assert_eq!((spec.pod_cidr, spec.pod_cidrs), (None, None), "no CIDR was free for {d}");

    nodes.delete(&a).await;
    wait_for(&env.cluster, PATIENCE, &format!("{a} gone"), || async {
        match api.get_opt(&a).await.map_err(|e| e.to_string())? {
            None => Ok(()),
            Some(_) => Err("still there".to_owned()),
        }
    })
    .await;
    let touch = json!({"metadata": {"labels": {"kcm-rs.test/touched": "true"}}});
    api.patch(&d, &PatchParams::default(), &Patch::Merge(&touch)).await.expect("d touched");
    wait_for_pod_cidr(&env, &api, &d, "10.244.64.0/18").await;

    let (status, metrics) = env.scrape("/metrics").await;
    assert_eq!(status, 200);
    for line in [
        r#"node_ipam_controller_cirdset_max_cidrs{clusterCIDR="10.244.0.0/16"} 4"#,
        r#"node_ipam_controller_cidrset_usage_cidrs{clusterCIDR="10.244.0.0/16"} 1"#,
        r#"node_ipam_controller_cidrset_cidrs_releases_total{clusterCIDR="10.244.0.0/16"} 1"#,
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} missing from /metrics");
    }
    nodes.delete_all().await;
}

on_both!(allocates_reuses_and_runs_out);

/// Two IPv4 cluster CIDRs are no dual stack: the controller cannot be
/// built, and kcm-rs exits 1 with upstream's messages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_cidrs_upstream_refuses_end_the_process() {
    let (_sim, _dir, kubeconfig) = sim_with_kubeconfig(SimConfig::default()).await;
    let run = Command::new(env!("CARGO_BIN_EXE_kcm-rs"))
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .arg(format!("--secure-port={}", free_port()))
        .args(["--bind-address=127.0.0.1", "--leader-elect=false", "--controllers=nodeipam"])
        .args(["--allocate-node-cidrs", "--cluster-cidr=10.244.0.0/16,10.245.0.0/16"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(PATIENCE.deadline, run).await.expect("kcm-rs exits").expect("kcm-rs runs");
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    for line in [
        "Error initializing a controller",
        "len of ClusterCIDRs==2 and they are not configured as dual stack (at least one from each IPFamily",
        "Error building controllers",
    ] {
        assert!(log.contains(line), "the log lacks {line:?}:\n{log}");
    }
}
