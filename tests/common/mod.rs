//! Fixtures shared by the end-to-end tests of the `kcm-rs` binary.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use kube_sim::faults::{FaultRule, FaultSpec};
use kube_sim::testing::Patience;
use kube_sim::{Sim, SimConfig};
use tokio::process::{Child, Command};

pub mod mirror;
pub mod recorder;

/// How [`kube_sim::testing::wait_for`] waits in these tests: a generous
/// deadline for any condition, and at the latest every second a new look
/// at what follows a change with a delay (a daemon's metrics, an
/// informer's handler).
pub const PATIENCE: Patience = Patience { deadline: Duration::from_secs(90), recheck: Duration::from_secs(1) };

/// kube-sim, a kubeconfig for it, and a `kcm-rs` (leader election off)
/// running against it; the process is killed on drop.
pub struct Env {
    /// The simulated cluster.
    pub sim: Sim,
    /// Holds the kubeconfig.
    _dir: tempfile::TempDir,
    /// The kubeconfig naming `sim`.
    pub kubeconfig: PathBuf,
    /// The daemon under test.
    pub daemon: Child,
    /// The port it serves `/metrics` and the health endpoints on (HTTPS).
    pub port: u16,
    /// A client for `sim`.
    pub client: kube::Client,
}

impl Env {
    /// `GET https://127.0.0.1:<port><path>` on the daemon: see [`https_get`].
    pub async fn scrape(&self, path: &str) -> (u16, String) {
        https_get(self.port, path).await
    }
}

/// `GET https://127.0.0.1:<port><path>` on a daemon (self-signed
/// certificate): the status code and body (code 0 if unreachable).
pub async fn https_get(port: u16, path: &str) -> (u16, String) {
    let out = Command::new("curl")
        .args(["-sk", "-o", "-", "-w", "\n%{http_code}", &format!("https://127.0.0.1:{port}{path}")])
        .output()
        .await
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), body.to_owned())
}

/// A namespaced custom resource type `widgets.example.com/v1` to register
/// at run time.
pub fn widgets() -> kube_sim::controls::CustomResource {
    kube_sim::controls::CustomResource {
        group: "example.com".into(),
        version: "v1".into(),
        plural: "widgets".into(),
        kind: "Widget".into(),
        namespaced: true,
        short_names: Vec::new(),
        verbs: None,
    }
}

/// Starts kube-sim and `kcm-rs` against it.
pub async fn start() -> Env {
    start_with(SimConfig::default(), &[], |_| {}).await
}

/// Starts kube-sim with `config`, lets `prepare` act on it, then starts
/// `kcm-rs` against it with these extra flags.
pub async fn start_with(config: SimConfig, args: &[&str], prepare: impl FnOnce(&Sim)) -> Env {
    let (sim, dir, kubeconfig) = sim_with_kubeconfig(config).await;
    prepare(&sim);
    start_on(sim, dir, kubeconfig, args)
}

/// Starts `kcm-rs` with these extra flags against a kube-sim already
/// prepared (by [`sim_with_kubeconfig`] and whatever a test set up there).
pub fn start_on(sim: Sim, dir: tempfile::TempDir, kubeconfig: PathBuf, args: &[&str]) -> Env {
    let port = free_port();
    let daemon = spawn_on(&kubeconfig, port, args);
    let client = sim.client().expect("client");
    Env { sim, _dir: dir, kubeconfig, daemon, port, client }
}

/// Starts kube-sim with `config` and writes a kubeconfig for it into a
/// temporary directory (kept while the `TempDir` lives).
pub async fn sim_with_kubeconfig(config: SimConfig) -> (Sim, tempfile::TempDir, PathBuf) {
    let sim = Sim::start(config).await.expect("kube-sim starts");
    let (dir, path) = kube_sim::testing::kubeconfig(&sim);
    (sim, dir, path)
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// Starts `kcm-rs` against `kubeconfig`, leader election off, serving on a
/// free loopback port.
pub fn spawn(kubeconfig: &Path) -> Child {
    spawn_on(kubeconfig, free_port(), &[])
}

/// Starts `kcm-rs` against `kubeconfig`, leader election off, serving on
/// `port`, with these extra flags.
pub fn spawn_on(kubeconfig: &Path, port: u16, args: &[&str]) -> Child {
    let mut all =
        vec!["--leader-elect=false".to_owned(), format!("--secure-port={port}"), "--bind-address=127.0.0.1".to_owned()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    spawn_with(kubeconfig, &all)
}

/// Starts `kcm-rs --kubeconfig=<kubeconfig> <args>`, its output discarded;
/// killed on drop.
pub fn spawn_with(kubeconfig: &Path, args: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_kcm-rs"))
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("kcm-rs starts")
}

/// Disturbs kcm-rs mid-work: drops its watches, compacts the history (its
/// next watch gets 410 and relists), then kills it and starts a new
/// process, which remembers nothing of the old one.
pub async fn disturb(env: &mut Env) {
    env.sim.controls().drop_watches();
    env.sim.controls().compact();
    env.daemon.kill().await.expect("kcm-rs killed");
    env.daemon = spawn(&env.kubeconfig);
    env.sim.controls().drop_watches();
}

/// Faults refusing this share of pod creates with a 500.
pub fn failing_pod_creates(rate: f64) -> FaultSpec {
    FaultSpec {
        rules: vec![FaultRule {
            verb: Some("create".into()),
            resource: Some("pods".into()),
            error_rate: rate,
            ..Default::default()
        }],
    }
}

/// Waits until `namespace` has its `default` ServiceAccount, as upstream's
/// e2e framework waits before it creates pods in a new namespace: the API
/// server refuses pods without it (after a short wait of its own), and
/// kcm-rs's serviceaccount-controller makes it moments after the namespace.
pub async fn default_service_account(sim: &Sim, namespace: &str) {
    let accounts: kube::Api<k8s_openapi::api::core::v1::ServiceAccount> =
        kube::Api::namespaced(sim.client().expect("client"), namespace);
    kube_sim::testing::wait_for(sim, PATIENCE, &format!("{namespace}'s default ServiceAccount"), || async {
        let found = accounts.get_opt("default").await.map_err(|e| e.to_string())?;
        found.map(drop).ok_or_else(|| "not yet".to_owned())
    })
    .await;
}

/// The Events in `namespace` about object `name` with `reason`.
pub async fn events(env: &Env, namespace: &str, name: &str, reason: &str) -> Vec<k8s_openapi::api::core::v1::Event> {
    let api: kube::Api<k8s_openapi::api::core::v1::Event> = kube::Api::namespaced(env.client.clone(), namespace);
    let list = api.list(&kube::api::ListParams::default()).await.expect("events listed");
    list.items
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(name) && e.reason.as_deref() == Some(reason))
        .collect()
}

/// Runs `program args`, feeding `stdin`; fails with its output unless it
/// succeeds. `hint` tells how to get the program when it is missing.
pub async fn run_ok(program: &str, args: &[&str], stdin: Option<&str>, hint: &str) -> String {
    use tokio::io::AsyncWriteExt;
    let mut child = Command::new(program)
        .args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{program} must be installed for this test ({hint}): {e}"));
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(input.as_bytes()).await.expect("stdin written");
    }
    let out = child.wait_with_output().await.expect("the program ran");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{program} {args:?} failed ({}):\n{stdout}\n{stderr}", out.status);
    stdout.into_owned()
}
