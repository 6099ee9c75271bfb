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
    /// The HTTPS port (`/metrics`, `/healthz`, `/readyz`) of the daemon
    /// [`start`] spawned.
    pub port: u16,
}

impl Env {
    /// `GET https://127.0.0.1:<port><path>` on the daemon (self-signed
    /// certificate): the status code and body (code 0 if unreachable).
    pub async fn scrape(&self, path: &str) -> (u16, String) {
        let out = Command::new("curl")
            .args(["-sk", "-o", "-", "-w", "\n%{http_code}", &format!("https://127.0.0.1:{}{path}", self.port)])
            .output()
            .await
            .expect("curl runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
        (code.trim().parse().unwrap_or(0), body.to_owned())
    }
}

/// Starts kube-sim and `kcm-rs` against it.
pub async fn start() -> Env {
    let sim = Sim::start(SimConfig::default()).await.expect("kube-sim starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).expect("kubeconfig written");
    let port = free_port();
    let daemon = spawn_on(&kubeconfig, port);
    let client = sim.client().expect("client");
    Env { sim, _dir: dir, kubeconfig, daemon, client, port }
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// Starts `kcm-rs` against `kubeconfig`, leader election off, serving on a
/// free loopback port.
pub fn spawn(kubeconfig: &Path) -> Child {
    spawn_on(kubeconfig, free_port())
}

/// Starts `kcm-rs` against `kubeconfig`, leader election off, serving on
/// loopback `port`.
pub fn spawn_on(kubeconfig: &Path, port: u16) -> Child {
    Command::new(env!("CARGO_BIN_EXE_kcm-rs"))
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .arg("--leader-elect=false")
        .arg(format!("--secure-port={port}"))
        .arg("--bind-address=127.0.0.1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("kcm-rs starts")
}
