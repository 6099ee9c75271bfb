//! kcm-rs beside kube-controller-manager 1.37.2 (`cargo bench --bench
//! versus [-- rollout|cached]`, both scenarios when none is named), on
//! the testbed (etcd, kube-apiserver 1.37.2, kube-scheduler, kwok's nodes,
//! built from upstream's Go modules by `scripts/test`), with the same
//! controllers, the same client QPS and leader election off.
//!
//! `cached` (in `versus/cached.rs`) measures the memory each holds for a
//! large converged cluster. `rollout` runs each program, one after the
//! other, on a fresh testbed of its own, through the same workload:
//!
//! 1. **idle**: started on the empty cluster, left for 20 s;
//! 2. **bring-up**: Deployments created, until every one is complete;
//! 3. **rollout**: every Deployment's image changed, until complete again;
//! 4. **steady**: 30 s with nothing changing.
//!
//! Per program: resident memory (idle, cached after the rollout, peak),
//! CPU seconds, the API requests it made (kube-apiserver's audit log, by
//! the program's identities) by verb and by resource, the time each phase
//! took to converge, and its writes per converged Deployment; then the
//! ratios kcm-rs / kube-controller-manager. `KCM_SCALE` scales the nodes
//! and Deployments (0.1 for a quick look). The figures go into
//! docs/benchmarks.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

#[path = "versus/cached.rs"]
mod cached;
mod common;
// The scale benchmark's converged objects, for `cached`; versus uses part of them.
#[allow(dead_code)]
#[path = "scale/objects.rs"]
mod objects;
#[allow(dead_code)]
#[path = "scale/observe.rs"]
mod observe;

use common::testbed::{Testbed, binary};

/// The scenarios, in the order they run.
const SCENARIOS: [&str; 2] = ["rollout", "cached"];

/// Nodes at `KCM_SCALE=1`.
const NODES: usize = 100;
/// Deployments at `KCM_SCALE=1`.
const DEPLOYMENTS: usize = 200;
/// Replicas of each Deployment.
const REPLICAS: i32 = 5;
/// Give up on a phase after this long.
const LIMIT: Duration = Duration::from_secs(1_200);
/// Requests the benchmark keeps in flight while creating or patching.
const CONCURRENCY: usize = 16;
/// The controllers both programs run: the workload, batch, node, namespace,
/// garbage collector and service account ones the figures in
/// docs/benchmarks.md were measured with (the certificate, bootstrap token,
/// node IPAM, TTL and ServiceCIDR controllers have nothing to do under this
/// workload).
const CONTROLLERS: &str = "clusterrole-aggregation-controller,cronjob-controller,daemonset-controller,\
deployment-controller,endpoints-controller,endpointslice-controller,endpointslice-mirroring-controller,\
garbage-collector-controller,job-controller,legacy-serviceaccount-token-cleaner-controller,\
namespace-controller,node-lifecycle-controller,pod-garbage-collector-controller,replicaset-controller,\
root-ca-certificate-publisher-controller,serviceaccount-controller,serviceaccount-token-controller,\
statefulset-controller,taint-eviction-controller,ttl-after-finished-controller";
/// Verbs that write.
const WRITES: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];

/// The two programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Program {
    KubeControllerManager,
    KcmRs,
}

impl Program {
    fn name(self) -> &'static str {
        match self {
            Program::KubeControllerManager => "kube-controller-manager",
            Program::KcmRs => "kcm-rs",
        }
    }

    /// Whether the audit log's user is this program: kube-controller-manager
    /// as itself and, with `--use-service-account-credentials` as kubeadm
    /// runs it, as each controller's ServiceAccount in kube-system; kcm-rs
    /// as `deploy/`'s ServiceAccount.
    fn is(self, user: &str) -> bool {
        match self {
            Program::KubeControllerManager => {
                user == "system:kube-controller-manager"
                    || user.strip_prefix("system:serviceaccount:kube-system:").is_some_and(|sa| sa != "kcm-rs")
            }
            Program::KcmRs => user == "system:serviceaccount:kube-system:kcm-rs",
        }
    }

    /// Starts the program on `bed`, serving on `port`, its log in `log`.
    fn start(self, bed: &Testbed, port: u16, log: &Path) -> Child {
        let pki = |f: &str| bed.pki.join(f).display().to_string();
        let common = [
            format!("--controllers={CONTROLLERS}"),
            "--leader-elect=false".to_owned(),
            "--bind-address=127.0.0.1".to_owned(),
            format!("--secure-port={port}"),
            format!("--root-ca-file={}", pki("ca.crt")),
            format!("--service-account-private-key-file={}", pki("sa.key")),
        ];
        let mut command = match self {
            Program::KubeControllerManager => {
                let conf = bed.controller_manager.display().to_string();
                let mut c = Command::new(upstream());
                c.args([
                    format!("--kubeconfig={conf}"),
                    format!("--authentication-kubeconfig={conf}"),
                    format!("--authorization-kubeconfig={conf}"),
                    format!("--client-ca-file={}", pki("ca.crt")),
                    format!("--requestheader-client-ca-file={}", pki("front-proxy-ca.crt")),
                    "--use-service-account-credentials=true".to_owned(),
                ]);
                c
            }
            Program::KcmRs => {
                let mut c = Command::new(env!("CARGO_BIN_EXE_kcm-rs"));
                c.arg(format!("--kubeconfig={}", bed.kcm_rs.display()));
                c
            }
        };
        let log = std::fs::File::create(log).expect("log file");
        command.args(common).stdout(Stdio::null()).stderr(log).kill_on_drop(true).spawn().expect("the program starts")
    }
}

/// kube-controller-manager's own binary, as an operator runs it (the
/// testbed's, which holds the whole control plane, would count the pages of
/// the other programs in its resident memory): built once per run from
/// `k8s.io/kubernetes/cmd/kube-controller-manager` at the testbed module's
/// version, next to the testbed binary (Go's build cache makes it quick
/// after the first time).
fn upstream() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out = binary().with_file_name("kube-controller-manager");
            let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("testbed");
            let status = std::process::Command::new("go")
                .current_dir(&module)
                .arg("build")
                .arg("-o")
                .arg(&out)
                .arg("k8s.io/kubernetes/cmd/kube-controller-manager")
                .status()
                .expect("go runs");
            assert!(
                status.success(),
                "go build k8s.io/kubernetes/cmd/kube-controller-manager failed in {}",
                module.display()
            );
            out
        })
        .clone()
}

/// What one program did.
#[derive(Debug, Default)]
struct Run {
    idle_mib: f64,
    cached_mib: f64,
    peak_mib: f64,
    cpu_seconds: f64,
    bring_up: Duration,
    rollout: Duration,
    /// Requests by phase, verb and resource.
    requests: BTreeMap<(String, String, String), u64>,
    /// Phase boundaries, as the audit log's timestamps.
    phases: Vec<(String, jiff::Timestamp)>,
}

impl Run {
    fn total(&self, phase: Option<&str>, writes_only: bool) -> u64 {
        let wanted = |(p, verb, _): &(String, String, String)| {
            phase.is_none_or(|want| p == want) && (!writes_only || WRITES.contains(&verb.as_str()))
        };
        self.requests.iter().filter(|(k, _)| wanted(k)).map(|(_, n)| n).sum()
    }
}

fn deployment(i: usize, image: &str) -> Deployment {
    let name = format!("app-{i}");
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": image}]}
            }
        }
    }))
    .expect("a valid Deployment")
}

/// Deployments complete on `image`: every replica updated and available,
/// the status observed for the current generation.
async fn complete(api: &Api<Deployment>, image: &str) -> usize {
    let list = api.list(&ListParams::default()).await.expect("Deployments listed");
    let done = |d: &Deployment| {
        let status = d.status.clone().unwrap_or_default();
        let spec_image = d.spec.template.spec.as_ref().map(|s| s.containers[0].image.clone());
        spec_image == Some(Some(image.to_owned()))
            && status.observed_generation == d.metadata.generation
            && status.updated_replicas == Some(REPLICAS)
            && status.available_replicas == Some(REPLICAS)
            && status.replicas == Some(REPLICAS)
    };
    list.items.iter().filter(|d| done(d)).count()
}

/// Waits until all `count` Deployments are complete on `image`, keeping
/// the program's peak memory; returns how long it took from `start`.
async fn converge(
    api: &Api<Deployment>,
    image: &str,
    count: usize,
    pid: u32,
    start: Instant,
    run: &mut Run,
) -> Duration {
    loop {
        run.peak_mib = run.peak_mib.max(common::resident_mib(pid));
        let done = complete(api, image).await;
        if done == count {
            return start.elapsed();
        }
        assert!(start.elapsed() < LIMIT, "{done} of {count} Deployments complete on {image} after {LIMIT:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Reads the audit log: the program's requests, by the phase they fell in.
fn count_requests(audit: &Path, program: Program, run: &mut Run) {
    let text = std::fs::read_to_string(audit).expect("audit log");
    for line in text.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else { continue };
        let user = event.pointer("/user/username").and_then(Value::as_str).unwrap_or_default();
        let verb = event.get("verb").and_then(Value::as_str).unwrap_or_default();
        let stage = event.get("stage").and_then(Value::as_str).unwrap_or_default();
        // One event per request: a watch's when it starts, others' when done.
        let counted = if verb == "watch" { stage == "ResponseStarted" } else { stage == "ResponseComplete" };
        if !counted || !program.is(user) {
            continue;
        }
        let Some(at) = event.get("requestReceivedTimestamp").and_then(Value::as_str).and_then(|t| t.parse().ok())
        else {
            continue;
        };
        let phase = run.phases.iter().rev().find(|(_, start)| *start <= at).map_or("start", |(p, _)| p.as_str());
        let resource = match (event.pointer("/objectRef/resource"), event.pointer("/objectRef/subresource")) {
            (Some(r), Some(s)) => format!("{}/{}", r.as_str().unwrap_or_default(), s.as_str().unwrap_or_default()),
            (Some(r), None) => r.as_str().unwrap_or_default().to_owned(),
            _ => event.get("requestURI").and_then(Value::as_str).unwrap_or_default().to_owned(),
        };
        *run.requests.entry((phase.to_owned(), verb.to_owned(), resource)).or_default() += 1;
    }
}

async fn measure(program: Program, nodes: usize, deployments: usize, out: &Path) -> Run {
    let bed = Testbed::start(nodes, true).await;
    let client = bed.client().await;
    let api: Api<Deployment> = Api::namespaced(client, "default");
    let mut run = Run::default();
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a port").port();
    let log = out.join(format!("{}.log", program.name()));
    let mut child = program.start(&bed, port, &log);
    let pid = child.id().expect("running");
    let mark = |run: &mut Run, phase: &str| run.phases.push((phase.to_owned(), jiff::Timestamp::now()));

    mark(&mut run, "idle");
    tokio::time::sleep(Duration::from_secs(20)).await;
    run.idle_mib = common::resident_mib(pid);
    eprintln!("{}: idle {:.1} MiB", program.name(), run.idle_mib);

    mark(&mut run, "bring-up");
    let start = Instant::now();
    futures::stream::iter(0..deployments)
        .for_each_concurrent(CONCURRENCY, |i| {
            let api = api.clone();
            async move {
                api.create(&PostParams::default(), &deployment(i, "nginx:1")).await.expect("Deployment created");
            }
        })
        .await;
    run.bring_up = converge(&api, "nginx:1", deployments, pid, start, &mut run).await;
    eprintln!("{}: bring-up {:.1} s", program.name(), run.bring_up.as_secs_f64());

    mark(&mut run, "rollout");
    let start = Instant::now();
    futures::stream::iter(0..deployments)
        .for_each_concurrent(CONCURRENCY, |i| {
            let api = api.clone();
            async move {
                let patch =
                    json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}}});
                api.patch(&format!("app-{i}"), &PatchParams::default(), &Patch::Strategic(patch))
                    .await
                    .expect("Deployment patched");
            }
        })
        .await;
    run.rollout = converge(&api, "nginx:2", deployments, pid, start, &mut run).await;
    eprintln!("{}: rollout {:.1} s", program.name(), run.rollout.as_secs_f64());

    mark(&mut run, "steady");
    tokio::time::sleep(Duration::from_secs(30)).await;
    run.cached_mib = common::resident_mib(pid);
    run.peak_mib = run.peak_mib.max(common::peak_resident_mib(pid));
    run.cpu_seconds = common::cpu_seconds(pid);
    mark(&mut run, "end");
    child.kill().await.expect("stopped");
    // The audit log is written in batches: give the last one time to land.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let audit = bed.audit_log.clone().expect("audit log asked for");
    count_requests(&audit, program, &mut run);
    let kept = out.join(format!("{}-audit.log", program.name()));
    std::fs::copy(&audit, &kept).expect("audit log kept");
    run
}

fn ratio(rs: f64, go: f64) -> String {
    if go == 0.0 { "-".to_owned() } else { format!("{:.2}", rs / go) }
}

fn report(nodes: usize, deployments: usize, go: &Run, rs: &Run) {
    let pods = deployments * usize::try_from(REPLICAS).expect("positive");
    println!(
        "\n## kcm-rs beside kube-controller-manager 1.37.2: {nodes} nodes, {deployments} Deployments x {REPLICAS} ({pods} pods)\n"
    );
    println!("| | kube-controller-manager | kcm-rs | kcm-rs / kcm |");
    println!("|---|---|---|---|");
    let row = |what: &str, g: f64, r: f64, unit: &str| {
        println!("| {what} | {g:.1}{unit} | {r:.1}{unit} | {} |", ratio(r, g));
    };
    row("resident, idle", go.idle_mib, rs.idle_mib, " MiB");
    row("resident, cached (after the rollout)", go.cached_mib, rs.cached_mib, " MiB");
    row("resident, peak", go.peak_mib, rs.peak_mib, " MiB");
    row("CPU, whole run", go.cpu_seconds, rs.cpu_seconds, " s");
    row("bring-up, to all complete", go.bring_up.as_secs_f64(), rs.bring_up.as_secs_f64(), " s");
    row("rollout, to all complete", go.rollout.as_secs_f64(), rs.rollout.as_secs_f64(), " s");
    let per = |run: &Run, phase: &str| run.total(Some(phase), true) as f64 / deployments as f64;
    row("writes per Deployment, bring-up", per(go, "bring-up"), per(rs, "bring-up"), "");
    row("writes per Deployment, rollout", per(go, "rollout"), per(rs, "rollout"), "");
    for phase in ["start", "idle", "bring-up", "rollout", "steady"] {
        let (g, r) = (go.total(Some(phase), false) as f64, rs.total(Some(phase), false) as f64);
        println!("| requests, {phase} | {g:.0} | {r:.0} | {} |", ratio(r, g));
    }
    let (g, r) = (go.total(None, false) as f64, rs.total(None, false) as f64);
    println!("| requests, whole run | {g:.0} | {r:.0} | {} |", ratio(r, g));

    println!("\nRequests by verb and resource, whole run:\n");
    println!("| verb | resource | kube-controller-manager | kcm-rs |");
    println!("|---|---|---|---|");
    let mut keys: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    for ((_, verb, resource), n) in &go.requests {
        keys.entry((verb.clone(), resource.clone())).or_default().0 += n;
    }
    for ((_, verb, resource), n) in &rs.requests {
        keys.entry((verb.clone(), resource.clone())).or_default().1 += n;
    }
    for ((verb, resource), (g, r)) in keys {
        println!("| {verb} | {resource} | {g} | {r} |");
    }
}

#[tokio::main]
async fn main() {
    // `cargo bench` passes `--bench`; anything else not a flag names a scenario.
    let asked: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    for a in &asked {
        assert!(SCENARIOS.contains(&a.as_str()), "unknown scenario {a:?}: one of {}", SCENARIOS.join(", "));
    }
    let chosen = |s: &str| asked.is_empty() || asked.iter().any(|a| a == s);
    let out: PathBuf = std::env::temp_dir().join(format!("kcm-rs-versus-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("output directory");
    eprintln!("logs and audit logs in {}", out.display());
    if chosen("rollout") {
        let (nodes, deployments) = (common::scaled(NODES), common::scaled(DEPLOYMENTS));
        let go = measure(Program::KubeControllerManager, nodes, deployments, &out).await;
        let rs = measure(Program::KcmRs, nodes, deployments, &out).await;
        report(nodes, deployments, &go, &rs);
    }
    if chosen("cached") {
        cached::run(&out).await;
    }
}
