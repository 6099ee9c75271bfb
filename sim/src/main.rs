//! The `kube-sim` binary: serve a simulated cluster until interrupted.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use kube_sim::admission::{AdmissionConfig, Plugin};
use kube_sim::api::ApiConfig;
use kube_sim::clusterip::ServiceCidr;
use kube_sim::kubelet::KubeletConfig;
use kube_sim::{Sim, SimConfig};

/// An in-memory Kubernetes API server with a kubelet and scheduler
/// stand-in, for tests and demos.
#[derive(Debug, Parser)]
#[command(name = "kube-sim", version)]
struct Flags {
    /// Address to serve plain HTTP on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: SocketAddr,
    /// Write a kubeconfig for the server to this file once it is serving.
    #[arg(long)]
    kubeconfig_out: Option<PathBuf>,
    /// Number of nodes (`node-1` ..).
    #[arg(long, default_value_t = 3)]
    nodes: usize,
    /// Time from a pod's binding to Running and Ready (Go duration syntax).
    #[arg(long, default_value = "500ms", value_parser = duration)]
    pod_start_delay: Duration,
    /// Period of node heartbeats (NodeStatus and Lease).
    #[arg(long, default_value = "10s", value_parser = duration)]
    node_heartbeat_period: Duration,
    /// Longest a graceful pod deletion takes, whatever its grace period.
    #[arg(long, default_value = "2s", value_parser = duration)]
    max_pod_grace: Duration,
    /// The range Services' cluster IPs come from (one IPv4 or IPv6 CIDR),
    /// as kube-apiserver's flag.
    #[arg(long, default_value_t = ServiceCidr::DEFAULT)]
    service_cluster_ip_range: ServiceCidr,
    /// Admission plugins to turn off (comma-separated, as kube-apiserver's
    /// flag: NamespaceLifecycle, ServiceAccount, StorageObjectInUseProtection,
    /// TaintNodesByCondition); all are on by default.
    #[arg(long, value_delimiter = ',')]
    disable_admission_plugins: Vec<Plugin>,
}

fn duration(text: &str) -> Result<Duration, String> {
    kcm_gotime::parse_go_duration(text).map_err(|e| format!("{e} (a duration such as 500ms, 2s or 1m)"))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let flags = Flags::parse();
    let admission = flags.disable_admission_plugins.iter().fold(AdmissionConfig::default(), |c, p| c.disable(*p));
    let config = SimConfig {
        nodes: flags.nodes,
        kubelet: KubeletConfig {
            start_delay: flags.pod_start_delay,
            heartbeat_period: flags.node_heartbeat_period,
            max_grace: flags.max_pod_grace,
        },
        api: ApiConfig { service_cluster_ip_range: flags.service_cluster_ip_range, admission, ..ApiConfig::default() },
        ..SimConfig::default()
    };
    let sim = Sim::start_on(flags.addr, config).await?;
    println!("kube-sim serving at {}", sim.url());
    if let Some(path) = &flags.kubeconfig_out {
        sim.write_kubeconfig(path).context("writing the kubeconfig")?;
        println!("kubeconfig written to {}", path.display());
    }
    tokio::signal::ctrl_c().await.context("waiting for Ctrl-C")?;
    Ok(())
}
