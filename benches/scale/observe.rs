//! What the scale benchmark reads off kube-sim and kcm-rs: kcm-rs's writes
//! by kind (kube-sim's request counts of the clients whose user agent is
//! kcm-rs's), quiet periods, completion of many objects without parsing
//! all of them on every look, and settled memory.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::{Duration, Instant};

use kube_sim::Sim;
use kube_sim::api::Api;
use kube_sim::resources::Builtin;
use serde::Deserialize;

use crate::common;

/// Verbs that write.
const WRITES: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];
/// How kcm-rs's clients' user agents begin (`kcm-rs/0.1.0/...`).
const KCM_RS: &str = "kcm-rs/";

/// One kind of write: verb, API group, resource (with subresource).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WriteKind {
    /// Request verb.
    pub verb: String,
    /// API group ("" for core).
    pub group: String,
    /// Resource, with subresource (`replicasets/status`).
    pub resource: String,
}

impl fmt::Display for WriteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.verb, self.resource)
    }
}

/// Writes by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mix(pub BTreeMap<WriteKind, u64>);

impl Mix {
    /// kcm-rs's writes so far, and how many of them were refused with 409
    /// Conflict.
    pub fn kcm_rs(sim: &Sim) -> (Mix, u64) {
        let mut mix = BTreeMap::new();
        let mut conflicts = 0;
        for line in sim.controls().stats() {
            if !line.user_agent.starts_with(KCM_RS) || !WRITES.contains(&line.verb.as_str()) {
                continue;
            }
            let kind = WriteKind { verb: line.verb, group: line.group, resource: line.resource };
            *mix.entry(kind).or_insert(0) += line.count;
            if line.code == 409 {
                conflicts += line.count;
            }
        }
        (Mix(mix), conflicts)
    }

    /// The writes since `before`.
    pub fn since(&self, before: &Mix) -> Mix {
        let diff = self
            .0
            .iter()
            .map(|(k, n)| (k.clone(), n - before.0.get(k).copied().unwrap_or(0)))
            .filter(|(_, n)| *n > 0)
            .collect();
        Mix(diff)
    }

    /// All writes.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// The mix per `unit` (a Deployment), as `verb resource n.n, ...`.
    pub fn per(&self, unit: usize) -> String {
        if self.0.is_empty() {
            return "none".into();
        }
        let parts: Vec<String> =
            self.0.iter().map(|(k, n)| format!("{k} {:.2}", *n as f64 / unit.max(1) as f64)).collect();
        parts.join(", ")
    }
}

/// kcm-rs's writes, in total, so far.
pub fn kcm_rs_writes(sim: &Sim) -> u64 {
    Mix::kcm_rs(sim).0.total()
}

/// Waits until kcm-rs has made no write for `quiet_for`, at most `limit`;
/// gives how long that took (`limit` when it never went quiet).
pub async fn quiet(sim: &Sim, quiet_for: Duration, limit: Duration) -> Duration {
    let start = Instant::now();
    let mut last = kcm_rs_writes(sim);
    let mut since = Instant::now();
    while start.elapsed() < limit {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = kcm_rs_writes(sim);
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() >= quiet_for {
            break;
        }
    }
    start.elapsed()
}

/// How often [`settled_mib`] reads the resident memory.
const SAMPLE_EVERY: Duration = Duration::from_millis(500);

/// Waits until the resident memory of `pid` has moved by less than 2 %
/// over `window` (at least `min`, at most `limit`); gives it in MiB.
pub async fn settled_mib(pid: u32, window: Duration, min: Duration, limit: Duration) -> f64 {
    let start = Instant::now();
    let span = (window.as_millis() / SAMPLE_EVERY.as_millis()) as usize + 1;
    let mut samples: Vec<f64> = Vec::new();
    loop {
        samples.push(common::resident_mib(pid));
        let window = &samples[samples.len().saturating_sub(span)..];
        let (lo, hi) = window.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &s| (lo.min(s), hi.max(s)));
        let stable = window.len() == span && hi - lo < hi * 0.02;
        if (stable && start.elapsed() >= min) || start.elapsed() >= limit {
            return *samples.last().unwrap_or(&0.0);
        }
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
}

/// The fields of a Deployment [`complete`] reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeploymentView {
    metadata: MetaView,
    spec: DeploymentSpecView,
    #[serde(default)]
    status: Option<DeploymentStatusView>,
}

#[derive(Deserialize)]
struct MetaView {
    #[serde(default)]
    generation: Option<i64>,
}

#[derive(Deserialize)]
struct DeploymentSpecView {
    template: TemplateView,
}

#[derive(Deserialize)]
struct TemplateView {
    spec: PodSpecView,
}

#[derive(Deserialize)]
struct PodSpecView {
    containers: Vec<ContainerView>,
}

#[derive(Deserialize)]
struct ContainerView {
    #[serde(default)]
    image: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct DeploymentStatusView {
    observed_generation: Option<i64>,
    replicas: Option<i32>,
    updated_replicas: Option<i32>,
    available_replicas: Option<i32>,
}

/// Whether the Deployment encoded in `bytes` has completed its rollout to
/// `image` with `replicas`: observed, every replica updated and
/// available, no other replica left.
pub fn complete(bytes: &[u8], replicas: i32, image: &str) -> bool {
    let Ok(d) = serde_json::from_slice::<DeploymentView>(bytes) else { return false };
    let Some(s) = d.status else { return false };
    d.spec.template.spec.containers.first().and_then(|c| c.image.as_deref()) == Some(image)
        && s.observed_generation.is_some()
        && s.observed_generation == d.metadata.generation
        && s.replicas == Some(replicas)
        && s.updated_replicas == Some(replicas)
        && s.available_replicas == Some(replicas)
}

/// The fields of a pod [`ready`] reads.
#[derive(Deserialize)]
struct PodView {
    #[serde(default)]
    status: Option<PodStatusView>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PodStatusView {
    conditions: Vec<ConditionView>,
}

#[derive(Deserialize)]
struct ConditionView {
    #[serde(rename = "type")]
    type_: String,
    status: String,
}

/// Whether the pod encoded in `bytes` is Ready.
pub fn ready(bytes: &[u8]) -> bool {
    serde_json::from_slice::<PodView>(bytes)
        .is_ok_and(|p| p.status.is_some_and(|s| s.conditions.iter().any(|c| c.type_ == "Ready" && c.status == "True")))
}

/// A test of one stored object's JSON.
type Test = Box<dyn Fn(&[u8]) -> bool + Send>;

/// Counts the stored objects of one type that pass a test, reading
/// kube-sim's store directly and testing again only the objects that
/// changed since the last count (so that 100,000 pods are not all parsed
/// on every look).
pub struct Tracker {
    /// The type, as the store keys it.
    key: kube_sim::store::TypeKey,
    /// The test.
    test: Test,
    /// Each object's last tested version and outcome.
    seen: HashMap<(String, String), (u64, bool)>,
}

impl Tracker {
    /// A tracker of `which` objects passing `test`.
    pub fn new(sim: &Sim, which: Builtin, test: impl Fn(&[u8]) -> bool + Send + 'static) -> Tracker {
        let key = Api::type_key(&sim.controls().api().registry.builtin(which));
        Tracker { key, test: Box::new(test), seen: HashMap::new() }
    }

    /// How many objects are stored now, and how many of them pass.
    pub fn count(&mut self, sim: &Sim) -> (usize, usize) {
        let (objects, _) = sim.controls().api().store.list(&self.key, None);
        let mut seen = HashMap::with_capacity(objects.len());
        let mut passing = 0;
        for (key, stored) in objects {
            let outcome = match self.seen.remove(&key) {
                Some((rv, outcome)) if rv == stored.rv => outcome,
                _ => (self.test)(&stored.bytes),
            };
            passing += usize::from(outcome);
            seen.insert(key, (stored.rv, outcome));
        }
        let total = seen.len();
        self.seen = seen;
        (total, passing)
    }

    /// Waits until `want` objects are stored and pass, looking every
    /// 250 ms, sampling kcm-rs's (`pid`) memory into `peak_mib`; fails
    /// after `limit`. Gives the time since `start`.
    pub async fn wait(
        &mut self,
        sim: &Sim,
        want: usize,
        what: &str,
        start: Instant,
        limit: Duration,
        probe: &mut Probe,
    ) -> Duration {
        loop {
            probe.sample();
            let (total, passing) = self.count(sim);
            if passing >= want {
                return start.elapsed();
            }
            assert!(start.elapsed() < limit, "only {passing} of {want} {what} after {limit:?} ({total} stored)");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// kcm-rs's peak memory over a phase, and its CPU time.
pub struct Probe {
    /// kcm-rs's process id.
    pub pid: u32,
    /// Highest resident memory seen, MiB.
    pub peak_mib: f64,
    /// CPU seconds at the start of the phase.
    cpu_start: f64,
    /// The benchmark process's (kube-sim's) CPU seconds then.
    own_cpu_start: f64,
}

impl Probe {
    /// Starts watching process `pid`.
    pub fn new(pid: u32) -> Probe {
        Probe {
            pid,
            peak_mib: common::resident_mib(pid),
            cpu_start: common::cpu_seconds(pid),
            own_cpu_start: common::cpu_seconds(std::process::id()),
        }
    }

    /// Samples memory now.
    pub fn sample(&mut self) {
        self.peak_mib = self.peak_mib.max(common::resident_mib(self.pid));
    }

    /// CPU seconds used since [`Probe::new`].
    pub fn cpu(&self) -> f64 {
        common::cpu_seconds(self.pid) - self.cpu_start
    }

    /// CPU seconds the benchmark process (kube-sim) used since
    /// [`Probe::new`].
    pub fn own_cpu(&self) -> f64 {
        common::cpu_seconds(std::process::id()) - self.own_cpu_start
    }
}
