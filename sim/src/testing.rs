//! Helpers for tests that run against a [`Sim`]: kube-sim's own suite
//! (`sim/tests/`) and the kcm-rs suite (`tests/`) share them.
//!
//! - [`wait_for`]: wait for a condition, looking again at every change the
//!   simulator stores, failing with the last state seen after a deadline the
//!   caller picks ([`Patience`]);
//! - [`kubeconfig`]: a kubeconfig for a simulator, in a temporary directory;
//! - [`provision_namespace`]: what kube-controller-manager puts in every
//!   namespace, for tests that run kube-sim without one;
//! - [`kubectl`] and its variants: the real kubectl against such a
//!   kubeconfig. They panic, with a clear message, when kubectl is not
//!   installed: tests that need it must fail, not skip, without it.
//!
//! Every helper panics on failure, as a test assertion does.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};
use tokio::sync::broadcast;

use crate::Sim;
use crate::store::Change;

/// How long [`wait_for`] waits, and how often it asks again when nothing
/// changes.
#[derive(Debug, Clone, Copy)]
pub struct Patience {
    /// Longest the condition may take to hold before the wait fails.
    pub deadline: Duration,
    /// Longest the wait goes without asking again when the simulator stores
    /// no change, for state that follows a change with a delay (a
    /// reconnecting client, a heartbeat, a daemon's metrics).
    pub recheck: Duration,
}

/// A cluster [`wait_for`] can wait on: kube-sim, whose store tells of every
/// change, or another API server, which [`wait_for`] polls.
pub trait Changes {
    /// A feed of the cluster's changes, if it has one.
    fn changes(&self) -> Option<broadcast::Receiver<Arc<Change>>>;
}

impl Changes for Sim {
    fn changes(&self) -> Option<broadcast::Receiver<Arc<Change>>> {
        Some(Sim::changes(self))
    }
}

/// How often [`wait_for`] asks again on a cluster with no change feed.
const POLL: Duration = Duration::from_millis(250);

/// Runs `probe` until it returns `Ok`, and gives its value; fails with
/// `what` and the last state seen (from `probe`'s `Err`) once
/// `patience.deadline` has passed. The probe runs again at every change
/// `cluster` stores (what clients of the simulator react to), and at the
/// latest every `patience.recheck` (on a cluster with no change feed, every
/// quarter second).
pub async fn wait_for<T, F, Fut, C>(cluster: &C, patience: Patience, what: &str, probe: F) -> T
where
    C: Changes + ?Sized,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    try_wait_for(cluster, patience, what, probe).await.unwrap_or_else(|e| panic!("{e}"))
}

/// [`wait_for`], answering `Err` with what it waited for and the last
/// state seen instead of failing the test, for a caller that reports
/// failures itself.
pub async fn try_wait_for<T, F, Fut, C>(cluster: &C, patience: Patience, what: &str, mut probe: F) -> Result<T, String>
where
    C: Changes + ?Sized,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let mut changes = cluster.changes();
    let start = tokio::time::Instant::now();
    let mut last = String::new();
    while start.elapsed() < patience.deadline {
        match probe().await {
            Ok(v) => return Ok(v),
            Err(seen) => last = seen,
        }
        // Any change (or a closed or lagging feed) is a reason to look again.
        match &mut changes {
            Some(feed) => drop(tokio::time::timeout(patience.recheck, feed.recv()).await),
            None => tokio::time::sleep(POLL.min(patience.recheck)).await,
        }
    }
    Err(format!("timed out waiting for {what}; last seen: {last}"))
}

/// The CA bundle [`provision_namespace`] publishes (no client checks it:
/// kube-sim serves plain HTTP).
const TEST_ROOT_CA: &str = "-----BEGIN CERTIFICATE-----\nkube-sim test CA\n-----END CERTIFICATE-----\n";

/// Creates in `namespace` what kube-controller-manager's
/// serviceaccount-controller and root-ca-certificate-publisher create in
/// every namespace: the `default` ServiceAccount (without which the
/// ServiceAccount admission plugin refuses pods) and the `kube-root-ca.crt`
/// ConfigMap (without which the kubelet cannot mount a pod's token
/// volume). For tests that run kube-sim on its own, as a test of an API
/// server without a controller manager would; either already there is fine.
pub async fn provision_namespace(sim: &Sim, namespace: &str) {
    let client = sim.client().expect("a client for kube-sim");
    provision_namespace_with(&client, namespace, TEST_ROOT_CA).await;
}

/// As [`provision_namespace`], on any cluster (`client` allowed to create
/// both), `kube-root-ca.crt` publishing `ca`.
pub async fn provision_namespace_with(client: &kube::Client, namespace: &str, ca: &str) {
    use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
    use kube::api::{Api, ObjectMeta, PostParams};
    let meta = |name: &str| ObjectMeta { name: Some(name.to_owned()), ..ObjectMeta::default() };
    let sa = ServiceAccount { metadata: meta("default"), ..ServiceAccount::default() };
    let data = [("ca.crt".to_owned(), ca.to_owned())].into_iter().collect();
    let cm = ConfigMap { metadata: meta("kube-root-ca.crt"), data: Some(data), ..ConfigMap::default() };
    let created = |what: &str, result: Result<(), kube::Error>| match result {
        Ok(()) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(e) => panic!("creating {what} in {namespace}: {e}"),
    };
    let pp = PostParams::default();
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    created("the default ServiceAccount", sas.create(&pp, &sa).await.map(drop));
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    created("kube-root-ca.crt", cms.create(&pp, &cm).await.map(drop));
}

/// Writes a kubeconfig for `sim` into a temporary directory; the file is
/// kept while the returned `TempDir` lives.
pub fn kubeconfig(sim: &Sim) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&path).expect("kubeconfig written");
    (dir, path)
}

/// Output of one kubectl run.
#[derive(Debug)]
pub struct Kubectl {
    /// Exit status was success.
    pub ok: bool,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs the real kubectl with `args` against the kubeconfig at
/// `kubeconfig`, whatever its outcome.
pub async fn kubectl(kubeconfig: &Path, args: &[&str]) -> Kubectl {
    kubectl_with_stdin(kubeconfig, args, None).await
}

/// As [`kubectl`], feeding `stdin` (none: an empty standard input).
pub async fn kubectl_with_stdin(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Kubectl {
    let mut child = command(kubeconfig, args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .spawn()
        .unwrap_or_else(|e| missing(&e));
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(input.as_bytes()).await.expect("stdin written");
    }
    let out = child.wait_with_output().await.expect("kubectl ran");
    Kubectl {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// As [`kubectl`], failing with kubectl's output unless it succeeds; gives
/// its standard output.
pub async fn kubectl_ok(kubeconfig: &Path, args: &[&str]) -> String {
    succeeded(args, kubectl(kubeconfig, args).await)
}

/// As [`kubectl_ok`], feeding `stdin`.
pub async fn kubectl_ok_with_stdin(kubeconfig: &Path, args: &[&str], stdin: &str) -> String {
    succeeded(args, kubectl_with_stdin(kubeconfig, args, Some(stdin)).await)
}

/// Starts the real kubectl with `args`, its output piped, for commands
/// that run until something happens (`get -w`, `rollout status`); killed
/// on drop.
pub fn kubectl_running(kubeconfig: &Path, args: &[&str]) -> Child {
    command(kubeconfig, args).stdin(Stdio::null()).kill_on_drop(true).spawn().unwrap_or_else(|e| missing(&e))
}

/// `kubectl <args>` against `kubeconfig` (and never the in-cluster
/// configuration), its output piped.
fn command(kubeconfig: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("kubectl");
    command
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// The standard output of `kubectl <args>`, which ran as `out`; fails
/// with its output unless it succeeded.
fn succeeded(args: &[&str], out: Kubectl) -> String {
    assert!(out.ok, "kubectl {args:?} failed:\n{}\n{}", out.stdout, out.stderr);
    out.stdout
}

/// Fails a test that needs kubectl when it cannot be started.
fn missing(e: &std::io::Error) -> ! {
    panic!("kubectl must be installed for these tests (see README): {e}")
}
