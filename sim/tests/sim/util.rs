//! Shared fixtures: start a simulator, run kubectl, wait for conditions.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use kube_sim::kubelet::KubeletConfig;
use kube_sim::{Sim, SimConfig};
use tokio::process::Command;

/// Generous deadline for conditions that should hold within milliseconds.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// A simulator with fast pod start-up and heartbeats, for tests.
pub async fn start() -> Sim {
    start_with(SimConfig {
        kubelet: KubeletConfig {
            start_delay: Duration::from_millis(50),
            heartbeat_period: Duration::from_millis(500),
            max_grace: Duration::from_millis(300),
        },
        ..SimConfig::default()
    })
    .await
}

/// A simulator with the given configuration.
pub async fn start_with(config: SimConfig) -> Sim {
    Sim::start(config).await.expect("kube-sim starts")
}

/// Polls `probe` until it returns `Some`, failing with `what` and the last
/// state seen (from `probe`'s `Err`) after [`DEADLINE`].
pub async fn wait_for<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let start = tokio::time::Instant::now();
    let mut last = String::new();
    while start.elapsed() < DEADLINE {
        match probe().await {
            Ok(v) => return v,
            Err(seen) => last = seen,
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}; last seen: {last}");
}

/// A kubeconfig for `sim` in a temporary directory (kept while the returned
/// guard lives).
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

/// Runs the real kubectl with `args` against the kubeconfig at `config`.
/// Panics with a clear message when kubectl is not installed: these tests
/// must fail, not skip, without it.
pub async fn kubectl(config: &std::path::Path, args: &[&str]) -> Kubectl {
    kubectl_with_stdin(config, args, None).await
}

/// As [`kubectl`], feeding `stdin`.
pub async fn kubectl_with_stdin(config: &std::path::Path, args: &[&str], stdin: Option<&str>) -> Kubectl {
    use std::process::Stdio;
    use tokio::io::AsyncWriteExt;
    let mut child = Command::new("kubectl")
        .args(args)
        .env("KUBECONFIG", config)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("kubectl must be installed for these tests (see README): {e}"));
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("piped stdin");
        pipe.write_all(input.as_bytes()).await.expect("stdin written");
    }
    let out = child.wait_with_output().await.expect("kubectl ran");
    Kubectl {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
