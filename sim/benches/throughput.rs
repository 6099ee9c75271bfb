//! kube-sim throughput and memory, measured against the real binary over
//! loopback HTTP (`cargo bench -p kube-sim`).
//!
//! 1. Starts `kube-sim --nodes 0` (no kubelet writes: the API alone is
//!    measured), creates the `default` ServiceAccount a controller manager
//!    would (the ServiceAccount admission plugin looks it up for every pod,
//!    as the API server does) and opens three watches on all pods, as
//!    informers would.
//! 2. Creates pods (a typical Deployment-made pod, with the token volume the
//!    ServiceAccount plugin adds) with 64 requests in
//!    flight over keep-alive connections and reports creates per second.
//! 3. Fills the store to 100,000 pods and reports the server's resident
//!    memory (VmRSS of its process).
//!
//! The figures go into docs/benchmarks.md.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// Pods created for the throughput figure.
const THROUGHPUT_PODS: usize = 20_000;
/// Pods stored for the memory figure.
const MEMORY_PODS: usize = 100_000;
/// Requests in flight.
const CONCURRENCY: usize = 64;
/// Open watches during the run.
const WATCHES: usize = 3;

type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// The kube-sim process; killed on drop.
struct Server {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server() -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    let child = Command::new(env!("CARGO_BIN_EXE_kube-sim"))
        .args(["--nodes", "0", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("kube-sim starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !kubeconfig.exists() {
        assert!(Instant::now() < deadline, "kube-sim wrote no kubeconfig within 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    let text = std::fs::read_to_string(&kubeconfig).expect("kubeconfig readable");
    let url =
        text.lines().find_map(|l| l.trim().strip_prefix("server: ")).expect("kubeconfig names the server").to_owned();
    Server { child, url, _dir: dir }
}

/// A pod as the ReplicaSet controller creates it from a typical template
/// (about 2.8 KB of JSON once defaulted and stored, before admission adds
/// the token volume and its mount).
fn pod_body(i: usize) -> Bytes {
    let pod = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("web-7c5ddbdf54-{i:06}"),
            "labels": {"app": "web", "pod-template-hash": "7c5ddbdf54", "tier": "frontend", "team": "payments"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-29T08:00:00Z",
                "prometheus.io/scrape": "true", "prometheus.io/port": "9102"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7c5ddbdf54",
                "uid": "7d4c8a4e-9a51-4a59-a4a5-2f0e8c1d3b6a", "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": {
            "containers": [{
                "name": "web", "image": "registry.example.com/payments/web:1.42.7",
                "ports": [{"name": "http", "containerPort": 8080}, {"name": "metrics", "containerPort": 9102}],
                "env": [
                    {"name": "LOG_LEVEL", "value": "info"},
                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                    {"name": "DATABASE_URL", "valueFrom": {"secretKeyRef": {"name": "web-db", "key": "url"}}},
                ],
                "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5},
                "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}, "initialDelaySeconds": 10},
                "volumeMounts": [{"name": "config", "mountPath": "/etc/web"}],
            }],
            "volumes": [{"name": "config", "configMap": {"name": "web-config"}}],
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                    "labelSelector": {"matchLabels": {"app": "web"}}}}]}},
        },
    });
    Bytes::from(pod.to_string())
}

/// Creates `default/default`, as kube-controller-manager's
/// serviceaccount-controller does in every namespace.
async fn create_default_service_account(client: &HttpClient, url: &str) {
    let uri: hyper::Uri = format!("{url}/api/v1/namespaces/default/serviceaccounts").parse().expect("valid uri");
    let body = serde_json::json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
    let request = hyper::Request::post(uri)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("valid request");
    let response = client.request(request).await.expect("create answered");
    assert_eq!(response.status(), 201, "the default ServiceAccount is created");
}

async fn create_pods(client: &HttpClient, url: &str, range: std::ops::Range<usize>) -> Duration {
    let uri: hyper::Uri = format!("{url}/api/v1/namespaces/default/pods").parse().expect("valid uri");
    let start = Instant::now();
    futures::stream::iter(range)
        .map(|i| {
            let request = hyper::Request::post(uri.clone())
                .header("content-type", "application/json")
                .body(Full::new(pod_body(i)))
                .expect("valid request");
            let client = client.clone();
            async move {
                let response = client.request(request).await.expect("create answered");
                let status = response.status();
                let body = response.into_body().collect().await.expect("body read").to_bytes();
                assert_eq!(status, 201, "create failed: {}", String::from_utf8_lossy(&body));
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<Vec<()>>()
        .await;
    start.elapsed()
}

/// Opens a watch on all pods and counts the events it receives.
fn open_watch(client: &HttpClient, url: &str, events: Arc<AtomicU64>) {
    let uri: hyper::Uri = format!("{url}/api/v1/pods?watch=true&allowWatchBookmarks=true").parse().expect("valid uri");
    let client = client.clone();
    tokio::spawn(async move {
        let request = hyper::Request::get(uri).body(Full::new(Bytes::new())).expect("valid request");
        let response = client.request(request).await.expect("watch answered");
        let mut body = response.into_body();
        while let Some(Ok(frame)) = body.frame().await {
            if let Some(data) = frame.data_ref() {
                let lines = data.iter().filter(|b| **b == b'\n').count();
                events.fetch_add(lines as u64, Ordering::Relaxed);
            }
        }
    });
}

/// Bytes of one stored pod as the server returns it.
async fn stored_size(client: &HttpClient, url: &str) -> usize {
    let uri: hyper::Uri =
        format!("{url}/api/v1/namespaces/default/pods/web-7c5ddbdf54-000000").parse().expect("valid uri");
    let request = hyper::Request::get(uri).body(Full::new(Bytes::new())).expect("valid request");
    let response = client.request(request).await.expect("get answered");
    response.into_body().collect().await.expect("body read").to_bytes().len()
}

fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc readable");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS present")
}

#[tokio::main]
async fn main() {
    let server = start_server();
    let pid = server.child.id();
    let client: HttpClient = Client::builder(TokioExecutor::new()).pool_max_idle_per_host(CONCURRENCY).build_http();
    let events = Arc::new(AtomicU64::new(0));
    for _ in 0..WATCHES {
        open_watch(&client, &server.url, events.clone());
    }
    create_default_service_account(&client, &server.url).await;
    let idle_kib = resident_kib(pid);
    let sample = pod_body(0).len();

    let took = create_pods(&client, &server.url, 0..THROUGHPUT_PODS).await;
    let rate = THROUGHPUT_PODS as f64 / took.as_secs_f64();
    println!(
        "create throughput: {THROUGHPUT_PODS} pods ({sample} B request bodies), {CONCURRENCY} in flight, \
         {WATCHES} watches open: {:.2} s, {rate:.0} creates/s",
        took.as_secs_f64()
    );

    create_pods(&client, &server.url, THROUGHPUT_PODS..MEMORY_PODS).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while events.load(Ordering::Relaxed) < (MEMORY_PODS * WATCHES) as u64 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let full_kib = resident_kib(pid);
    let stored = stored_size(&client, &server.url).await;
    println!(
        "memory: {MEMORY_PODS} pods stored ({stored} B of JSON each): kube-sim resident {:.0} MiB (idle {:.0} MiB); \
         watch events delivered: {}",
        full_kib as f64 / 1024.0,
        idle_kib as f64 / 1024.0,
        events.load(Ordering::Relaxed)
    );
}
