//! What the convergence benchmarks share: a kubeconfig for the in-process
//! kube-sim, the release `kcm-rs` started against it, and its memory.

// Each benchmark uses part of these.
#![allow(dead_code)]

use std::path::Path;
use std::process::Stdio;

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

/// Resident memory of process `pid` in MiB (`VmRSS`; 0 once it is gone).
pub fn resident_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

/// Starts the `kcm-rs` this benchmark was built with against
/// `kubeconfig`, leader election off, serving its health endpoints on a
/// free loopback port (returned), its log (standard error) written to
/// `log`, with these flags; killed on drop.
pub fn kcm_rs_serving(kubeconfig: &Path, log: &Path, args: &[&str]) -> (Child, u16) {
    let port =
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free loopback port").port();
    let log = std::fs::File::create(log).expect("log file created");
    let child = Command::new(env!("CARGO_BIN_EXE_kcm-rs"))
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .args(["--leader-elect=false", "--bind-address=127.0.0.1"])
        .arg(format!("--secure-port={port}"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .expect("kcm-rs starts");
    (child, port)
}

/// Waits until `kcm-rs` serving on `port` and logging to `log` has logged
/// that its shared informers' caches are synced and then answers
/// `/readyz` with 200 (every cache synced, the garbage collector's own
/// feeds too; its certificate is self-signed, so not checked), looking
/// every 50 ms; fails after `limit`. Gives when `/readyz` first answered
/// 200, which may be before the log line: it is ready for a moment at
/// start-up, before the controllers start.
pub async fn wait_ready(port: u16, log: &Path, limit: std::time::Duration) -> std::time::Duration {
    let url: http::Uri = format!("https://127.0.0.1:{port}").parse().expect("valid URL");
    let mut config = kube::Config::new(url);
    config.accept_invalid_certs = true;
    let client = kube::Client::try_from(config).expect("a client for kcm-rs's endpoints");
    let start = std::time::Instant::now();
    let mut first_ready = None;
    loop {
        let request = http::Request::get("/readyz").body(Vec::new()).expect("valid request");
        if client.request_text(request).await.is_ok() {
            let first = *first_ready.get_or_insert(start.elapsed());
            let logged = std::fs::read_to_string(log).unwrap_or_default();
            if logged.contains("Caches are synced for kcm-rs") {
                return first;
            }
        }
        assert!(start.elapsed() < limit, "kcm-rs not ready after {limit:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
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
