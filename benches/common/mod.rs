//! What the convergence benchmarks share: a kubeconfig for the in-process
//! kube-sim, the release `kcm-rs` started against it, and its memory.

// Each benchmark uses part of these.
#![allow(dead_code, unused_imports)]

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[allow(unused_imports)] // Not every benchmark starts a kube-sim.
pub use kube_sim::testing::kubeconfig;
use tokio::process::{Child, Command};

/// Starts the `kcm-rs` this benchmark was built with against
/// `kubeconfig`, leader election off, serving on a free port, with these
/// flags; its output discarded, killed on drop.
pub fn kcm_rs(kubeconfig: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_kcm-rs"))
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .args(["--leader-elect=false", "--secure-port=0"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("kcm-rs starts")
}

/// `n` scaled by `KCM_SCALE` (1 when unset), rounded, at least 1.
pub fn scaled(n: usize) -> usize {
    let scale: f64 = std::env::var("KCM_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    ((n as f64 * scale).round() as usize).max(1)
}

/// Resident memory of process `pid` in MiB (`VmRSS`; 0 once it is gone).
pub fn resident_mib(pid: u32) -> f64 {
    status_mib(pid, "VmRSS:")
}

/// Resident memory of process `pid` in MiB by kind: anonymous (heap,
/// stacks; `RssAnon`) and file-backed (the binary's and libraries' pages
/// it has touched; `RssFile`).
pub fn resident_split_mib(pid: u32) -> (f64, f64) {
    (status_mib(pid, "RssAnon:"), status_mib(pid, "RssFile:"))
}

/// Peak resident memory of process `pid` in MiB (`VmHWM`; 0 once it is gone).
pub fn peak_resident_mib(pid: u32) -> f64 {
    status_mib(pid, "VmHWM:")
}

/// A kB field of `/proc/<pid>/status`, in MiB.
fn status_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

/// Starts the `kcm-rs` this benchmark was built with against
/// `kubeconfig` (a kube-sim's), leader election off, serving its health
/// endpoints on a free loopback port (returned), its log (standard error)
/// written to `log`, with these flags; killed on drop. Unless the flags
/// choose the controllers, it runs every default controller but those
/// whose API kube-sim does not serve (as `--sim` does), whose caches would
/// never sync. Its `/metrics` is read anonymously, so it is added to the
/// always-allowed paths, as an operator without an authorization
/// kubeconfig would.
pub fn kcm_rs_serving(kubeconfig: &Path, log: &Path, args: &[&str]) -> (Child, u16) {
    let port =
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free loopback port").port();
    let log = std::fs::File::create(log).expect("log file created");
    let child = Command::new(env!("CARGO_BIN_EXE_kcm-rs"))
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .args(["--leader-elect=false", "--bind-address=127.0.0.1"])
        .arg(format!("--secure-port={port}"))
        .arg("--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics")
        .args(kcm_rs::sim::served_controllers_flag(args))
        .args(args)
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .expect("kcm-rs starts");
    (child, port)
}

/// A client for the HTTPS endpoints of `kcm-rs` serving on `port` (its
/// certificate is self-signed, so not checked).
pub fn endpoints_client(port: u16) -> kube::Client {
    let url: http::Uri = format!("https://127.0.0.1:{port}").parse().expect("valid URL");
    let mut config = kube::Config::new(url);
    config.accept_invalid_certs = true;
    kube::Client::try_from(config).expect("a client for kcm-rs's endpoints")
}

/// Whether `kcm-rs` answers `path` with 200 within `within`.
pub async fn answers(client: &kube::Client, path: &str, within: Duration) -> bool {
    let request = http::Request::get(path).body(Vec::new()).expect("valid request");
    matches!(tokio::time::timeout(within, client.request_text(request)).await, Ok(Ok(_)))
}

/// `kcm-rs`'s `/metrics` text, or `None` when it does not answer within
/// `within`.
pub async fn metrics(client: &kube::Client, within: Duration) -> Option<String> {
    let request = http::Request::get("/metrics").body(Vec::new()).expect("valid request");
    tokio::time::timeout(within, client.request_text(request)).await.ok()?.ok()
}

/// Keys waiting in all of `kcm-rs`'s workqueues (the sum of its
/// `workqueue_depth` gauges), or `None` when `/metrics` does not answer
/// within `within`.
pub async fn queued(client: &kube::Client, within: Duration) -> Option<u64> {
    let text = metrics(client, within).await?;
    let depth = |line: &str| line.strip_prefix("workqueue_depth{")?.rsplit_once(' ')?.1.parse::<f64>().ok();
    Some(text.lines().filter_map(depth).sum::<f64>() as u64)
}

/// When a starting `kcm-rs` became ready, from its start.
#[derive(Debug, Clone, Copy)]
pub struct Readiness {
    /// It logged that every shared informer's cache is synced (the time
    /// of the log line, from its first line).
    pub informers_synced: Duration,
    /// `/readyz` answered 200 after that (the garbage collector's own
    /// feeds synced too).
    pub ready: Duration,
    /// `/readyz` answered 200 before the log line, at start-up, before the
    /// controllers started (when it did).
    pub early: Option<Duration>,
}

/// Waits until `kcm-rs` serving on `port` and logging to `log` (started
/// at `start`) is ready: it has logged "Caches are synced for kcm-rs"
/// and `/readyz` answers 200. Looks every 100 ms, each `/readyz` given
/// 2 s; fails after `limit`.
pub async fn wait_ready(port: u16, log: &Path, start: Instant, limit: Duration) -> Readiness {
    let client = endpoints_client(port);
    let (mut informers_synced, mut early) = (None, None);
    loop {
        if informers_synced.is_none() {
            informers_synced = synced_in_log(log);
        }
        if answers(&client, "/readyz", Duration::from_secs(2)).await {
            match informers_synced {
                Some(informers_synced) => return Readiness { informers_synced, ready: start.elapsed(), early },
                None => early = early.or(Some(start.elapsed())),
            }
        }
        assert!(start.elapsed() < limit, "kcm-rs not ready after {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// From the first line of a `kcm-rs` log to its "Caches are synced for
/// kcm-rs" line, by their timestamps, once it is there.
fn synced_in_log(log: &Path) -> Option<Duration> {
    let text = std::fs::read_to_string(log).ok()?;
    let stamp = |line: &str| -> Option<jiff::Timestamp> {
        // The first word, once the colour codes (ESC [ ... m) are gone.
        let mut parts = line.split('\u{1b}');
        let mut plain = parts.next().unwrap_or_default().to_owned();
        for part in parts {
            plain.push_str(part.split_once('m').map_or(part, |(_, rest)| rest));
        }
        plain.split_whitespace().next()?.parse().ok()
    };
    let first = stamp(text.lines().next()?)?;
    let synced = stamp(text.lines().find(|l| l.contains("Caches are synced for kcm-rs"))?)?;
    Duration::try_from(synced.duration_since(first)).ok()
}

/// How long `kcm-rs`'s `/healthz` went unanswered at most, probed every
/// 500 ms (each probe given 5 s) from a task of its own until
/// [`HealthProbe::stop`]: the longest time between two answers (or from
/// the start to the first, or from the last to the stop), so about 0.5 s
/// when it always answers at once.
pub struct HealthProbe {
    /// When it last answered, and the longest gap so far.
    state: std::sync::Arc<std::sync::Mutex<(Instant, Duration)>>,
    /// The probing task.
    task: tokio::task::JoinHandle<()>,
}

impl HealthProbe {
    /// Starts probing `kcm-rs` on `port`.
    pub fn start(port: u16) -> HealthProbe {
        let state = std::sync::Arc::new(std::sync::Mutex::new((Instant::now(), Duration::ZERO)));
        let shared = state.clone();
        let task = tokio::spawn(async move {
            let client = endpoints_client(port);
            loop {
                if answers(&client, "/healthz", Duration::from_secs(5)).await {
                    let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
                    *s = (Instant::now(), s.1.max(s.0.elapsed()));
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
        HealthProbe { state, task }
    }

    /// Stops probing; gives the longest time without an answer.
    pub fn stop(self) -> Duration {
        self.task.abort();
        let (last, longest) = *self.state.lock().unwrap_or_else(|p| p.into_inner());
        longest.max(last.elapsed())
    }
}

/// CPU seconds (user + system) process `pid` has used (0 once it is gone).
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    // utime and stime are fields 14 and 15; after the ")" they are the 12th and 13th.
    let ticks: f64 = [11, 12].iter().filter_map(|i| fields.get(*i)?.parse::<f64>().ok()).sum();
    ticks / 100.0
}

/// The testbed's real control plane, shared with the end-to-end tests.
#[path = "../../tests/common/testbed.rs"]
pub mod testbed;
