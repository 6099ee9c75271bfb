//! What one seed does, from its number alone: the workload mix, the
//! changes a user makes to it, and the schedule of faults.
//!
//! The generator is SplitMix64, written here so that a seed means the same
//! plan for as long as this file does (a crate's generator may change its
//! stream between versions).

use std::time::Duration;

/// A deterministic stream of numbers from a seed (SplitMix64).
pub struct Dice(u64);

impl Dice {
    pub fn new(seed: u64) -> Dice {
        Dice(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// A Deployment of the mix.
#[derive(Debug, Clone)]
pub struct DeploymentPlan {
    pub name: String,
    pub replicas: i32,
    pub max_surge: i32,
    pub max_unavailable: i32,
    /// Replicas it is scaled up to mid-run, if it is.
    pub scaled_to: Option<i32>,
    /// Deleted mid-run (foreground when true), if it is.
    pub deleted: Option<bool>,
}

/// A StatefulSet of the mix.
#[derive(Debug, Clone)]
pub struct StatefulSetPlan {
    pub name: String,
    pub replicas: i32,
    pub parallel: bool,
}

/// A DaemonSet of the mix (on every node).
#[derive(Debug, Clone)]
pub struct DaemonSetPlan {
    pub name: String,
    /// 1 with `maxUnavailable: 0`, or 0 with `maxUnavailable: 1`.
    pub max_surge: i32,
}

/// A Job of the mix.
#[derive(Debug, Clone)]
pub struct JobPlan {
    pub name: String,
    pub indexed: bool,
    pub completions: i32,
    pub parallelism: i32,
    /// How long each of its pods runs.
    pub runs_for: Duration,
}

/// A fault. Where it lasts, it lasts until it has bitten the
/// [`Step::lasting`] times, counted in what it does, not in time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    /// The leader killed (SIGKILL), started again after a pause.
    KillLeader,
    /// The leader stopped (SIGTERM: it releases the lease), started again.
    StopLeader,
    /// The leader frozen (SIGSTOP) for longer than its lease, then resumed
    /// (it finds the lease lost and exits; it is started again).
    FreezeLeader,
    /// Every open watch closed.
    DropWatches,
    /// The change history dropped: resumed watches get 410 and relist.
    Compact,
    /// A share (percent) of every request fails with 500, until that many
    /// of the replicas' requests have.
    Errors(u64),
    /// A share (percent) of every request is throttled with 429, until
    /// that many of the replicas' requests have been.
    Throttle(u64),
    /// Every request slowed by this many milliseconds, until that many of
    /// the replicas' requests have been.
    Latency(u64),
    /// A node's kubelet stopped, while the leader renews its lease that
    /// many times.
    StopNode(usize),
}

/// One step of the schedule: let the leader renew its lease `after`
/// times, then inflict `fault`.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    pub after: u64,
    pub fault: Fault,
    /// How many times a lasting fault bites ([`Fault`]).
    pub lasting: u64,
}

/// A seed's whole plan.
#[derive(Debug, Clone)]
pub struct Plan {
    pub deployments: Vec<DeploymentPlan>,
    pub replica_sets: Vec<(String, i32)>,
    pub stateful_sets: Vec<StatefulSetPlan>,
    pub daemon_sets: Vec<DaemonSetPlan>,
    pub jobs: Vec<JobPlan>,
    pub services: bool,
    /// How many controller writes the workload sees before the user's
    /// changes start: few enough that they land while the controllers
    /// are still converging it.
    pub changes_after: u64,
    pub steps: Vec<Step>,
}

/// Nodes of the seed's kube-sim.
pub const NODES: usize = 3;

impl Plan {
    pub fn of(seed: u64) -> Plan {
        let mut dice = Dice::new(seed);
        let deployments = (0..dice.between(1, 2))
            .map(|i| {
                let max_surge = dice.between(0, 2) as i32;
                let max_unavailable = if max_surge == 0 { 1 } else { dice.between(0, 1) as i32 };
                let replicas = dice.between(2, 4) as i32;
                DeploymentPlan {
                    name: format!("web-{i}"),
                    replicas,
                    max_surge,
                    max_unavailable,
                    scaled_to: dice.chance(40).then(|| replicas + dice.between(1, 2) as i32),
                    deleted: (i == 1 && dice.chance(50)).then(|| dice.chance(50)),
                }
            })
            .collect();
        let replica_sets = (0..dice.between(0, 1)).map(|i| (format!("plain-{i}"), dice.between(1, 3) as i32)).collect();
        let stateful_sets = (0..dice.between(0, 1))
            .map(|i| StatefulSetPlan {
                name: format!("db-{i}"),
                replicas: dice.between(2, 3) as i32,
                parallel: dice.chance(50),
            })
            .collect();
        let daemon_sets = (0..dice.between(0, 1))
            .map(|i| DaemonSetPlan { name: format!("agent-{i}"), max_surge: dice.between(0, 1) as i32 })
            .collect();
        let jobs = (0..dice.between(1, 2))
            .map(|i| JobPlan {
                name: format!("batch-{i}"),
                indexed: dice.chance(50),
                completions: dice.between(2, 5) as i32,
                parallelism: dice.between(1, 3) as i32,
                runs_for: Duration::from_millis(dice.between(500, 3_000)),
            })
            .collect();
        let services = dice.chance(70);
        let changes_after = dice.between(3, 15);
        let steps = (0..dice.between(3, 6))
            .map(|_| {
                let fault = match dice.between(0, 8) {
                    0 => Fault::KillLeader,
                    1 => Fault::StopLeader,
                    2 => Fault::FreezeLeader,
                    3 => Fault::DropWatches,
                    4 => Fault::Compact,
                    5 => Fault::Errors(dice.between(5, 30)),
                    6 => Fault::Throttle(dice.between(5, 30)),
                    7 => Fault::Latency(dice.between(50, 400)),
                    _ => Fault::StopNode(dice.between(1, NODES as u64) as usize),
                };
                let lasting = match fault {
                    Fault::Errors(_) | Fault::Throttle(_) => dice.between(1, 4),
                    Fault::Latency(_) => dice.between(4, 20),
                    _ => dice.between(2, 8),
                };
                Step { after: dice.between(0, 6), fault, lasting }
            })
            .collect();
        Plan { deployments, replica_sets, stateful_sets, daemon_sets, jobs, services, changes_after, steps }
    }
}
