//! Tests of leader election: config validation, the record, jitter,
//! health and metrics (`pure.rs`), contenders racing for one Lease on
//! kube-sim (`contenders.rs`), and the write fence on paused time against
//! an API server in memory (`fencing.rs`, `memory.rs`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, PostParams};
use kube_sim::faults::{FaultRule, FaultSpec};
use kube_sim::{Sim, SimConfig};
use prometheus::Registry;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::record::Record;
use super::state::{Observed, Shared};
use super::*;
use crate::client::WriteFence;
use kcm_gotime::Jitter;
use kcm_gotime::jitter::jittered;

mod contenders;
mod fencing;
mod memory;
mod pure;

// === utils ===

const NS: &str = "kube-system";
/// Upper bound on any wait for a condition: a hang guard, not a timing
/// assertion.
const PATIENCE: Duration = Duration::from_secs(30);

/// Short timings: lease 2 s, renew 1.5 s, retry 0.5 s.
fn config(identity: &str, lease: &str) -> LeaderElectionConfig {
    LeaderElectionConfig {
        lease_name: lease.to_owned(),
        lease_namespace: NS.to_owned(),
        identity: identity.to_owned(),
        lease_duration: Duration::from_secs(2),
        renew_deadline: Duration::from_millis(1500),
        retry_period: Duration::from_millis(500),
    }
}

/// Counts contenders running their `leading` future at once, and the
/// most ever seen together.
#[derive(Default)]
struct Leaders {
    now: AtomicUsize,
    max: AtomicUsize,
}

impl Leaders {
    fn enter(&self) {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(n, Ordering::SeqCst);
    }
    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
    fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }
}

/// Decrements the counter however the leading future ends (aborted
/// included).
struct LeaveGuard(Arc<Leaders>);

impl Drop for LeaveGuard {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// A running contender.
struct Contender {
    identity: String,
    status: watch::Receiver<Status>,
    health: LeaderHealth,
    /// What the controllers' clients would check.
    fence: WriteFence,
    registry: Registry,
    /// The reason the leading future was told to stop, seen by a task it
    /// spawned (so it survives the abort on Lost).
    stop_reason: Arc<Mutex<Option<StopReason>>>,
    shutdown: Option<oneshot::Sender<()>>,
    run: JoinHandle<Result<Outcome>>,
}

impl Contender {
    fn start(client: &kube::Client, config: LeaderElectionConfig, leaders: &Arc<Leaders>) -> Contender {
        let registry = Registry::new();
        let metrics = LeaderMetrics::register(&registry).unwrap();
        let identity = config.identity.clone();
        let elector = LeaderElector::new(client.clone(), config, &metrics).unwrap();
        let (status, health, fence) = (elector.subscribe(), elector.health(), elector.fence());
        let (shutdown, shutdown_rx) = oneshot::channel::<()>();
        let stop_reason = Arc::new(Mutex::new(None));
        let (leaders, seen) = (leaders.clone(), stop_reason.clone());
        let leading = move |mut stop: StopSignal| async move {
            leaders.enter();
            let _guard = LeaveGuard(leaders);
            let mut watcher = stop.clone();
            tokio::spawn(async move {
                let reason = watcher.stopped().await;
                *seen.lock().unwrap() = Some(reason);
            });
            // "Draining": stop taking work, finish in-flight syncs.
            stop.stopped().await;
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let run = tokio::spawn(elector.run(leading, async move {
            let _ = shutdown_rx.await;
        }));
        Contender { identity, status, health, fence, registry, stop_reason, shutdown: Some(shutdown), run }
    }

    fn leading(&self) -> bool {
        self.status.borrow().leading
    }

    async fn wait_leading(&mut self) {
        wait_status(&mut self.status, |s| s.leading).await;
    }

    fn shutdown(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }

    async fn outcome(self) -> Outcome {
        tokio::time::timeout(PATIENCE, self.run).await.expect("run ends").unwrap().unwrap()
    }

    fn master_status(&self) -> i64 {
        master_status(&self.registry)
    }
}

/// `leader_election_master_status` as scraped from `registry` (-1: absent).
fn master_status(registry: &Registry) -> i64 {
    registry
        .gather()
        .iter()
        .filter(|f| f.name() == "leader_election_master_status")
        .flat_map(|f| f.get_metric())
        .map(|m| m.get_gauge().get_value() as i64)
        .next()
        .unwrap_or(-1)
}

async fn wait_status(status: &mut watch::Receiver<Status>, pred: impl FnMut(&Status) -> bool) {
    tokio::time::timeout(PATIENCE, status.wait_for(pred)).await.expect("status condition").unwrap();
}

/// Polls until `pred` holds (hang guard: PATIENCE).
async fn wait_until(mut pred: impl FnMut() -> bool) {
    tokio::time::timeout(PATIENCE, async {
        while !pred() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("condition");
}

async fn lease(client: &kube::Client, name: &str) -> Record {
    let lease = Api::<Lease>::namespaced(client.clone(), NS).get(name).await.unwrap();
    Record::from_spec(lease.spec.as_ref())
}

/// Waits until the Lease has been written `n` more times than now (the
/// holder keeps renewing).
async fn wait_renewals(client: &kube::Client, name: &str, n: usize) {
    let mut last = lease(client, name).await;
    let mut seen = 0;
    tokio::time::timeout(PATIENCE, async {
        while seen < n {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let current = lease(client, name).await;
            if current != last {
                seen += 1;
                last = current;
            }
        }
    })
    .await
    .expect("renewals");
}

async fn sim() -> (Sim, kube::Client) {
    let sim = Sim::start(SimConfig { nodes: 0, ..SimConfig::default() }).await.unwrap();
    let client = sim.client().unwrap();
    (sim, client)
}

/// Starts `a`, waits until it leads, then starts `b`.
async fn leader_and_standby(
    client: &kube::Client,
    a: LeaderElectionConfig,
    b: LeaderElectionConfig,
    leaders: &Arc<Leaders>,
) -> (Contender, Contender) {
    let mut a = Contender::start(client, a, leaders);
    a.wait_leading().await;
    let mut b = Contender::start(client, b, leaders);
    let leader = a.identity.clone();
    wait_status(&mut b.status, |s| s.leader.as_deref() == Some(leader.as_str())).await;
    (a, b)
}
