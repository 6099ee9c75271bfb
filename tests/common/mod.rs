//! Fixtures shared by the end-to-end tests of the `kcm-rs` binary.
//!
//! A test runs on kube-sim, or on the testbed's real control plane
//! ([`testbed`]) when [`on_both!`] runs it there too: [`start`] reads
//! which from the test's [`Backend`].

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use kube_sim::controls::Controls;
use kube_sim::faults::{FaultRule, FaultSpec};
use kube_sim::store::Change;
use kube_sim::testing::{Changes, Patience};
use kube_sim::{Sim, SimConfig};
use tokio::process::{Child, Command};
use tokio::sync::{OwnedMutexGuard, broadcast};

pub mod bootstrap;
pub mod collector;
pub mod crd;
pub mod mirror;
pub mod provisioner;
pub mod recorder;
pub mod storage;
pub mod testbed;
mod turn;

pub use crd::widgets;
use testbed::Testbed;
pub use turn::start_on_testbed;

/// How [`kube_sim::testing::wait_for`] waits in these tests: a generous
/// deadline for any condition, and at the latest every second a new look
/// at what follows a change with a delay (a daemon's metrics, an
/// informer's handler).
pub const PATIENCE: Patience = Patience { deadline: Duration::from_secs(90), recheck: Duration::from_secs(1) };

/// Which cluster a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// kube-sim, in this process: the default.
    Sim,
    /// The testbed's kube-apiserver 1.37, shared by the test binary.
    Testbed,
}

tokio::task_local! {
    static BACKEND: Backend;
}

/// The backend of the running test ([`Backend::Sim`] unless [`on_both!`]
/// says otherwise).
pub fn backend() -> Backend {
    BACKEND.try_with(|b| *b).unwrap_or(Backend::Sim)
}

/// Runs `test` with [`backend`] giving `backend`.
pub async fn run_on(backend: Backend, test: impl Future<Output = ()>) {
    BACKEND.scope(backend, test).await;
}

/// Declares end-to-end tests that run on both clusters: for each `name`
/// (an `async fn name()` beside it), the tests `name::sim` and
/// `name::testbed`.
macro_rules! on_both {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sim() {
                $crate::common::run_on($crate::common::Backend::Sim, super::$name()).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn testbed() {
                $crate::common::run_on($crate::common::Backend::Testbed, super::$name()).await;
            }
        }
    )+};
}
pub(crate) use on_both;

/// The cluster a test runs on.
pub enum Cluster {
    /// kube-sim.
    Sim(Sim),
    /// The testbed, held with this test's turn on it.
    Testbed {
        /// The shared testbed.
        _bed: Arc<Testbed>,
        /// This test's turn: the next test's starts when it drops.
        _turn: OwnedMutexGuard<()>,
    },
}

impl Cluster {
    /// kube-sim: panics on the testbed, for the tests that need kube-sim's
    /// own controls (faults, dropped watches, compaction, node stops).
    pub fn sim(&self) -> &Sim {
        match self {
            Cluster::Sim(sim) => sim,
            Cluster::Testbed { .. } => panic!("this test needs kube-sim's controls; it cannot run on the testbed"),
        }
    }

    /// kube-sim's controls: see [`Cluster::sim`].
    pub fn controls(&self) -> &Controls {
        self.sim().controls()
    }
}

impl Changes for Cluster {
    fn changes(&self) -> Option<broadcast::Receiver<Arc<Change>>> {
        match self {
            Cluster::Sim(sim) => Some(sim.changes()),
            Cluster::Testbed { .. } => None,
        }
    }
}

/// A cluster, a kubeconfig for it, and a `kcm-rs` (leader election off)
/// running against it; the process is killed on drop, before the cluster
/// (the fields drop in order): on the testbed, before the next test's
/// turn begins.
pub struct Env {
    /// Holds the kubeconfig.
    _dir: Option<tempfile::TempDir>,
    /// The admin's kubeconfig (kubectl's); on the testbed its context is
    /// the test's namespace.
    pub kubeconfig: PathBuf,
    /// The daemon's kubeconfig and the flags it needs on this cluster.
    daemon_config: DaemonConfig,
    /// The daemon under test.
    pub daemon: Child,
    /// The port it serves `/metrics` and the health endpoints on (HTTPS).
    pub port: u16,
    /// A client for the cluster, as the admin.
    pub client: kube::Client,
    /// The namespace this test works in: `default` on kube-sim, one of its
    /// own on the shared testbed.
    pub ns: String,
    /// The CustomResourceDefinitions [`Env::serve`] applied on the testbed,
    /// deleted when the test ends.
    served: std::sync::Mutex<Vec<String>>,
    /// The namespaces the test makes beside [`Env::ns`]
    /// ([`Env::extra_namespace`]), deleted with it on the testbed.
    extra_namespaces: std::sync::Mutex<Vec<String>>,
    /// A kcm-rs started here ran leader election: on the testbed, its
    /// Lease is deleted when the test ends, not left held for the next.
    elected: AtomicBool,
    /// The cluster (last: see above).
    pub cluster: Cluster,
}

/// How a `kcm-rs` is started on a cluster.
#[derive(Clone)]
struct DaemonConfig {
    kubeconfig: PathBuf,
    args: Vec<String>,
    /// Where its standard error goes (appended), on the testbed: read for
    /// 403s when the test ends.
    log: Option<PathBuf>,
    /// It runs the namespace-controller.
    deletes_namespaces: bool,
}

impl Env {
    /// `GET https://127.0.0.1:<port><path>` on the daemon: see [`https_get`].
    pub async fn scrape(&self, path: &str) -> (u16, String) {
        https_get(self.port, path).await
    }

    /// The name of a namespace the test makes (as it likes: kubectl
    /// create, a manifest) beside [`Env::ns`]: `<ns>-<suffix>`, unique on
    /// the shared testbed, where it is deleted when the test ends, as
    /// [`Env::ns`] is.
    pub fn extra_namespace(&self, suffix: &str) -> String {
        let name = format!("{}-{suffix}", self.ns);
        self.extra_namespaces.lock().expect("lock").push(name.clone());
        name
    }

    /// Starts another `kcm-rs` on this cluster, as [`spawn`] does on kube-sim.
    pub fn spawn(&self) -> Child {
        self.spawn_on(free_port(), &[])
    }

    /// As [`Env::spawn`], serving on `port` with these extra flags.
    pub fn spawn_on(&self, port: u16, args: &[&str]) -> Child {
        let config = &self.daemon_config;
        let mut all: Vec<&str> = config.args.iter().map(String::as_str).collect();
        all.extend_from_slice(args);
        if elects(args) {
            self.elected.store(true, Ordering::Relaxed);
        }
        spawn_logged(&config.kubeconfig, port, &all, config.log.as_deref())
    }
}

/// `GET https://127.0.0.1:<port><path>` on a daemon (self-signed
/// certificate): the status code and body (code 0 if unreachable).
pub async fn https_get(port: u16, path: &str) -> (u16, String) {
    https_get_with(port, path, &[]).await
}

/// [`https_get`] with more curl arguments (headers, a client certificate).
pub async fn https_get_with(port: u16, path: &str, curl_args: &[&str]) -> (u16, String) {
    let out = Command::new("curl")
        .args(["-sk", "-o", "-", "-w", "\n%{http_code}", &format!("https://127.0.0.1:{port}{path}")])
        .args(curl_args)
        .output()
        .await
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), body.to_owned())
}

/// Starts `kcm-rs` on the test's cluster: kube-sim, or its turn on the
/// testbed in a namespace of its own. Returns once the namespace has its
/// `default` ServiceAccount, which every controller's pods and a test's own
/// need (on kube-sim, kcm-rs's serviceaccount-controller makes it; a loaded
/// machine can start kcm-rs after the API server's own wait for it).
pub async fn start() -> Env {
    let mut env = start_with_flags(&[]).await;
    if matches!(env.cluster, Cluster::Sim(_)) {
        let made = try_default_service_account(&env.cluster, &env.client, &env.ns).await;
        if let Err(waited) = made {
            let exited = env.daemon.try_wait().expect("kcm-rs's state");
            panic!("{waited}; kcm-rs {}", exited.map_or_else(|| "still runs".to_owned(), |s| format!("exited: {s}")));
        }
    }
    env
}

/// [`start`], with these extra flags for `kcm-rs`.
pub async fn start_with_flags(args: &[&str]) -> Env {
    match backend() {
        Backend::Sim => start_with(SimConfig::default(), args, |_| {}).await,
        Backend::Testbed => start_on_testbed(args).await,
    }
}

/// [`start_with_flags`], the test namespace provisioned on kube-sim (its
/// `default` ServiceAccount, for pods, as the controller manager that ran
/// before would have made it; the testbed's own controller manager does).
pub async fn start_provisioned(args: &[&str]) -> Env {
    let env = start_with_flags(args).await;
    if let Cluster::Sim(sim) = &env.cluster {
        kube_sim::testing::provision_namespace(sim, &env.ns).await;
    }
    env
}

/// Starts kube-sim with `config`, lets `prepare` act on it, then starts
/// `kcm-rs` against it with these extra flags.
pub async fn start_with(config: SimConfig, args: &[&str], prepare: impl FnOnce(&Sim)) -> Env {
    let (sim, dir, kubeconfig) = sim_with_kubeconfig(config).await;
    prepare(&sim);
    start_on(sim, dir, kubeconfig, args)
}

/// On kube-sim, flags that choose no controllers get every controller but
/// those whose API kube-sim does not serve (as `--sim` runs them), whose
/// caches would never sync.
fn sim_controllers(args: &[&str]) -> Vec<String> {
    kcm_rs::sim::served_controllers_flag(args).into_iter().collect()
}

/// Starts `kcm-rs` with these extra flags against a kube-sim already
/// prepared (by [`sim_with_kubeconfig`] and whatever a test set up there).
pub fn start_on(sim: Sim, dir: tempfile::TempDir, kubeconfig: PathBuf, args: &[&str]) -> Env {
    let port = free_port();
    let served = sim_controllers(args);
    let mut all: Vec<&str> = served.iter().map(String::as_str).collect();
    all.extend_from_slice(args);
    let daemon = spawn_on(&kubeconfig, port, &all);
    let client = sim.client().expect("client");
    let daemon_config =
        DaemonConfig { kubeconfig: kubeconfig.clone(), args: served, log: None, deletes_namespaces: true };
    Env {
        cluster: Cluster::Sim(sim),
        _dir: Some(dir),
        kubeconfig,
        daemon_config,
        daemon,
        port,
        client,
        ns: "default".to_owned(),
        served: std::sync::Mutex::default(),
        extra_namespaces: std::sync::Mutex::default(),
        elected: AtomicBool::new(elects(args)),
    }
}

/// Whether a `kcm-rs` started with these flags (after the tests'
/// `--leader-elect=false`) runs leader election: the last
/// `--leader-elect` says.
fn elects(args: &[&str]) -> bool {
    let last = args.iter().rev().find(|a| **a == "--leader-elect" || a.starts_with("--leader-elect="));
    last.is_some_and(|a| *a == "--leader-elect" || *a == "--leader-elect=true")
}

/// Starts kube-sim with `config` and writes a kubeconfig for it into a
/// temporary directory (kept while the `TempDir` lives).
pub async fn sim_with_kubeconfig(config: SimConfig) -> (Sim, tempfile::TempDir, PathBuf) {
    let sim = Sim::start(config).await.expect("kube-sim starts");
    let (dir, path) = kube_sim::testing::kubeconfig(&sim);
    (sim, dir, path)
}

/// A kubeconfig for `sim` in `dir` that acts as `user` (a kubeconfig's
/// `as:`): kube-sim counts requests by that user, so two replicas are told
/// apart.
pub fn kubeconfig_as(sim: &Sim, dir: &Path, user: &str) -> PathBuf {
    let path = dir.join(format!("kubeconfig-{user}"));
    let plain = kube_sim::kubeconfig_yaml(&sim.url());
    let yaml = plain.replace("  user: {}\n", &format!("  user: {{as: {user}}}\n"));
    assert_ne!(yaml, plain, "the kubeconfig names a user to act as");
    std::fs::write(&path, yaml).expect("kubeconfig written");
    path
}

/// kubeadm's kube-controller-manager static pod with kcm-rs's image.
pub const STATIC_POD: &str = "deploy/static-pod/kube-controller-manager.yaml";

/// The command of [`STATIC_POD`]'s container: `kube-controller-manager`,
/// then kubeadm's flags.
pub fn static_pod_command() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(STATIC_POD);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {STATIC_POD}: {e}"));
    let pod: serde_json::Value = serde_yaml::from_str(&text).expect("YAML");
    let command = pod["spec"]["containers"][0]["command"].as_array().expect("a command").clone();
    command.iter().map(|a| a.as_str().expect("a string").to_owned()).collect()
}

/// A free loopback port for a daemon to listen on, below the kernel's
/// ephemeral range (32768 and up on Linux). A port the kernel hands out
/// for `bind(:0)` or an outgoing connection can be taken by another test's
/// connection between the pick and the daemon's own bind, which then fails
/// (kcm-rs exits, and the test waits in vain). Ports are handed out in
/// turn from a start that differs between test processes, each one checked
/// free first.
pub fn free_port() -> u16 {
    const FIRST: usize = 20_000;
    const SPAN: usize = 32_768 - FIRST;
    let start = std::process::id() as usize * 997;
    for _ in 0..SPAN {
        let port = u16::try_from(FIRST + (start + NEXT_PORT.fetch_add(1, Ordering::Relaxed)) % SPAN).expect("a port");
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port from {FIRST} to 32767");
}

/// How many ports [`free_port`] has handed out (or found taken).
static NEXT_PORT: AtomicUsize = AtomicUsize::new(0);

/// Starts `kcm-rs` against `kubeconfig`, leader election off, serving on a
/// free loopback port.
pub fn spawn(kubeconfig: &Path) -> Child {
    spawn_on(kubeconfig, free_port(), &[])
}

/// Starts `kcm-rs` against `kubeconfig`, leader election off, serving on
/// `port`, with these extra flags.
pub fn spawn_on(kubeconfig: &Path, port: u16, args: &[&str]) -> Child {
    spawn_logged(kubeconfig, port, args, None)
}

/// As [`spawn_on`], its standard error appended to `log` when given.
pub fn spawn_logged(kubeconfig: &Path, port: u16, args: &[&str], log: Option<&Path>) -> Child {
    let mut all =
        vec!["--leader-elect=false".to_owned(), format!("--secure-port={port}"), "--bind-address=127.0.0.1".to_owned()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let kept = log.map(Path::to_path_buf).or_else(|| kept_log(&port.to_string()));
    command(kubeconfig, &all).stderr(log_file(kept.as_deref())).spawn().expect("kcm-rs starts")
}

/// Starts `kcm-rs --kubeconfig=<kubeconfig> <args>`, its output discarded
/// (kept under `KCM_TEST_LOGS`, see [`kept_log`]); killed on drop.
pub fn spawn_with(kubeconfig: &Path, args: &[String]) -> Child {
    let name = format!("{}-{}", std::process::id(), NEXT_LOG.fetch_add(1, Ordering::Relaxed));
    command(kubeconfig, args).stderr(log_file(kept_log(&name).as_deref())).spawn().expect("kcm-rs starts")
}

/// Numbers the logs of the daemons [`spawn_with`] starts.
static NEXT_LOG: AtomicUsize = AtomicUsize::new(0);

/// With `KCM_TEST_LOGS=<dir>` set (to find out why a test failed), every
/// `kcm-rs` a test starts keeps its standard error in
/// `<dir>/kcm-rs-<name>.log` (`RUST_LOG` sets how much it says).
fn kept_log(name: &str) -> Option<PathBuf> {
    std::env::var_os("KCM_TEST_LOGS").map(|dir| PathBuf::from(dir).join(format!("kcm-rs-{name}.log")))
}

/// Standard error appended to `path`, or discarded.
fn log_file(path: Option<&Path>) -> Stdio {
    path.map_or_else(Stdio::null, |path| {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path).expect("kcm-rs's log opens");
        Stdio::from(file)
    })
}

/// `kcm-rs --kubeconfig=<kubeconfig> <args>`, its standard output
/// discarded, killed on drop. `/metrics` is added to the always-allowed
/// paths, as an operator without a delegated authorizer would: the tests
/// scrape it anonymously, and kcm-rs run outside a cluster with no
/// `--authorization-kubeconfig` forbids it otherwise (`tests/serving.rs`
/// checks the delegated authorization itself).
fn command(kubeconfig: &Path, args: &[String]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kcm-rs"));
    command
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .arg(SCRAPE_ANONYMOUSLY)
        .args(args)
        .stdout(Stdio::null())
        .kill_on_drop(true);
    command
}

/// The health paths kube-controller-manager allows by default, and `/metrics`.
const SCRAPE_ANONYMOUSLY: &str = "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics";

/// Disturbs kcm-rs mid-work: drops its watches, compacts the history (its
/// next watch gets 410 and relists), then kills it and starts a new
/// process, which remembers nothing of the old one.
pub async fn disturb(env: &mut Env) {
    env.cluster.controls().drop_watches();
    env.cluster.controls().compact();
    env.daemon.kill().await.expect("kcm-rs killed");
    env.daemon = env.spawn();
    env.cluster.controls().drop_watches();
}

/// Faults refusing every `nth` pod create with a 500: counted, so that a
/// test's assertion that creates were refused cannot depend on the dice.
pub fn failing_pod_creates(nth: u64) -> FaultSpec {
    FaultSpec {
        rules: vec![FaultRule {
            verb: Some("create".into()),
            resource: Some("pods".into()),
            error_every: nth,
            ..Default::default()
        }],
    }
}

/// Waits until `namespace` has its `default` ServiceAccount, as upstream's
/// e2e framework waits before it creates pods in a new namespace: the API
/// server refuses pods without it (after a short wait of its own), and
/// kcm-rs's serviceaccount-controller makes it moments after the namespace.
pub async fn default_service_account(cluster: &impl Changes, client: &kube::Client, namespace: &str) {
    try_default_service_account(cluster, client, namespace).await.unwrap_or_else(|e| panic!("{e}"));
}

/// [`default_service_account`], answering `Err` with what it waited for
/// instead of failing the test.
async fn try_default_service_account(
    cluster: &impl Changes,
    client: &kube::Client,
    namespace: &str,
) -> Result<(), String> {
    let accounts: kube::Api<k8s_openapi::api::core::v1::ServiceAccount> =
        kube::Api::namespaced(client.clone(), namespace);
    kube_sim::testing::try_wait_for(cluster, PATIENCE, &format!("{namespace}'s default ServiceAccount"), || async {
        let found = accounts.get_opt("default").await.map_err(|e| e.to_string())?;
        found.map(drop).ok_or_else(|| "not yet".to_owned())
    })
    .await
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
