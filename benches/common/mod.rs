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
