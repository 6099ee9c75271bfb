//! A real Prometheus (Debian's `prometheus` package) scrapes a running
//! kcm-rs over HTTPS with the scrape job of
//! `deploy/prometheus/scrape-config.yaml`, and its HTTP API shows the target
//! up and the workqueue series of every controller queue.

use std::path::Path;
use std::process::Stdio;

use k8s_openapi::api::apps::v1::ReplicaSet;
use kube_sim::testing::wait_for;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::common::{Cluster, PATIENCE, free_port, on_both, start};

// === utils ===

/// The job of `deploy/prometheus/scrape-config.yaml` with its target
/// source replaced by `target`: the Kubernetes service discovery and the
/// relabelling that picks the kcm-rs Service out of it (all of it reads
/// `__meta_kubernetes_*` labels) give way to a static address, and the
/// bearer token is read from `token_file`. Scheme, path and TLS settings
/// are the file's.
fn adapted_job(target: &str, token_file: &Path) -> serde_yaml::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/prometheus/scrape-config.yaml");
    let text = std::fs::read_to_string(&path).expect("deploy/prometheus/scrape-config.yaml");
    let file: serde_yaml::Value = serde_yaml::from_str(&text).expect("YAML");
    let mut job = file["scrape_configs"][0].clone();
    let fields = job.as_mapping_mut().expect("a job");
    assert!(fields.remove("kubernetes_sd_configs").is_some(), "the job discovers its targets");
    let relabel = fields.remove("relabel_configs").expect("the job selects the kcm-rs Service");
    let sources = serde_yaml::to_string(&relabel).expect("YAML");
    assert!(
        relabel.as_sequence().expect("a list").iter().all(|r| {
            r["source_labels"].as_sequence().is_some_and(|labels| {
                labels.iter().all(|l| l.as_str().is_some_and(|l| l.starts_with("__meta_kubernetes_")))
            })
        }),
        "the relabelling reads only discovery labels, so dropping it changes only the targets:\n{sources}"
    );
    fields.insert("static_configs".into(), serde_yaml::to_value(json!([{"targets": [target]}])).expect("YAML"));
    // The in-cluster ServiceAccount token is not mounted here: a token of
    // the test's own, which this kcm-rs (no --authentication-kubeconfig)
    // reviews no more than a kube-controller-manager would.
    let credentials = &mut fields.get_mut("authorization").expect("the job sends a bearer token")["credentials_file"];
    assert_eq!(credentials.as_str(), Some("/var/run/secrets/kubernetes.io/serviceaccount/token"));
    *credentials = token_file.display().to_string().into();
    job
}

/// Starts Prometheus on a free loopback port with `job`, scraping every
/// second; killed on drop.
fn start_prometheus(dir: &Path, job: serde_yaml::Value) -> (Child, u16) {
    let config = json!({"global": {"scrape_interval": "1s", "evaluation_interval": "1s"}});
    let mut config: serde_yaml::Value = serde_yaml::to_value(config).expect("YAML");
    config.as_mapping_mut().expect("a map").insert("scrape_configs".into(), serde_yaml::Value::Sequence(vec![job]));
    let file = dir.join("prometheus.yml");
    std::fs::write(&file, serde_yaml::to_string(&config).expect("YAML")).expect("written");
    let port = free_port();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", file.display()))
        .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| {
            panic!("prometheus must be installed (Debian package prometheus; .ci/run installs it): {e}")
        });
    (child, port)
}

/// The result vector of an instant query, or why there is none yet.
async fn query(port: u16, promql: &str) -> Result<Vec<Value>, String> {
    let out = Command::new("curl")
        .args(["-s", "--get", &format!("http://127.0.0.1:{port}/api/v1/query"), "--data-urlencode"])
        .arg(format!("query={promql}"))
        .output()
        .await
        .map_err(|e| format!("curl: {e}"))?;
    let body: Value = serde_json::from_slice(&out.stdout).map_err(|_| "Prometheus not answering yet".to_owned())?;
    if body["status"] != "success" {
        return Err(body.to_string());
    }
    Ok(body["data"]["result"].as_array().cloned().unwrap_or_default())
}

/// Waits until `promql` gives a series for each `want` value of `label`;
/// returns the series.
async fn wait_for_series(cluster: &Cluster, port: u16, promql: &str, label: &str, want: &[&str]) -> Vec<Value> {
    let has_all = |series: &[Value]| {
        let seen: Vec<&str> = series.iter().filter_map(|s| s["metric"][label].as_str()).collect();
        if want.iter().all(|w| seen.contains(w)) { Ok(()) } else { Err(format!("{label}s so far: {seen:?}")) }
    };
    wait_for(cluster, PATIENCE, promql, || async { has_all(&query(port, promql).await?) }).await;
    query(port, promql).await.expect("the series just seen")
}

// === tests ===

on_both!(prometheus_scrapes_kcm_rs_over_https_with_the_deploy_scrape_job);

async fn prometheus_scrapes_kcm_rs_over_https_with_the_deploy_scrape_job() {
    let env = start().await;
    // Prometheus is told to look where the daemon listens.
    let port = env.port;
    let replica_sets: kube::Api<ReplicaSet> = kube::Api::namespaced(env.client.clone(), &env.ns);
    let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "scraped"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "scraped"}},
            "template": {"metadata": {"labels": {"app": "scraped"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
    replica_sets.create(&Default::default(), &serde_json::from_value(rs).expect("valid")).await.expect("created");

    let dir = tempfile::tempdir().expect("temp dir");
    let token = dir.path().join("token");
    std::fs::write(&token, "a-scraper-token").expect("token written");
    let (_prometheus, api) = start_prometheus(dir.path(), adapted_job(&format!("127.0.0.1:{port}"), &token));

    let up = wait_for_series(&env.cluster, api, "up{job=\"kcm-rs\"} == 1", "job", &["kcm-rs"]).await;
    assert_eq!(up[0]["value"][1], "1", "{up:?}");
    // Every queue of every controller `*` starts, by upstream's names: what
    // dashboards and alerts select on, so written out here rather than taken
    // from the drivers' constants. A controller added to kcm-rs adds its
    // queues here.
    let queues = [
        "deployment",
        "replicaset",
        "statefulset",
        "daemonset",
        "job",
        "job_orphan_pod",
        "cronjob",
        "namespace",
        "node_lifecycle_controller",
        "node_lifecycle_controller_pods",
        "noexec_taint_node",
        "noexec_taint_pod",
        "ttl_jobs_to_delete",
        "garbage_collector_attempt_to_delete",
        "garbage_collector_attempt_to_orphan",
    ];
    let adds = wait_for_series(&env.cluster, api, "workqueue_adds_total{job=\"kcm-rs\"}", "name", &queues).await;
    let replicaset = adds.iter().find(|s| s["metric"]["name"] == "replicaset").expect("the replicaset queue");
    assert_eq!(replicaset["metric"]["instance"], format!("127.0.0.1:{port}"));
}
