//! Fixtures shared by the end-to-end tests of the `kcm-rs` binary.

// Each test binary uses part of these fixtures.
#![allow(dead_code)]

use std::future::Future;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use kube_sim::{Sim, SimConfig};
use tokio::process::{Child, Command};

/// Generous deadline for any condition.
const DEADLINE: Duration = Duration::from_secs(90);

/// Longest a probe may wait for something outside the API to catch up
/// (a daemon's metrics, an informer's handler) before it is asked again.
const RECHECK: Duration = Duration::from_secs(1);

/// Waits until `probe` holds, failing with what it last saw after
/// [`DEADLINE`]. The probe runs again at every change kube-sim stores (what
/// the daemons under test react to), and at the latest every second for
/// state that follows a change with a delay.
pub async fn wait_until<F, Fut>(sim: &Sim, what: &str, mut probe: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let api = sim.controls().api();
    let store = &api.store;
    let key = kube_sim::api::Api::type_key(&api.registry.builtin(kube_sim::resources::Builtin::Namespace));
    let (_, mut changes) = store.watch(&key, Some(store.current_rv())).expect("the current version is resumable");
    let start = tokio::time::Instant::now();
    let mut last = String::new();
    while start.elapsed() < DEADLINE {
        match probe().await {
            Ok(()) => return,
            Err(seen) => last = seen,
        }
        // Any change (or a closed or lagging feed) is a reason to look again.
        let _ = tokio::time::timeout(RECHECK, changes.recv()).await;
    }
    panic!("timed out waiting for {what}; last seen: {last}");
}

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
    /// A client for `sim`.
    pub client: kube::Client,
}

/// Starts kube-sim and `kcm-rs` against it.
pub async fn start() -> Env {
    let (sim, dir, kubeconfig) = sim_with_kubeconfig().await;
    let daemon = spawn(&kubeconfig);
    let client = sim.client().expect("client");
    Env { sim, _dir: dir, kubeconfig, daemon, client }
}

/// Starts kube-sim and writes a kubeconfig for it into a temporary
/// directory (kept while the `TempDir` lives).
pub async fn sim_with_kubeconfig() -> (Sim, tempfile::TempDir, PathBuf) {
    let sim = Sim::start(SimConfig::default()).await.expect("kube-sim starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&path).expect("kubeconfig written");
    (sim, dir, path)
}

/// Starts `kcm-rs` against `kubeconfig`, leader election off, serving on a
/// free loopback port.
pub fn spawn(kubeconfig: &Path) -> Child {
    let port = free_port();
    spawn_with(
        kubeconfig,
        &["--leader-elect=false".to_owned(), format!("--secure-port={port}"), "--bind-address=127.0.0.1".to_owned()],
    )
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

/// A loopback port free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
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
